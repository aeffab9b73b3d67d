//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/handles/read_handle.hpp
//
// A remote file opened for reading (see wrapped_file_handle.hpp).
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/handles/lazy_handle.hpp"
#include "adapter/handles/wrapped_file_handle.hpp"
#include "adapter/common/object_version.hpp"
#include "core/read_ahead/read_window.hpp"
#include "duckdb/main/client_context.hpp"

#include <atomic>
#include <memory>
#include <mutex>

namespace httpfs2 {

class CostModel;
class CheckedRangeReader;
class ReadAheadAttachment;

class ReadHandle : public WrappedFileHandle {
public:
	//! A handle over `inner`, opened already.
	ReadHandle(duckdb::FileSystem &wrapper, duckdb::unique_ptr<duckdb::FileHandle> inner, const IoSettings &settings);
	//! A handle over an object whose version httpfs2 knows; the wrapped filesystem's handle opens on first need.
	ReadHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags,
	           LazyHandle::Opener open_inner, const ObjectVersion &version, const IoSettings &settings);
	~ReadHandle() override;

	void Close() override;
	duckdb::idx_t GetProgress() override;
	duckdb::FileCompressionType GetFileCompressionType() override;

	//! The wrapped filesystem's handle (its file_system is the wrapped filesystem), opened on first use.
	duckdb::FileHandle &Inner() {
		return inner.Get();
	}
	LazyHandle inner;

	// --- the version read ---

	//! Set when the version (size, modification time, ETag) came from httpfs2's own request, not from `inner`.
	const bool version_known;
	const ObjectVersion version;
	//! With version_known: the version's parallel-access handle shared by all its opens (never closed through
	//! this one), looked up at first use and then kept; pass-through and split reads run on it.
	duckdb::unique_ptr<LazyHandle> version_handle;
	//! File size at open; only meaningful when sub_read_handles, range_reader or read_ahead is set.
	duckdb::idx_t file_size = 0;
	//! The connection that opened the file: a split read stops starting pieces once its query is interrupted.
	duckdb::weak_ptr<duckdb::ClientContext> client_context;
	//! Whether the query of the connection that opened the file was interrupted.
	bool Interrupted() const;

	// --- sub-reads ---

	//! Whether a positional read of `nr_bytes` at `location` goes to the parallel read layer.
	bool ShouldSplit(duckdb::idx_t nr_bytes, duckdb::idx_t location) const;
	bool CanSplit() const {
		return sub_read_handles != nullptr;
	}
	//! Set when the file was opened for reading with parallel reads on and is large enough to split.
	duckdb::unique_ptr<SubReadHandles> sub_read_handles;
	//! Where httpfs2 sends the range GETs of sub-reads and read-ahead itself (s3://, http(s)://), checking every
	//! answer; sub-reads use sub_read_handles where it is null.
	std::shared_ptr<CheckedRangeReader> range_reader;
	//! httpfs2's range answers for the file were declined (a server that ignores Range, answers other bytes than
	//! asked, or answers that cannot prove their version): it is read as httpfs alone reads it, nothing split or read
	//! ahead.
	bool ReadsDeclined() const;
	//! Every read that is not split nor served by read-ahead goes as range_reader's checked GET (ReadChecked), never
	//! as httpfs's own request, until the answers were declined: httpfs checks an ETag only where its answer has one
	//! (reads answered around a replacement without one would join two versions), and its requests are neither hedged
	//! nor signed again when the credentials change mid-query; with the block cache on, a warm read makes no request.
	bool ReadsThroughRangeReader() const;
	//! Reads `range` (within the file) through range_reader: where httpfs's handle would buffer (Buffered) and the
	//! block cache is off, through `window`, so that the GETs ask for what httpfs's would. Throws as
	//! CheckedRangeReader::Read. Counts the read and the GETs it asked for in `stats`; a read sent whole (not through
	//! the window nor the cache) is a stream's transfer `model` learns from, as a split's pieces are: on DuckDB 2.0 the
	//! host's own pieces are all the reads some queries make.
	void ReadChecked(const ByteRange &range, char *destination, IoStats &stats, CostModel &model);
	//! Whether httpfs's handle buffers this handle's reads (opened without direct IO or parallel access).
	bool Buffered() const {
		return !flags.DirectIO() && !flags.RequireParallelAccess();
	}
	//! The window of a buffered handle's checked reads.
	ReadWindow window;
	//! The declined file is read from one GET of the whole object (whole_object), not with range requests.
	bool ReadsWholeObject() const;
	//! Set at the open: the object is read whole from its first read (its tail could not prove its version).
	bool whole_at_open = false;
	//! Set at every open of httpfs2's reads that has a connection: the handle that downloads the whole object at its
	//! open, opened on first need.
	duckdb::unique_ptr<LazyHandle> whole_object;
	//! Set when a sub-read on sub_read_handles found that the server ignores ranges (InternalOpener).
	std::atomic<bool> ranges_ignored_by_sub_reads {false};
	//! Set when a read of the wrapped filesystem's own failed on a server that ignores ranges, where the connection
	//! asks for a fall back to a full download (WrappedFileSystem::FallsBackToWholeObject): read from whole_object.
	std::atomic<bool> ranges_ignored_by_wrapped {false};

	// --- read-ahead ---

	//! Set when read-ahead is active for this file; file_size is then set too.
	duckdb::unique_ptr<ReadAheadAttachment> read_ahead;
	//! Read-ahead is attached at the first read rather than at open (set before the handle is shared).
	bool read_ahead_deferred = false;
	std::once_flag read_ahead_attached;

protected:
	//! As the wrapped filesystem's handle says (its filesystem's answer before the handle is open).
	bool Seekable() override;
};

} // namespace httpfs2
