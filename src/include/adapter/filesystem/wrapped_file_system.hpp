//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/filesystem/wrapped_file_system.hpp
//
// Stands in for a remote filesystem (httpfs's HTTP/S3/HF ones, Azure's) under the same name, passes every call
// through, and sends large reads to the parallel read layer.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/extension/extension_state.hpp"
#include "adapter/filesystem/listing_memory.hpp"
#include "adapter/filesystem/uploading_paths.hpp"
#include "adapter/filesystem/parallel_reader.hpp"
#include "adapter/filesystem/version_handles.hpp"
#include "adapter/filesystem/wrapped_file_handle.hpp"
#include "duckdb/common/file_system.hpp"

#include <atomic>

namespace httpfs2 {

class WrappedFileSystem : public duckdb::FileSystem {
public:
	WrappedFileSystem(duckdb::unique_ptr<duckdb::FileSystem> inner, std::shared_ptr<ExtensionState> state);
	~WrappedFileSystem() override;
	//! Closes all read-ahead (waiting for its fetches) and the kept version handles: ExtensionState::ReleaseHandles.
	void ReleaseHandles();

	using FileSystem::OpenFile;

	void Read(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes, duckdb::idx_t location) override;
	int64_t Read(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes) override;
	void Write(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes, duckdb::idx_t location) override;
	int64_t Write(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes) override;
	bool Trim(duckdb::FileHandle &handle, duckdb::idx_t offset_bytes, duckdb::idx_t length_bytes) override;

	int64_t GetFileSize(duckdb::FileHandle &handle) override;
	duckdb::timestamp_t GetLastModifiedTime(duckdb::FileHandle &handle) override;
	std::string GetVersionTag(duckdb::FileHandle &handle) override;
	duckdb::FileType GetFileType(duckdb::FileHandle &handle) override;
	duckdb::FileMetadata Stats(duckdb::FileHandle &handle) override;
	void Truncate(duckdb::FileHandle &handle, int64_t new_size) override;
	void FileSync(duckdb::FileHandle &handle) override;
	void Seek(duckdb::FileHandle &handle, duckdb::idx_t location) override;
	void Reset(duckdb::FileHandle &handle) override;
	duckdb::idx_t SeekPosition(duckdb::FileHandle &handle) override;
	bool OnDiskFile(duckdb::FileHandle &handle) override;

