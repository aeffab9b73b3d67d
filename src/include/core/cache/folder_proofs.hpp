//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/cache/folder_proofs.hpp
//
// The versions one query's folder listings proved. A warm query (its files' blocks held in the block cache) proves the
// version of each file it opens before serving a block of it; opened by name (TPC-H's tables, views over files), each
// file was one request of its own, a tail GET or a HEAD: 60 round trips over 22 queries that read nothing else from
// the network. One listing of a small folder gives the versions of all its files in one round trip, so the first open
// of a folder in a query lists it and the query's later opens there take what it gave. Opens of the folder that come
// while its listing is under way wait for it (the round trip their own request would take). DuckDB-free: the listing,
// and what is learnt of the versions it gives, are the caller's.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace httpfs2 {

class FolderProofs {
public:
	//! One listing of a folder: the paths whose versions it proved into `proved`; false when it failed.
	using List = std::function<bool(std::unordered_set<std::string> &proved)>;

	//! Whether the listing of `path`'s folder in this query proved its version. The first call for a folder in a
	//! query lists it with `list` (on the calling thread), unless `list` is null (false then); calls for the folder
	//! meanwhile wait for that listing (until `give_up` says to stop, asked every GIVE_UP_CHECK), later ones look at
	//! what it proved. A folder is listed once per query, whatever its listing gave.
	bool Proves(const std::string &path, const List &list, const std::function<bool()> &give_up);
	//! Forgets all (a query began or ended); a listing under way is dropped when it ends.
	void Clear();
	//! The folder `path` is in, as the proofs key it: up to its last '/', included.
	static std::string FolderOf(const std::string &path);

	static constexpr std::chrono::milliseconds GIVE_UP_CHECK {50};

private:
	struct Folder {
		bool listing = true;
		std::unordered_set<std::string> proved;
	};

	Mutex lock;
	std::condition_variable_any listed;
	std::unordered_map<std::string, Folder> folders HTTPFS2_GUARDED_BY(lock);
	//! Counts Clear() calls: a listing that ends after one is not this query's.
	uint64_t generation HTTPFS2_GUARDED_BY(lock) = 0;
};

} // namespace httpfs2
