//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/filesystem/listing_memory.hpp
//
// What recent globs listed, in listing order (the order DuckDB opens the files in), with the size, ETag and
// modification time the listing gave, so that opening one listed file can start fetching the footers of the next
// ones before DuckDB opens them.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/open_file_info.hpp"

#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace httpfs2 {

class ListingMemory {
public:
	//! Files of one listing remembered at most.
	static constexpr size_t MAX_FILES = 4096;
	//! Listings remembered at once (a query may glob several patterns).
	static constexpr size_t MAX_LISTINGS = 4;
	//! Files ahead of the one being opened whose footers are fetched.
	static constexpr size_t DEPTH = 16;

	void Remember(std::vector<duckdb::OpenFileInfo> files);
	//! The DEPTH files listed right after `path`; empty when `path` is in no remembered listing.
	std::vector<duckdb::OpenFileInfo> After(const std::string &path);

private:
	std::mutex lock;
	std::deque<std::vector<duckdb::OpenFileInfo>> listings;
};

} // namespace httpfs2
