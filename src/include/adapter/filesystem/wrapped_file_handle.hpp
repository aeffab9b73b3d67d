//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/filesystem/wrapped_file_handle.hpp
//
// The handle httpfs2 returns for a remote file: the wrapped filesystem's own handle (kept untouched, with its
// read buffer) plus, when parallel reads are on, the handles that sub-reads run on.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/filesystem/uploading_paths.hpp"
#include "adapter/stores/azure_versions.hpp"
#include "adapter/stores/checked_range_reader.hpp"
#include "core/read_ahead/read_ahead_registry.hpp"
#include "core/common/read_settings.hpp"
#include "core/common/read_stats.hpp"
#include "core/upload/object_upload.hpp"
#include "duckdb/common/file_system.hpp"
#include "duckdb/main/client_context.hpp"

#include <atomic>
#include <functional>
#include <mutex>

namespace httpfs2 {

//! A handle of the wrapped filesystem, opened when first needed: on Azure every open costs a HEAD, and a query
//! whose bytes come from DuckDB's cache or from read-ahead may need none. Safe to use from several threads.
class LazyHandle {
public:
	using Opener = std::function<duckdb::unique_ptr<duckdb::FileHandle>()>;
	//! Gets a handle others use too: it is never closed through this one.
	using SharedOpener = std::function<std::shared_ptr<duckdb::FileHandle>()>;
	explicit LazyHandle(duckdb::unique_ptr<duckdb::FileHandle> opened);
	explicit LazyHandle(Opener open);
	explicit LazyHandle(SharedOpener open_shared);

	//! The handle, opened on first use; a failed open throws its error and is tried again at the next use.
	duckdb::FileHandle &Get();
	bool IsOpen();
	void Close();
	//! Seeks the handle, or remembers the position for when it opens: a seek alone never opens it.
	void Seek(duckdb::idx_t location);
	duckdb::idx_t SeekPosition();
	void Reset();

private:
	std::mutex lock;
	SharedOpener open;
	std::shared_ptr<duckdb::FileHandle> handle;
	bool owned = true;
	//! Where the handle is to start once opened.
	duckdb::idx_t position = 0;
};

//! Inner handles opened with FILE_FLAGS_PARALLEL_ACCESS, on which httpfs reads without its shared read buffer,
//! so concurrent positional reads are safe. A lease takes the least busy one.
class SubReadHandles {
public:
	//! Holds one handle for the duration of a sub-read.
	class Lease {
	public:
		explicit Lease(SubReadHandles &owner);
		~Lease();
		Lease(const Lease &) = delete;
		Lease &operator=(const Lease &) = delete;
		duckdb::FileHandle &operator*() const;

	private:
		SubReadHandles &owner;
		size_t index;
	};

	//! Sub-reads run on `owned` handles, or on `borrowed` (an inner handle opened for parallel access).
	SubReadHandles(duckdb::vector<duckdb::unique_ptr<LazyHandle>> owned, duckdb::optional_ptr<LazyHandle> borrowed);

	void Close();

private:
	std::mutex lock;
	duckdb::vector<duckdb::unique_ptr<LazyHandle>> owned;
	duckdb::vector<LazyHandle *> handles;
	duckdb::vector<size_t> busy;
};

//! A handle's share in the read-ahead of the object version it reads; detaches when the handle closes, and the last
//! handle's detach frees the object's read-ahead.
class ReadAheadAttachment {
public:
	ReadAheadAttachment(ReadAheadRegistry &registry, std::string key, std::shared_ptr<ObjectReadAhead> object,
	                    const ObjectVersion &version, bool footer_outlives_open);
	~ReadAheadAttachment();
	ReadAheadAttachment(const ReadAheadAttachment &) = delete;
	ReadAheadAttachment &operator=(const ReadAheadAttachment &) = delete;

