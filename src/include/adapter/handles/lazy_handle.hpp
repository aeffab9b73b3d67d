//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/handles/lazy_handle.hpp
//
// Handles of the wrapped filesystem as httpfs2's handles hold them: opened when first needed (LazyHandle), and the
// set of parallel-access handles sub-reads lease one of at a time (SubReadHandles).
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/file_system.hpp"

#include <functional>
#include <memory>
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

} // namespace httpfs2