	bool DirectoryExists(const std::string &directory, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	void CreateDirectory(const std::string &directory, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	void CreateDirectoriesRecursive(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	void RemoveDirectory(const std::string &directory, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool ListFiles(const std::string &directory, const std::function<void(const std::string &, bool)> &callback,
	               duckdb::FileOpener *opener) override;
	void MoveFile(const std::string &source, const std::string &target,
	              duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool FileExists(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool IsPipe(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	void RemoveFile(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool TryRemoveFile(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	void RemoveFiles(const duckdb::vector<std::string> &filenames,
	                 duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	duckdb::vector<duckdb::OpenFileInfo> Glob(const std::string &path, duckdb::FileOpener *opener) override;

	std::string GetHomeDirectory() override;
	std::string ExpandPath(const std::string &path) override;
	std::string PathSeparator(const std::string &path) override;
	bool IsPathAbsolute(const std::string &path) override;
	bool CanHandleFile(const std::string &fpath) override;
	bool IsManuallySet() override;
	bool CanSeek() override;
	bool IsLocalFileSystem() const override;
	std::string GetName() const override;
	std::string CanonicalizePath(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener) override;

protected:
	duckdb::unique_ptr<duckdb::FileHandle> OpenFileExtended(const duckdb::OpenFileInfo &file,
	                                                        duckdb::FileOpenFlags flags,
	                                                        duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool SupportsOpenFileExtended() const override;
	bool ListFilesExtended(const std::string &directory,
	                       const std::function<void(duckdb::OpenFileInfo &info)> &callback,
	                       duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool SupportsListFilesExtended() const override;
	duckdb::unique_ptr<duckdb::MultiFileList>
	GlobFilesExtended(const std::string &path, const duckdb::FileGlobInput &input,
	                  duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool SupportsGlobExtended() const override;

private:
	//! Flags of the handles sub-reads and read-ahead run on: positional reads from several threads at once.
	static const duckdb::FileOpenFlags PARALLEL_READ_FLAGS;

	static WrappedFileHandle &Unwrap(duckdb::FileHandle &handle);
	//! Appends to the object `handle` uploads; a failure of the uploader's own (the budget) as an IOException.
	void Append(WrappedFileHandle &handle, void *buffer, int64_t nr_bytes);
	//! A handle at the version httpfs2 looked up itself (az:// blobs), whose inner handle opens when first needed;
	//! nullptr when the version is not known.
	duckdb::unique_ptr<WrappedFileHandle> OpenKnownVersion(const std::string &path, duckdb::FileOpenFlags flags,
	                                                       duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                                       const ParallelReadSettings &settings);
	//! A handle at the version a GET of the file's tail reported (s3:// Parquet files at their first open), its
	//! footer remembered from those bytes; nullptr when httpfs2 could not fetch it (S3Tails).
	duckdb::unique_ptr<WrappedFileHandle> OpenFromTail(const std::string &path, duckdb::FileOpenFlags flags,
	                                                   duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                                   const ParallelReadSettings &settings);
	//! A handle at `version`, whose inner handle opens when first needed; `opener` must have a client context.
	duckdb::unique_ptr<WrappedFileHandle> OpenAtKnownVersion(const std::string &path, duckdb::FileOpenFlags flags,
	                                                         duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                                         const ParallelReadSettings &settings,
	                                                         const ObjectVersion &version);
	//! An open that makes no request on httpfs: size, modification time and ETag handed over (httpfs still checks
	//! every response against the ETag).
	static duckdb::OpenFileInfo OpenInfo(const std::string &path, const ObjectVersion &version);
	static ObjectVersion VersionOf(WrappedFileHandle &handle);
	//! Opens `info` and fails when the wrapped filesystem sees another size or modification time than `expected`.
	//! An `internal` handle (sub-reads, fetches) is opened through InternalOpener: no full-download fallback.
	duckdb::unique_ptr<duckdb::FileHandle> OpenAtVersion(const duckdb::OpenFileInfo &info, duckdb::FileOpenFlags flags,
	                                                     duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                                     const ObjectVersion &expected, bool internal);
	//! OpenAtVersion later, with the file opener of `context`'s connection.
	LazyHandle::Opener DeferredOpen(duckdb::OpenFileInfo info, duckdb::FileOpenFlags flags,
	                                duckdb::weak_ptr<duckdb::ClientContext> context, ObjectVersion expected,
	                                bool internal);
	//! A handle on `version` of `path` that opens on first use (at once when there is no connection to open with).
	//! Used only from the query's thread or while it waits (sub-reads): the connection outlives the open.
	duckdb::unique_ptr<LazyHandle> HandleAtVersion(const std::string &path, const ObjectVersion &version,
	                                               duckdb::FileOpenFlags flags,
	                                               duckdb::weak_ptr<duckdb::ClientContext> context,
	                                               duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Prepares the handles sub-reads run on, or leaves the handle unable to split when the file is too small.
	void PrepareSubReads(WrappedFileHandle &handle, duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Read-ahead is shared by handles on the same object version only.
	static std::string VersionKey(const std::string &path, const ObjectVersion &version);
	static bool IsParquetPath(const std::string &path);
	//! Whether a footer read at `version` may be served to later opens of the same version: only where its ETag
	//! changes with the bytes.
	bool FooterOutlivesOpen(const ObjectVersion &version) const;
	//! What the VersionKey of every version of `path` begins with.
	static std::string VersionKeyPrefix(const std::string &path);
	//! A handle for read-ahead's fetches (and, on Azure, the reads that miss it), opened now on the query's thread
	//! or while it waits: fetches run on IO pool threads and may outlive the query. Kept across opens on Azure.
	std::shared_ptr<duckdb::FileHandle> OpenFetchHandle(const std::string &path, const ObjectVersion &version,
	                                                    duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! OpenFetchHandle for the version a handle was opened at, with its connection's file opener.
	std::shared_ptr<duckdb::FileHandle> SharedHandleFor(WrappedFileHandle &handle);
	//! Checked range GETs of `version` of `path` where httpfs2 sends them itself (CheckedRangeReader), else null.
	std::shared_ptr<CheckedRangeReader> RangeReaderFor(const std::string &path, const ObjectVersion &version,
	                                                   duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                                   bool ranges_confirmed);
	//! How read-ahead fetches `version` of `path`: with `reader` (or a new one), else on a fetch handle opened now.
	ObjectReadAhead::Fetcher FetcherFor(const std::string &path, const ObjectVersion &version,
	                                    duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                    std::shared_ptr<CheckedRangeReader> reader);
	//! An object fetching `version` of `path` with `fetch`.
	std::shared_ptr<ObjectReadAhead> CreateReadAhead(const std::string &path, const ObjectVersion &version,
	                                                 ObjectReadAhead::Fetcher fetch);
	//! Fetches the footer DuckDB 1.5.5 reads first from a Parquet file at `version`, into read-ahead that waits for
	//! the file's open.
	void PrefetchFooter(const std::string &path, const ObjectVersion &version, const ReadAheadTuning &tuning,
	                    duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Attaches read-ahead that waited for the handle's first read, with its connection's file opener.
	void AttachDeferredReadAhead(WrappedFileHandle &handle);
	//! The version of `path` from httpfs2's own request, where it makes one (az:// with parallel reads on).
	VersionLookup LookupVersion(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Answers a glob without wildcards from the version lookup; false when the wrapped filesystem must.
	bool TryGlobOneFile(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                    duckdb::vector<duckdb::OpenFileInfo> &files);
	//! Joins (or starts) the read-ahead of the object version the handle reads.
	void AttachReadAhead(WrappedFileHandle &handle, duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Remembers a listing, whose files' opens fetch the footers of the files listed after them.
	//! `scan_reads_them`: the listing is a multi-file reader's, whose first files' footers are fetched now.
	void RememberListing(std::vector<duckdb::OpenFileInfo> files, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                     bool scan_reads_them);
	//! Fetches the footers of listed Parquet files: those with size, ETag and modification time from the listing,
	//! and az:// ones after looking their versions up.
	void PrefetchFooters(const std::vector<duckdb::OpenFileInfo> &files, const ParallelReadSettings &settings,
	                     duckdb::optional_ptr<duckdb::FileOpener> opener);
	ReadAheadTuning TuningFor(const ParallelReadSettings &settings) const;
	//! Serves a read from read-ahead where it can, reads the rest for the reader, and tells the predictor.
	void ReadWithReadAhead(WrappedFileHandle &handle, char *buffer, duckdb::idx_t nr_bytes, duckdb::idx_t location);
	//! Remembers the bytes of `read` when it is a Parquet footer read of a version with a strong ETag.
	void RememberFooter(WrappedFileHandle &handle, const ByteRange &read, const char *buffer);
	//! A positional read on the reader's behalf: split across the IO pool when large enough, else passed through.
	void ReadForReader(WrappedFileHandle &handle, void *buffer, int64_t nr_bytes, duckdb::idx_t location);

	duckdb::unique_ptr<duckdb::FileSystem> inner;
	std::shared_ptr<ExtensionState> state;
	std::shared_ptr<ReadStats> stats;
	ParallelReader reader;
	ListingMemory listings;
	//! Whether httpfs2 learns object versions with a request of its own (the azure extension reports no ETag).
	const bool versions_by_head;
	//! Whether httpfs2 opens s3:// Parquet files from a GET of their tail it signs itself (S3Tails).
	const bool tails_by_get;
	//! Whether sub-reads and read-ahead send their range GETs themselves (CheckedRangeReader), and to which store.
	const bool checks_ranges;
	const CheckedRangeReader::Store range_store;
	const std::shared_ptr<RangedPaths> ranged_paths = std::make_shared<RangedPaths>();
	//! After this many tail GETs in a row that did not give a tail (a store or secret httpfs2 cannot address, whose
	//! every open would pay for a failed request), it stops asking for TAIL_PAUSE_SECONDS.
	static constexpr uint32_t MAX_FAILED_TAILS = 8;
	static constexpr int64_t TAIL_PAUSE_SECONDS = 60;
	std::atomic<uint32_t> failed_tails {0};
	//! steady_clock seconds before which no tail is asked for.
	std::atomic<int64_t> tails_paused_until {0};
	//! With versions_by_head, the handles read-ahead and pass-through reads use, kept across opens of a version.
	VersionHandles version_handles;
	//! Column patterns per dataset (folder), shared by the read-ahead of its files.
	std::shared_ptr<PatternMemory> patterns = std::make_shared<PatternMemory>();
	//! s3:// files being uploaded and not completed: DuckDB's removal of a failed COPY's file is skipped for them.
	const std::shared_ptr<UploadingPaths> uploading = std::make_shared<UploadingPaths>();
	//! Declared last, so it is destroyed first: closing its objects waits for their fetches while `inner` lives.
	ReadAheadRegistry read_aheads;
};

} // namespace httpfs2
