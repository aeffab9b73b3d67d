//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/handles/version_handles.hpp
//
// Handles of the wrapped filesystem opened for parallel positional reads of one object version, kept for reuse
// by later opens of the same version. DuckDB opens a Parquet file several times per query (bind, scan) and again
// in the next query; on Azure each open of the azure extension is a HEAD. Read-ahead fetches and the reads that
// miss it go through these handles, so a version costs one such open while it stays in the cache.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"
#include "core/read_ahead/version_key.hpp"
#include "duckdb/common/file_system.hpp"

#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace httpfs2 {

class VersionHandles {
public:
	//! Versions whose handle is kept at most (least recently used ones are closed first).
	static constexpr size_t CAPACITY = 64;

	~VersionHandles();

	using Opener = std::function<duckdb::unique_ptr<duckdb::FileHandle>()>;
	//! The handle kept for `version` and `connection` (a handle carries the credentials of the connection that opened
	//! it), or a new one from `open` (called outside the lock).
	std::shared_ptr<duckdb::FileHandle> Get(const VersionKey &version, uint64_t connection, const Opener &open);
	//! Closes every handle kept.
	void Clear();

private:
	struct Kept {
		VersionKey version;
		uint64_t connection;
		std::shared_ptr<duckdb::FileHandle> handle;
	};
	//! The handle kept for `version` and `connection`, made the most recently used; nullptr when none is.
	std::shared_ptr<duckdb::FileHandle> FindLocked(const VersionKey &version, uint64_t connection)
	    HTTPFS2_REQUIRES(lock);

	Mutex lock;
	//! Most recently used first.
	std::list<Kept> handles HTTPFS2_GUARDED_BY(lock);
};

} // namespace httpfs2
