//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/prefetch/manifest_prefetch.hpp
//
// What an Iceberg table's metadata tells of the opens to come, fetched before them. The iceberg extension reads a
// table's manifests one after another, then opens the data files they name one after another, each a round trip
// before any byte of it is read.
// - Manifests: fetched side by side as soon as the manifest list is opened, each whole with a checked range GET of
//   the length the list gives.
// - Data files: their order is read from the manifests fetched; when the scan opens them in that order, the tails of
//   the next ones (the GET an open makes first: version and footer) are fetched ahead, a few at a time. A scan that
//   skips files (a filter on the partition) stops the fetches until it opens two in a row again.
// The query's open of a path fetched ahead waits for the fetch once sent (or sends its own while the fetch is
// queued) and opens at the version its answer gave, its reads served from the bytes (QueryVersions). A fetch that
// fails or answers otherwise leaves the open to its own request, as without it.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/query_state.hpp"
#include "adapter/common/query_versions.hpp"
#include "adapter/stores/remote_store.hpp"
#include "core/common/io_pool.hpp"
#include "core/common/io_stats.hpp"
#include "core/common/memory_budget.hpp"
#include "core/common/thread_annotations.hpp"
#include "duckdb/common/file_opener.hpp"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace httpfs2 {

//! The data files one query's Iceberg scans open, in the order of their manifest lists and manifests, as far as the
//! manifests fetched ahead tell; and which of them were opened or had their tails fetched ahead.
class DataFileOrder : public QueryState<DataFileOrder> {
public:
	//! Data files ahead of the one opening whose tails are fetched.
	static constexpr size_t WINDOW = 8;
	//! Data files remembered in a query at most (their paths take memory): the manifests past them are not followed.
	static constexpr size_t MAX_FILES = 100000;

	static const char *StateName() {
		return "httpfs2_data_file_order";
	}

	//! Forgets all (a query began or ended).
	void Clear();
	//! Which query's order this is: a manifest parsed after its query ended is not put into the next one's.
	uint64_t Generation();
	//! A manifest list opened: its manifests, in its order.
	void Listed(const std::vector<std::string> &manifests);
	//! The data files `manifest` names, in its order (its fetch in query `generation` gave them).
	void Parsed(uint64_t generation, const std::string &manifest, std::vector<std::string> data_files);
	//! `path` opens: the data files after it whose tails to fetch now (up to WINDOW ahead, none already opened or
	//! fetched), when the scan follows the order: `path` was fetched ahead, is the first file of a list, or the file
	//! before it was opened. Empty otherwise, and for a path no manifest named.
	std::vector<std::string> Opened(const std::string &path);

private:
	struct Manifest {
		std::string path;
		bool first_of_list = false;
		bool parsed = false;
		std::vector<std::string> data_files;
	};
	struct Position {
		size_t manifest;
		size_t entry;
	};

	enum class Before : uint8_t { FILE, NOTHING, UNKNOWN };
	//! Moves `at` to the data file after it in its list, across parsed manifests; false past the list's end or at a
	//! manifest not parsed (yet).
	bool Next(Position &at) HTTPFS2_REQUIRES(lock);
	//! Moves `at` to the data file before it in its list: FILE; NOTHING when `at` is the list's first; UNKNOWN behind a
	//! manifest not parsed.
	Before Previous(Position &at) HTTPFS2_REQUIRES(lock);

	Mutex lock;
	uint64_t generation HTTPFS2_GUARDED_BY(lock) = 0;
	std::vector<Manifest> manifests HTTPFS2_GUARDED_BY(lock);
	std::unordered_map<std::string, size_t> manifest_index HTTPFS2_GUARDED_BY(lock);
	std::unordered_map<std::string, Position> positions HTTPFS2_GUARDED_BY(lock);
	std::unordered_set<std::string> opened HTTPFS2_GUARDED_BY(lock);
	std::unordered_set<std::string> fetched_ahead HTTPFS2_GUARDED_BY(lock);
};

class ManifestPrefetch {
public:
	//! Manifests longer than this are left to their opens (a remembered footer holds at most as much).
	static constexpr uint64_t MAX_MANIFEST_BYTES = 1024 * 1024;

	//! Starts the fetches of the manifests that `list_bytes` (the whole manifest list at `list_path`) names, under
	//! the list's own scheme and bucket, for the query of `opener`; their bytes are charged to `budget` (read-ahead's)
	//! until their opens take them or the query ends, and those the budget cannot hold are left to their opens.
	static void Start(const std::string &list_path, const std::string &list_bytes, RemoteStore &store, IoPool &pool,
	                  MemoryBudget &budget, IoStats &stats, duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! The data file at `path` opens (with a catalog's size, before its own tail GET): starts the fetches of the tails
	//! DataFileOrder::Opened names, charged to `budget` as the manifests are.
	static void DataFileOpened(const std::string &path, RemoteStore &store, IoPool &pool, MemoryBudget &budget,
	                           IoStats &stats, duckdb::optional_ptr<duckdb::FileOpener> opener);
};

} // namespace httpfs2
