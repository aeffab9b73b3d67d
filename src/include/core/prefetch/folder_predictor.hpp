//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/prefetch/folder_predictor.hpp
//
// read_parquet of a list of paths opens them one after another, each a tail GET before any byte of it is read, and
// DuckDB 1.5.5 expands the list one path at a time, so no listing announces the next files as a glob's does. Most
// such lists name a folder's files in the folder's order. So when a query opens, by name, a second Parquet file of a
// folder and it sorts right after the first one opened there (within FOLDER_SLACK files: a scan's threads open several
// at once), the folder is listed after the first one (one request, in the round trip the second file's tail GET would
// take). From then on the listed files open at the version the listing gave, with no request, and each open predicts
// the footers of the next ones, as a glob's opens do; more is listed as the scan nears the end of what was. A list in
// another order gets one listing per folder and nothing more. One predictor per query.
// DuckDB 2.0 opens a list's files ahead, many at once: an open that comes while its folder's listing is under way waits
// for the listing (the round trip its own tail GET would take), then opens at the listed version and has its footer
// fetched at the size DuckDB reads, rather than a 256 KiB tail of which DuckDB reads 16 KiB of a small file.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"
#include "core/prefetch/prediction.hpp"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace httpfs2 {

class FolderPredictor {
public:
	//! Forgets all (a query began or ended).
	void Clear();
	//! A Parquet file opens by name: the file of its folder to list after now (the first opened there, when `path`
	//! is the second and sorts after it; the last listed, when few listed files are left after `path` and more
	//! follow), or empty for none.
	std::string ListAfter(const std::string &path);
	//! What listing after `after` gave (its Parquet files whose versions name their bytes, in order; none when it
	//! failed), for the open of `path`. True when the folder is followed: `path` is among the first FOLDER_SLACK files
	//! of its first listing; the files' versions are then the query's.
	bool Listed(const std::string &after, const std::string &path, std::vector<ListedPath> files, bool truncated);
	//! The listing after `after` that ListAfter gave is over (what it gave was Listed, and its versions learnt by the
	//! query): the opens waiting for it go on.
	void ListingDone(const std::string &after);
	//! Waits while a listing of `path`'s folder that will name it is under way (the path sorts after the file listed
	//! after and is not listed yet), until ListingDone, or `give_up` says to stop (checked every GIVE_UP_CHECK).
	//! True when it waited.
	bool AwaitListing(const std::string &path, const std::function<bool()> &give_up);
	//! The footers of the listed files from `path` (itself first) to FOOTERS_AHEAD after it not predicted yet; none
	//! when `path` is in no followed folder's listing.
	std::vector<OpenPrediction> Ahead(const std::string &path);

private:
	enum class State : uint8_t { WATCHING, LISTING, FOLLOWED, NOT_FOLLOWED };
	struct Folder {
		State state = State::WATCHING;
		//! The first file of the folder the query opened by name.
		std::string first;
		std::vector<ListedPath> files;
		std::unordered_map<std::string, size_t> index;
		bool truncated = false;
		bool extending = false;
		//! A listing ListAfter gave is under way (ListingDone not called yet).
		bool listing = false;
	};
	static constexpr std::chrono::milliseconds GIVE_UP_CHECK {50};
	//! An open waits this long at most for a listing (whose own timeouts end it first).
	static constexpr std::chrono::seconds MAX_WAIT {300};
	//! The folder of `path` (up to its last '/'), or null past MAX_FOLDERS_PER_QUERY.
	Folder *FolderOf(const std::string &path) HTTPFS2_REQUIRES(lock);

	Mutex lock;
	std::condition_variable_any listing_done;
	std::unordered_map<std::string, Folder> folders HTTPFS2_GUARDED_BY(lock);
	std::unordered_set<std::string> predicted HTTPFS2_GUARDED_BY(lock);
	size_t listed_files HTTPFS2_GUARDED_BY(lock) = 0;
};

} // namespace httpfs2
