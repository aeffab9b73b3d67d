//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/prefetch/listing_prefetch.hpp
//
// Footers fetched ahead of the opens a listing announces. ListingMemory keeps what recent globs listed, in listing
// order (the order DuckDB opens the files in), with the size, ETag and modification time the listing gave;
// ListingPrefetch fetches the footers of the files listed after the one being opened, and of a multi-file reader's
// first files at its glob, before DuckDB opens them.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/extension_state.hpp"
#include "adapter/prefetch/read_ahead_wiring.hpp"
#include "adapter/stores/remote_store.hpp"
#include "duckdb/common/file_opener.hpp"
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

class ListingPrefetch {
public:
	ListingPrefetch(ExtensionState &state, RemoteStore &store, ReadAheadWiring &read_ahead);

	//! Remembers a listing, whose files' opens fetch the footers of the files listed after them.
	//! `scan_reads_them`: the listing is a multi-file reader's, whose first files' footers are fetched now.
	void Remember(std::vector<duckdb::OpenFileInfo> files, const IoSettings &settings,
	              duckdb::optional_ptr<duckdb::FileOpener> opener, bool scan_reads_them);
	//! `path` opens: fetches the footers of the files listed after it.
	void Opened(const std::string &path, const IoSettings &settings, duckdb::optional_ptr<duckdb::FileOpener> opener);

private:
	//! Fetches the footers of listed Parquet files: those with size, ETag and modification time from the listing,
	//! and, where the store looks versions up, the others after looking theirs up.
	void PrefetchFooters(const std::vector<duckdb::OpenFileInfo> &files, const IoSettings &settings,
	                     duckdb::optional_ptr<duckdb::FileOpener> opener);

	ExtensionState &state;
	RemoteStore &store;
	ReadAheadWiring &read_ahead;
	ListingMemory memory;
};

} // namespace httpfs2