	ReadAheadRegistry &registry;
	//! Path and version (ETag, last modified, size): read-ahead is shared only by handles on the same version.
	const std::string key;
	const std::shared_ptr<ObjectReadAhead> object;
	//! Other opens can recognise the version (ObjectVersion::Recognizable): only then is its layout remembered.
	const bool recognizable;
	//! The version's ETag changes with its bytes (WrappedFileSystem::FooterOutlivesOpen): only then are its footer's
	//! bytes remembered past this open (a size and a Last-Modified of 1-second resolution do not tell two versions
	//! apart, nor does an ETag made of them).
	const bool strong_etag;
	//! This handle's own predictions over the object's shared read-ahead.
	ReadAheadReader reader;
};

class WrappedFileHandle : public duckdb::FileHandle {
public:
	//! A handle over `inner`, opened already.
	WrappedFileHandle(duckdb::FileSystem &wrapper, duckdb::unique_ptr<duckdb::FileHandle> inner,
	                  const ParallelReadSettings &settings);
	//! A handle over an object whose version httpfs2 knows; the wrapped filesystem's handle opens on first need.
	WrappedFileHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags,
	                  LazyHandle::Opener open_inner, const ObjectVersion &version,
	                  const ParallelReadSettings &settings);
	//! A handle of an s3:// file written by httpfs2's uploader: no handle of the wrapped filesystem is opened (httpfs
	//! would begin a multipart upload of its own), and what needs one fails, naming the file.
	WrappedFileHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags,
	                  std::unique_ptr<ObjectUpload> upload, std::shared_ptr<ReadStats> stats,
	                  std::unique_ptr<UploadingPaths::Mark> uploading, const ParallelReadSettings &settings);
	//! An upload not closed successfully is aborted here (ObjectUpload's destructor): the key keeps what it had.
	~WrappedFileHandle() override;

	void Close() override;
	duckdb::idx_t GetProgress() override;
	duckdb::FileCompressionType GetFileCompressionType() override;

	//! Whether a positional read of `nr_bytes` at `location` goes to the parallel read layer.
	bool ShouldSplit(duckdb::idx_t nr_bytes, duckdb::idx_t location) const;
	bool CanSplit() const {
		return sub_read_handles != nullptr;
	}

	//! The wrapped filesystem's handle (its file_system is the wrapped filesystem), opened on first use.
	duckdb::FileHandle &Inner() {
		return inner.Get();
	}

	LazyHandle inner;
	//! Set when the version (size, modification time, ETag) came from httpfs2's own request, not from `inner`.
	bool version_known = false;
	ObjectVersion version;
	//! With version_known: the version's parallel-access handle shared by all its opens (never closed through
	//! this one), looked up at first use and then kept; pass-through and split reads run on it.
	duckdb::unique_ptr<LazyHandle> version_handle;
	//! Settings in force when the file was opened, preset applied.
	const ParallelReadSettings settings;
	//! Set when the file was opened for reading with parallel reads on and is large enough to split.
	duckdb::unique_ptr<SubReadHandles> sub_read_handles;
	//! Where httpfs2 sends the range GETs of sub-reads and read-ahead itself (s3://, http(s)://), checking every
	//! answer; sub-reads use sub_read_handles where it is null.
	std::shared_ptr<CheckedRangeReader> range_reader;
	//! The server answered a range with the whole object: the file is read through the wrapped filesystem alone.
	bool RangesIgnored() const {
		return ranges_ignored_by_sub_reads || (range_reader && range_reader->RangesWereIgnored());
	}
	//! Set when a sub-read on sub_read_handles found that the server ignores ranges (InternalOpener).
	std::atomic<bool> ranges_ignored_by_sub_reads {false};
	//! File size at open; only meaningful when sub_read_handles or read_ahead is set.
	duckdb::idx_t file_size = 0;
	//! The connection that opened the file: a split read stops starting pieces once its query is interrupted.
	duckdb::weak_ptr<duckdb::ClientContext> client_context;
	//! Set when read-ahead is active for this file; file_size is then set too.
	duckdb::unique_ptr<ReadAheadAttachment> read_ahead;
	//! Read-ahead is attached at the first read rather than at open (set before the handle is shared).
	bool read_ahead_deferred = false;
	std::once_flag read_ahead_attached;

	//! Whether the query of the connection that opened the file was interrupted.
	bool Interrupted() const;

	//! Set for a file written by httpfs2's uploader; its object is complete and visible once Close returns.
	std::unique_ptr<ObjectUpload> upload;

private:
	std::shared_ptr<ReadStats> upload_stats;
	//! Held until the object is complete or the handle dropped: DuckDB removes a failed COPY's file before it drops
	//! the handle, and that removal is skipped (UploadingPaths).
	std::unique_ptr<UploadingPaths::Mark> uploading;
	bool upload_closed = false;
};

} // namespace httpfs2
