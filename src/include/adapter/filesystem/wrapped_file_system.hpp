//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/filesystem/wrapped_file_system.hpp
//
// Stands in for a remote filesystem (httpfs's HTTP/S3/HF ones, Azure's) under the same name and routes: files opened
// for writing to httpfs2's uploader where the store takes uploads (UploadHandle), files opened for reading through
// ReadOpener (ReadHandle), reads to read-ahead, the parallel read layer or the wrapped filesystem, and everything
// else on to the wrapped filesystem (ForwardingFileSystem). What it builds on, top-down:
//   ReadOpener       opens for reading: the version, sub-read handles, read-ahead, footers of listed files
//   ReadAheadWiring  the core's read-ahead per object version, and what reads teach it
//   PrefetchEngine   what the predictors say the next opens read, fetched before they ask
//   InnerOpens       opens of the wrapped filesystem at a known version
//   ParallelReader   one read split across the IO pool
//   RemoteStore      what the store does itself (adapter/stores)
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/extension_state.hpp"
#include "adapter/filesystem/forwarding_file_system.hpp"
#include "adapter/handles/inner_opens.hpp"
#include "adapter/prefetch/prefetch_engine.hpp"
#include "adapter/read/parallel_reader.hpp"
#include "adapter/prefetch/read_ahead_wiring.hpp"
#include "adapter/read/read_opener.hpp"
#include "adapter/upload/uploading_paths.hpp"
#include "adapter/handles/read_handle.hpp"
#include "adapter/handles/upload_handle.hpp"
#include "adapter/stores/remote_store.hpp"

#include <functional>

namespace httpfs2 {

class WrappedFileSystem : public ForwardingFileSystem, public HandleKeeper {
public:
	using StoreFactory = std::function<std::unique_ptr<RemoteStore>(IoStats &stats)>;

	//! Wraps `inner` with the store RemoteStore::For names for it.
	WrappedFileSystem(duckdb::unique_ptr<duckdb::FileSystem> inner, std::shared_ptr<ExtensionState> state);
	//! Wraps `inner` with the store `make_store` gives (tests: a store of their own).
	WrappedFileSystem(duckdb::unique_ptr<duckdb::FileSystem> inner, std::shared_ptr<ExtensionState> state,
	                  const StoreFactory &make_store);
	~WrappedFileSystem() override;
	//! Closes all read-ahead (waiting for its fetches) and the kept version handles: ExtensionState::ReleaseHandles.
	void ReleaseHandles() override;

	using FileSystem::OpenFile;

	void Read(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes, duckdb::idx_t location) override;
	int64_t Read(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes) override;
	void Write(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes, duckdb::idx_t location) override;
	int64_t Write(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes) override;

	int64_t GetFileSize(duckdb::FileHandle &handle) override;
	duckdb::timestamp_t GetLastModifiedTime(duckdb::FileHandle &handle) override;
	std::string GetVersionTag(duckdb::FileHandle &handle) override;
	duckdb::FileType GetFileType(duckdb::FileHandle &handle) override;
	duckdb::FileMetadata Stats(duckdb::FileHandle &handle) override;
	void FileSync(duckdb::FileHandle &handle) override;
	void Seek(duckdb::FileHandle &handle, duckdb::idx_t location) override;
	void Reset(duckdb::FileHandle &handle) override;
	duckdb::idx_t SeekPosition(duckdb::FileHandle &handle) override;
	bool OnDiskFile(duckdb::FileHandle &handle) override;

