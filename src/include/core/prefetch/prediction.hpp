//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/prefetch/prediction.hpp
//
// What a predictor says of an open to come: a path, its version where known, which of its bytes to fetch before the
// open asks for them. Predictors know orders and formats (a glob's listing, a folder's, an Iceberg table's manifests)
// and nothing of DuckDB or of requests; one executor (adapter/prefetch/prefetch_engine) gates, de-duplicates, charges
// memory, schedules, counts and delivers what they predict. The limits they share are here, with how they interact.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"
#include "core/read_ahead/read_ahead_registry.hpp"

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace httpfs2 {

//! An object's version as a listing or a catalog gave it: size, ETag and modification time.
struct PredictedVersion {
	uint64_t size = 0;
	std::string etag;
	//! Microseconds since the epoch.
	int64_t last_modified_us = 0;
};

//! A file a listing names, with its version when the listing gave all of it.
struct ListedPath {
	std::string path;
	bool version_known = false;
	PredictedVersion version;
};

//! Which bytes of a predicted file are fetched.
enum class PredictedBytes : uint8_t {
	//! The footer DuckDB reads first from a Parquet file; held in read-ahead that waits for the file's open.
	FOOTER,
	//! The tail GET the file's open makes first (its version and its footer in one answer), before its open.
	TAIL,
	//! The whole object, `length` bytes (a catalog's length): an Iceberg manifest.
	WHOLE,
	//! All of a file, at the listing's version, into read-ahead that waits for its open: the next files of a scan
	//! that reads each of its files whole (read_blob, read_text), so its streams go on from one file into the next.
	CONTENTS
};

struct OpenPrediction {
	std::string path;
	PredictedBytes bytes = PredictedBytes::FOOTER;
	//! Where false (a listing without ETags) the executor looks the version up, where the store can, for a FOOTER.
	bool version_known = false;
	PredictedVersion version;
	//! WHOLE: the object's length.
	uint64_t length = 0;

	static OpenPrediction Footer(const ListedPath &file) {
		OpenPrediction prediction;
		prediction.path = file.path;
		prediction.version_known = file.version_known;
		prediction.version = file.version;
		return prediction;
	}
	static OpenPrediction Tail(const std::string &path) {
		OpenPrediction prediction;
		prediction.path = path;
		prediction.bytes = PredictedBytes::TAIL;
		return prediction;
	}
	static OpenPrediction Contents(const ListedPath &file) {
		auto prediction = Footer(file);
		prediction.bytes = PredictedBytes::CONTENTS;
		return prediction;
	}
	static OpenPrediction Whole(const std::string &path, uint64_t length) {
		OpenPrediction prediction;
		prediction.path = path;
		prediction.bytes = PredictedBytes::WHOLE;
		prediction.length = length;
		return prediction;
	}
};

//! The limits of prediction, in one place.
struct PrefetchLimits {
	//! Files after an opening one whose footers are fetched (a glob's listing, a followed folder). Footers wait for
	//! their opens pinned in the read-ahead registry, which keeps MAX_PINNED at once (the oldest closed first): the
	//! two footer predictors can both run in one query and stay within it together.
	static constexpr size_t FOOTERS_AHEAD = 64;
	static_assert(2 * FOOTERS_AHEAD <= ReadAheadRegistry::MAX_PINNED, "two footer predictors fit the registry's pins");
	//! Data files after an opening one whose tails are fetched (an Iceberg scan in its manifests' order). Tails are
	//! held by the query (not pinned), each charged to the read-ahead budget: at most TAILS_AHEAD x 256 KiB.
	static constexpr size_t TAILS_AHEAD = 8;
	//! Manifests longer than this are left to their opens (a remembered footer holds at most as much).
	static constexpr uint64_t MAX_WHOLE_BYTES = 1024 * 1024;
	//! Files listed after one a scan reads whole whose contents are fetched (CONTENTS), and the largest fetched so.
	//! Two keep a link's streams busy from one file into the next (the file being read, then the next one's open and
	//! first pieces); their bytes are charged to the read-ahead budget and freed as the file's read takes them. A
	//! larger file's own read keeps the streams busy for longer than the step to the next one takes, and fetched
	//! ahead beside it, it slowed it (at `bigbox`, 2 x 128 MiB: 6.1-6.5 s with the next file's first 64 MiB fetched
	//! so, 4.2-4.5 s without; docs/benchmarks.md).
	static constexpr size_t CONTENTS_AHEAD = 2;
	static constexpr uint64_t MAX_CONTENTS_BYTES = 32 * 1024 * 1024;
	//! Files one query's predictors remember at most (their paths take memory): orders past them are not followed.
	static constexpr size_t MAX_FILES_PER_QUERY = 100000;
	//! Folders one query watches at most.
	static constexpr size_t MAX_FOLDERS_PER_QUERY = 1024;
	//! The second file a query opens in a folder must be among this many listed right after the first (a scan's
	//! threads open a few at once) for the folder to be followed.
	static constexpr size_t FOLDER_SLACK = 4;
	//! Listings a filesystem remembers (a query may glob several patterns), and files of each at most.
	static constexpr size_t LISTINGS_REMEMBERED = 4;
	static constexpr size_t FILES_PER_LISTING = 4096;
};

//! The files one query opened or had predicted (the executor's de-duplication across predictors): a prediction of
//! one of them fetches nothing, since its open read its footer already or its prediction is held. DuckDB 2.0 opens
//! files ahead of its scan (read_ahead_depth), so a file a later open predicts may have been opened, read and closed.
class QueryFiles {
public:
	void Clear();
	//! `predictions` less those of files the query opened or had predicted, the others remembered, and `opening` too
	//! (after: an open may predict its own footer). At most PrefetchLimits::MAX_FILES_PER_QUERY paths are remembered.
	std::vector<OpenPrediction> Unseen(std::vector<OpenPrediction> predictions, const std::string &opening);

private:
	bool RememberLocked(const std::string &path) HTTPFS2_REQUIRES(lock);

	Mutex lock;
	std::unordered_set<std::string> seen HTTPFS2_GUARDED_BY(lock);
};

} // namespace httpfs2
