//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/compat/file_system_api.hpp
//
// The FileSystem and FileHandle calls DuckDB 2.0 added, which a wrapper must answer or silently lose (2.0's
// caching_file_system_wrapper.hpp forwards the same list): GetWriteMode (without it 2.0 writes a file one call at a
// time), TryGetNetworkThroughput (2.0's parquet prefetch cost model), AbortFileWrite, GetStatsIfExists,
// GetCacheValidUntil, a handle's CanSeek, and FileHandle::track_io. httpfs2's filesystem and handles derive from the
// bases here and answer hooks written in terms every version has; on 2.0 DuckDB's virtuals call the hooks, 1.5 has no
// such calls and never does. The calls httpfs2 passes on to the wrapped filesystem's handles are here too, with what
// 1.5 does where it has no such call.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/compat/duckdb_api.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/file_system.hpp"
#include "duckdb/common/open_file_info.hpp"

namespace httpfs2 {
namespace compat {

#if HTTPFS2_DUCKDB_MAJOR >= 2
using WriteMode = duckdb::FileWriteMode;
using NetworkThroughput = duckdb::NetworkThroughputEstimate;
//! DuckDB may hand the in-order writes of one file (WriteMode::CONCURRENT_SEQUENTIAL) to several threads at once.
constexpr bool WRITES_MAY_OVERLAP = true;
#else
//! DuckDB 2.0's FileWriteMode.
enum class WriteMode : uint8_t { SEQUENTIAL, CONCURRENT_SEQUENTIAL, POSITIONAL };
//! DuckDB 2.0's NetworkThroughputEstimate.
struct NetworkThroughput {
	double latency_seconds = 0;
	double bandwidth_bytes_per_s = 0;
};
//! DuckDB 1.5 writes a file one call at a time.
constexpr bool WRITES_MAY_OVERLAP = false;
#endif

//! A filesystem standing in for another: the hooks DuckDB 2.0's FileSystem virtuals of the list above call.
class StandInFileSystem : public duckdb::FileSystem {
#if HTTPFS2_DUCKDB_MAJOR >= 2
public:
	duckdb::FileWriteMode GetWriteMode(duckdb::FileHandle &handle) override {
		return WriteModeOf(handle);
	}
	bool TryGetNetworkThroughput(duckdb::FileHandle &handle, duckdb::NetworkThroughputEstimate &result) override {
		return NetworkThroughputOf(handle, result);
	}
	void AbortFileWrite(duckdb::FileHandle &handle) override {
		AbortWrite(handle);
	}
	duckdb::optional<duckdb::FileMetadata> GetStatsIfExists(const duckdb::OpenFileInfo &file,
	                                                        duckdb::optional_ptr<duckdb::FileOpener> opener) override {
		duckdb::FileMetadata result;
		if (!StatsIfExists(file, opener, result)) {
			return duckdb::nullopt;
		}
		return result;
	}
	duckdb::optional<duckdb::timestamp_t> GetCacheValidUntil(duckdb::FileHandle &handle) override {
		duckdb::timestamp_t result;
		if (!CacheValidUntil(handle, result)) {
			return duckdb::nullopt;
		}
		return result;
	}
#endif

protected:
	//! How `handle` takes writes.
	virtual WriteMode WriteModeOf(duckdb::FileHandle &handle) = 0;
	//! The latency and one stream's bandwidth of the store behind `handle`; false where none is measured.
	virtual bool NetworkThroughputOf(duckdb::FileHandle &handle, NetworkThroughput &result) = 0;
	//! Drops what `handle` wrote: the file keeps what it had.
	virtual void AbortWrite(duckdb::FileHandle &handle) = 0;
	//! The stats of `file` into `result`; false when it does not exist.
	virtual bool StatsIfExists(const duckdb::OpenFileInfo &file, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                           duckdb::FileMetadata &result) = 0;
	//! Until when DuckDB may serve `handle`'s cached bytes without asking again; false where the store does not say.
	virtual bool CacheValidUntil(duckdb::FileHandle &handle, duckdb::timestamp_t &result) = 0;
};

//! A handle of a filesystem standing in for another: the hook of DuckDB 2.0's virtual FileHandle::CanSeek.
class StandInFileHandle : public duckdb::FileHandle {
public:
	StandInFileHandle(duckdb::FileSystem &file_system, const std::string &path, duckdb::FileOpenFlags flags)
	    : FileHandle(file_system, path, flags) {
	}
#if HTTPFS2_DUCKDB_MAJOR >= 2
	bool CanSeek() override {
		return Seekable();
	}
#endif

protected:
	//! Whether DuckDB may seek the handle.
	virtual bool Seekable() = 0;
};

// --- calls on the wrapped filesystem's handles ---

#if HTTPFS2_DUCKDB_MAJOR >= 2
inline WriteMode InnerWriteMode(duckdb::FileHandle &inner) {
	return inner.GetWriteMode();
}
inline bool InnerNetworkThroughput(duckdb::FileHandle &inner, NetworkThroughput &result) {
	return inner.TryGetNetworkThroughput(result);
}
inline void InnerAbortWrite(duckdb::FileHandle &inner) {
	inner.AbortWrite();
}
inline bool InnerStatsIfExists(duckdb::FileSystem &inner, const duckdb::OpenFileInfo &file,
                               duckdb::optional_ptr<duckdb::FileOpener> opener, duckdb::FileMetadata &result) {
	auto stats = inner.GetStatsIfExists(file, opener);
	if (!stats) {
		return false;
	}
	result = std::move(*stats);
	return true;
}
inline bool InnerCacheValidUntil(duckdb::FileHandle &inner, duckdb::timestamp_t &result) {
	auto valid_until = inner.file_system.GetCacheValidUntil(inner);
	if (!valid_until) {
		return false;
	}
	result = *valid_until;
	return true;
}
//! A file's version tag in its stats, where DuckDB's external file cache checks it (2.0).
inline void SetVersionTag(duckdb::FileMetadata &metadata, const std::string &version_tag) {
	metadata.version_tag = version_tag;
}
//! The wrapped filesystem's handles are read and written through their filesystem on the query's behalf: DuckDB counts
//! the query's bytes once, on httpfs2's handle, never on these.
inline void LeaveIoCountToWrapper(duckdb::FileHandle &inner) {
	inner.track_io = false;
}
#else
inline WriteMode InnerWriteMode(duckdb::FileHandle &inner) {
	return WriteMode::SEQUENTIAL;
}
inline bool InnerNetworkThroughput(duckdb::FileHandle &inner, NetworkThroughput &result) {
	return false;
}
inline void InnerAbortWrite(duckdb::FileHandle &inner) {
	inner.Close();
}
inline bool InnerStatsIfExists(duckdb::FileSystem &inner, const duckdb::OpenFileInfo &file,
                               duckdb::optional_ptr<duckdb::FileOpener> opener, duckdb::FileMetadata &result) {
	auto handle = inner.OpenFile(
	    file, duckdb::FileFlags::FILE_FLAGS_READ | duckdb::FileFlags::FILE_FLAGS_NULL_IF_NOT_EXISTS, opener);
	if (!handle) {
		return false;
	}
	result = inner.Stats(*handle);
	return true;
}
inline bool InnerCacheValidUntil(duckdb::FileHandle &inner, duckdb::timestamp_t &result) {
	return false;
}
inline void SetVersionTag(duckdb::FileMetadata &metadata, const std::string &version_tag) {
}
inline void LeaveIoCountToWrapper(duckdb::FileHandle &inner) {
}
#endif

} // namespace compat
} // namespace httpfs2
