//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/prefetch/listing_predictor.hpp
//
// A glob's listing announces the opens that follow, in the order DuckDB makes them. The predictor keeps the latest
// listings (per wrapped filesystem: a glob is listed once and read by the next queries too) and predicts the footers
// of the Parquet files listed after the one opening, and of a multi-file reader's first files at its listing; where a
// scan reads its files whole (read_blob), the contents of the next ones.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"
#include "core/prefetch/prediction.hpp"

#include <deque>
#include <string>
#include <vector>

namespace httpfs2 {

class ListingPredictor {
public:
	//! Remembers a listing (of two files or more). `scan_reads_them`: a multi-file reader's, read right after: the
	//! footers of its first files are predicted now, beside the first file's open.
	std::vector<OpenPrediction> Listed(std::vector<ListedPath> files, bool scan_reads_them);
	//! `path` opens: the footers of the Parquet files among the FOOTERS_AHEAD listed right after it; none when `path`
	//! is in no remembered listing.
	std::vector<OpenPrediction> Opened(const std::string &path);
	//! All of `path` (not a Parquet file) is being read: the contents of the files listed right after it, when they
	//! are not Parquet files either and the listing gave their versions (at most CONTENTS_AHEAD, each of at most
	//! MAX_CONTENTS_BYTES); none when `path` is in no remembered listing.
	std::vector<OpenPrediction> ReadWhole(const std::string &path);

private:
	//! The index of `path` in a remembered listing, and that listing; null when none names it. Requires `lock`.
	const std::vector<ListedPath> *FindLocked(const std::string &path, size_t &index) HTTPFS2_REQUIRES(lock);
	//! The Parquet files among `files` [first, first + FOOTERS_AHEAD).
	static std::vector<OpenPrediction> Footers(const std::vector<ListedPath> &files, size_t first);

	Mutex lock;
	std::deque<std::vector<ListedPath>> listings HTTPFS2_GUARDED_BY(lock);
};

} // namespace httpfs2
