//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/filesystem/manifest_prefetch.hpp
//
// The manifests of an Iceberg table, fetched side by side as soon as its manifest list is opened (the iceberg
// extension reads them one after another, a round trip each). Each is fetched whole with a checked range GET of the
// length the list gives; the query's open of it waits for that fetch and opens at the version its answer gave, its
// reads served from the bytes (QueryVersions). A fetch that fails or answers otherwise leaves the open to the wrapped
// filesystem, as without it.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/stores/query_versions.hpp"
#include "adapter/stores/remote_store.hpp"
#include "core/common/io_pool.hpp"
#include "core/common/io_stats.hpp"
#include "core/common/memory_budget.hpp"
#include "duckdb/common/file_opener.hpp"

#include <string>

namespace httpfs2 {

class ManifestPrefetch {
public:
	//! Manifests longer than this are left to their opens (a remembered footer holds at most as much).
	static constexpr uint64_t MAX_MANIFEST_BYTES = 1024 * 1024;

	//! Starts the fetches of the manifests that `list_bytes` (the whole manifest list at `list_path`) names, under
	//! the list's own scheme and bucket, for the query of `opener`; their bytes are charged to `budget` (read-ahead's)
	//! until their opens take them or the query ends, and those the budget cannot hold are left to their opens.
	static void Start(const std::string &list_path, const std::string &list_bytes, RemoteStore &store, IoPool &pool,
	                  MemoryBudget &budget, IoStats &stats, duckdb::optional_ptr<duckdb::FileOpener> opener);
};

} // namespace httpfs2