	bool FileExists(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	void RemoveFile(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool TryRemoveFile(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	void RemoveFiles(const duckdb::vector<std::string> &filenames,
	                 duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	duckdb::vector<duckdb::OpenFileInfo> Glob(const std::string &path, duckdb::FileOpener *opener) override;

protected:
	duckdb::unique_ptr<duckdb::FileHandle> OpenFileExtended(const duckdb::OpenFileInfo &file,
	                                                        duckdb::FileOpenFlags flags,
	                                                        duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool SupportsOpenFileExtended() const override;
	duckdb::unique_ptr<duckdb::MultiFileList>
	GlobFilesExtended(const std::string &path, const duckdb::FileGlobInput &input,
	                  duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool SupportsGlobExtended() const override;
	duckdb::FileHandle &InnerOf(duckdb::FileHandle &handle) override;

	// --- what DuckDB 2.0 asks of a stand-in (compat::StandInFileSystem; stand_in_answers.cpp) ---

	//! The uploader admits a file's writes in order while its parts go out side by side (CONCURRENT_SEQUENTIAL);
	//! other writes as the wrapped filesystem takes them.
	compat::WriteMode WriteModeOf(duckdb::FileHandle &handle) override;
	//! httpfs2's measured first-byte latency and stream bandwidth (CostModel) once it has both; else the wrapped
	//! filesystem's estimate where its handle is open.
	bool NetworkThroughputOf(duckdb::FileHandle &handle, compat::NetworkThroughput &result) override;
	//! The uploader's upload is aborted; other writes are aborted as the wrapped filesystem aborts them.
	void AbortWrite(duckdb::FileHandle &handle) override;
	//! What the wrapped filesystem says, once an upload of the file that a statement closed is complete.
	bool StatsIfExists(const duckdb::OpenFileInfo &file, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                   duckdb::FileMetadata &result) override;
	//! What the wrapped filesystem's handle says, where it is open (opening one to ask would cost a request).
	bool CacheValidUntil(duckdb::FileHandle &handle, duckdb::timestamp_t &result) override;

private:
	//! `handle` as the uploader's handle, or null for a handle reading through the wrapped filesystem.
	static UploadHandle *AsUpload(duckdb::FileHandle &handle);
	//! `handle` as a handle reading through the wrapped filesystem; an upload's fails, naming the file.
	static ReadHandle &Readable(duckdb::FileHandle &handle);
	//! A handle writing `path` through httpfs2's uploader, or null where the wrapped filesystem writes it.
	duckdb::unique_ptr<UploadHandle> OpenUpload(const std::string &path, duckdb::FileOpenFlags flags,
	                                            duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                            const IoSettings &settings);
	//! Serves a read from read-ahead where it can and reads the rest for the reader.
	void ReadWithReadAhead(ReadHandle &handle, char *buffer, duckdb::idx_t nr_bytes, duckdb::idx_t location);
	//! A positional read on the reader's behalf: split across the IO pool when large enough, else passed through.
	void ReadForReader(ReadHandle &handle, void *buffer, int64_t nr_bytes, duckdb::idx_t location);
	//! A read on the wrapped filesystem's handles as the handle's fallback says: the whole object's, the version's
	//! shared handle, or its own.
	void PassThrough(ReadHandle &handle, void *buffer, int64_t nr_bytes, duckdb::idx_t location);
	//! After a read of `nr_bytes` at `location` on the wrapped filesystem's own handles found that the server ignores
	//! ranges: whether the handle is read from one GET of the whole object instead (it has a whole-object handle, the
	//! read lies inside the object, and the connection's auto_fallback_to_full_download is on).
	static bool FallsBackToWholeObject(ReadHandle &handle, int64_t nr_bytes, duckdb::idx_t location);
	//! The version of `path` from the store's own request, where it makes one (az:// with parallel reads on).
	VersionLookup LookUpVersion(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Answers a glob without wildcards from the version lookup; false when the wrapped filesystem must.
	bool TryGlobOneFile(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                    duckdb::vector<duckdb::OpenFileInfo> &files);
	//! A glob's list and its first files (up to PrefetchLimits::FILES_PER_LISTING), or why it failed.
	struct ExpandedGlob {
		duckdb::unique_ptr<duckdb::MultiFileList> list;
		std::vector<duckdb::OpenFileInfo> files;
		std::exception_ptr failure;
	};
	//! Globs `path` through the wrapped filesystem and expands its first files, sent again when throttled.
	void ExpandGlob(const std::string &path, const duckdb::FileGlobInput &input,
	                duckdb::optional_ptr<duckdb::FileOpener> opener, ExpandedGlob &expanded);

	const std::shared_ptr<ExtensionState> state;
	const std::shared_ptr<IoStats> stats;
	const std::unique_ptr<RemoteStore> store;
	ParallelReader reader;
	InnerOpens opens;
	//! Files being uploaded and not completed: DuckDB's removal of a failed COPY's file is skipped for them.
	const std::shared_ptr<UploadingPaths> uploading = std::make_shared<UploadingPaths>();
	//! After `opens` and before what uses it; destroyed before them: closing its objects waits for their fetches.
	ReadAheadWiring read_ahead;
	PrefetchEngine prefetch;
	ReadOpener read_opener;
};

} // namespace httpfs2
