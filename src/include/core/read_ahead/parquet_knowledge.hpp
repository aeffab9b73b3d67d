//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_ahead/parquet_knowledge.hpp
//
// What read-ahead knows of Parquet, apart from the mechanism that fetches, holds and serves ranges (ObjectReadAhead,
// blind to formats): one file's layout (its row groups and column chunks), learned from its footer (read by a reader,
// fetched ahead, or remembered from an earlier open) or handed over from another open of the same version; and the
// columns the files of its dataset are read with (PatternMemory), which seed the predictors of its readers and the
// fetch of its first row group before any reader comes. It hands the mechanism predictors and ranges. Not
// thread-safe: the object it serves calls it under its own lock.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/read_ahead/access_predictor.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace httpfs2 {

class ParquetKnowledge {
public:
	explicit ParquetKnowledge(uint64_t file_size);

	//! Shares column patterns with the other files of `dataset`.
	void SharePatterns(std::shared_ptr<PatternMemory> patterns, std::string dataset);
	//! A predictor for a new reader: row groups once the layout is known (seeded from the dataset's pattern), else a
	//! sequential window.
	std::unique_ptr<AccessPredictor> NewPredictor() const;
	//! Shares what `predictor` learnt of the columns its reader reads with the dataset: the dataset's watchers to run
	//! (outside any lock) when that changed its pattern.
	std::vector<std::function<void()>> RememberPattern(const AccessPredictor &predictor);

	//! Whether `range` (its bytes in `data`) holds the file's whole metadata, to parse: a read that ends at the end of
	//! the file names it in its trailer; metadata that did not fit in that read is found in a later read that covers
	//! it. False for other reads, and for a file whose trailer is not a plain Parquet one.
	bool MetadataIn(const ByteRange &range, const char *data, ByteRange &metadata);
	//! The layout in the `length` bytes of metadata at `bytes`, of a file of `file_size` bytes; null for what httpfs2
	//! does not read (malformed, too many column chunks). Needs no lock: a large footer takes a while.
	static std::shared_ptr<const ParquetLayout> Parse(const char *bytes, uint64_t length, uint64_t file_size);
	void Install(std::shared_ptr<const ParquetLayout> layout);
	const std::shared_ptr<const ParquetLayout> &Layout() const {
		return layout;
	}
	//! True once: the first time it is asked after the layout was installed (the registry keeps it for later opens).
	bool LayoutToReport();
	//! The ranges of the first row group with the columns the dataset's other files were read with; none without a
	//! layout or a pattern.
	std::vector<PredictedRange> FirstRowGroup(const PredictionLimits &limits) const;
	//! Runs `watcher` whenever the dataset's pattern changes (a scan's first reads show its columns one at a time);
	//! false without a dataset.
	bool WatchDataset(std::function<void()> watcher);

private:
	const uint64_t file_size;
	std::shared_ptr<const ParquetLayout> layout;
	bool layout_reported = false;
	//! A footer whose metadata did not fit in the read of its trailer: its range, to parse when it is read.
	ByteRange pending_metadata {0, 0};
	std::shared_ptr<PatternMemory> patterns;
	std::string dataset;
};

} // namespace httpfs2
