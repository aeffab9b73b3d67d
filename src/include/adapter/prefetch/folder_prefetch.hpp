//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/prefetch/folder_prefetch.hpp
//
// read_parquet of a list of paths opens them one after another, each a tail GET before any byte of it is read, and
// DuckDB 1.5.5 expands the list one path at a time, so no listing announces the next files as a glob's does. Most
// such lists name a folder's files in the folder's order. So when a query opens, by name, a second Parquet file of a
// folder and it sorts right after the first one opened there (within a few files: a scan's threads open several at
// once), the folder is listed after the first one (one ListObjectsV2, in the round trip the second file's tail GET
// would take). From then on the listed files are opened at the version the listing gave, with no request, and each
// open fetches the footers of the next ones ahead, as a glob's opens do; more is listed as the scan nears the end of
// what was. A list in another order gets one listing per folder and nothing more.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/query_state.hpp"
#include "adapter/prefetch/read_ahead_wiring.hpp"
#include "adapter/stores/remote_store.hpp"
#include "core/common/thread_annotations.hpp"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace httpfs2 {

//! The folders whose files one query opens by name, and what their listings told.
class FolderOrder : public QueryState<FolderOrder> {
public:
	//! The second file opened must be among this many listed right after the first.
	static constexpr size_t SLACK = 4;
	//! Files after each open whose footers are fetched ahead.
	static constexpr size_t DEPTH = 16;
	//! Listed files remembered in a query at most (their paths take memory): nothing more is listed past them.
	static constexpr size_t MAX_FILES = 100000;
	//! Folders watched in a query at most.
	static constexpr size_t MAX_FOLDERS = 1024;

	static const char *StateName() {
		return "httpfs2_folder_order";
	}

	//! Forgets all (a query began or ended).
	void Clear();
	//! A Parquet file opens by name: the file of its folder to list after now (the first opened there, when `path`
	//! is the second and sorts after it; the last listed, when few listed files are left after `path` and more
	//! follow), or empty for none.
	std::string ListAfter(const std::string &path);
	//! What listing after `after` gave (its Parquet files, in order; none when it failed), for the open of `path`.
	//! True when the folder is followed: `path` is among the first SLACK files of its first listing.
	bool Listed(const std::string &after, const std::string &path, std::vector<ListedFile> files, bool truncated);
	//! The listed files from `path` (itself first) to DEPTH after it whose footers were not asked for yet; empty when
	//! `path` is in no followed folder's listing.
	std::vector<ListedFile> Ahead(const std::string &path);

private:
	enum class State : uint8_t { WATCHING, LISTING, FOLLOWED, NOT_FOLLOWED };
	struct Folder {
		State state = State::WATCHING;
		//! The first file of the folder the query opened by name.
		std::string first;
		std::vector<ListedFile> files;
		std::unordered_map<std::string, size_t> index;
		bool truncated = false;
		bool extending = false;
	};
	//! The folder of `path` (up to its last '/'), or null past MAX_FOLDERS.
	Folder *FolderOf(const std::string &path) HTTPFS2_REQUIRES(lock);

	Mutex lock;
	std::unordered_map<std::string, Folder> folders HTTPFS2_GUARDED_BY(lock);
	std::unordered_set<std::string> footers_asked HTTPFS2_GUARDED_BY(lock);
	size_t listed_files HTTPFS2_GUARDED_BY(lock) = 0;
};

class FolderPrefetch {
public:
	//! A Parquet file of `store` opens by name for the query of `opener`, before its version is looked for: lists its
	//! folder when FolderOrder says so (the versions of a followed folder's files are then known to the query), and
	//! fetches ahead the footers of the files listed from it on.
	static void Opening(const std::string &path, RemoteStore &store, ReadAheadWiring &read_ahead,
	                    const ReadAheadTuning &tuning, duckdb::optional_ptr<duckdb::FileOpener> opener);
};

} // namespace httpfs2
