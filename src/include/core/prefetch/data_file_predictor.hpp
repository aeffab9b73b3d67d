//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/prefetch/data_file_predictor.hpp
//
// What an Iceberg table's metadata tells of the opens to come. The iceberg extension reads a table's manifests one
// after another, then opens the data files they name one after another, each a round trip before any byte of it is
// read.
// - Manifests: predicted whole as soon as the manifest list is read (its entries give their lengths).
// - Data files: their order is read from the manifests fetched; when the scan opens them in that order, the tails of
//   the next ones (the GET an open makes first: version and footer) are predicted, a few at a time. A scan that
//   skips files (a filter on the partition) predicts nothing until it opens two in a row again.
// One predictor per query.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"
#include "core/formats/manifest_list.hpp"
#include "core/prefetch/prediction.hpp"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace httpfs2 {

//! The data files one query's Iceberg scans open, in the order of their manifest lists and manifests, as far as the
//! manifests fetched ahead tell; and which of them were opened or had their tails fetched ahead.
class DataFilePredictor {
public:
	//! Forgets all (a query began or ended).
	void Clear();
	//! Which query's order this is: a manifest parsed after its query ended is not put into the next one's.
	uint64_t Generation();
	//! A manifest list was read whole: its manifests, in its order, are remembered and those of up to
	//! MAX_WHOLE_BYTES predicted whole.
	std::vector<OpenPrediction> ListRead(const std::vector<ListedManifest> &list);
	//! The data files `manifest` names, in its order (its fetch in query `generation` gave them).
	void Parsed(uint64_t generation, const std::string &manifest, std::vector<std::string> data_files);
	//! `path` opens: the tails of the data files after it (up to TAILS_AHEAD ahead, none already opened or predicted),
	//! when the scan follows the order: `path` was predicted, is the first file of a list, or the file before it was
	//! opened. None otherwise, and for a path no manifest named.
	std::vector<OpenPrediction> Opened(const std::string &path);

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
	std::unordered_set<std::string> predicted HTTPFS2_GUARDED_BY(lock);
};

} // namespace httpfs2
