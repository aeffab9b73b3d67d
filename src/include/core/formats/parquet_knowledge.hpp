//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/formats/parquet_knowledge.hpp
//
// What read-ahead knows of Parquet (its FormatKnowledge), apart from the mechanism that fetches, holds and serves
// ranges (ObjectReadAhead, blind to formats): one file's layout (its row groups and column chunks), learned from its
// footer (read by a reader, fetched ahead, or remembered from an earlier open) or handed over from another open of
// the same version; and the columns the files of its dataset are read with (PatternMemory), which seed the
// predictors of its readers and the fetch of its first row group before any reader comes. It hands the mechanism
// predictors and ranges. Not thread-safe: the object it serves calls it under its own lock (Parse aside).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/formats/parquet_layout.hpp"
#include "core/read_ahead/format_knowledge.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace httpfs2 {

class ParquetKnowledge : public FormatKnowledge {
public:
	//! Shares column patterns in `patterns` with the other files of `dataset` (none without `patterns`).
	explicit ParquetKnowledge(uint64_t file_size, std::shared_ptr<PatternMemory> patterns = nullptr,
	                          std::string dataset = std::string());

	//! Row groups once the layout is known (seeded from the dataset's pattern), else a sequential window.
	std::unique_ptr<AccessPredictor> NewPredictor() const override;
	//! Shares what `predictor` learnt of the columns its reader reads with the dataset: the dataset's watchers to run
	//! when that changed its pattern.
	std::vector<std::function<void()>> SharePattern(const AccessPredictor &predictor) override;
	//! Runs `watcher` whenever the dataset's pattern changes (a scan's first reads show its columns one at a time).
	bool WatchShared(std::function<void()> watcher) override;
	//! A read before the tail DuckDB reads first.
	bool ReadsData(const ByteRange &read) const override;

	//! A read that ends at the end of the file names the metadata in its trailer; metadata that did not fit in that
	//! read is found in a later read that covers it. False for a file whose trailer is not a plain Parquet one.
	bool MetadataIn(const ByteRange &range, const char *data, ByteRange &metadata) override;
	//! Null for what httpfs2 does not read (malformed, too many column chunks).
	std::shared_ptr<const FileLayout> Parse(const char *bytes, uint64_t length) const override;
	bool Install(std::shared_ptr<const FileLayout> layout) override;
	std::shared_ptr<const FileLayout> Layout() const override;
	//! The ranges of the first row group with the columns the dataset's other files were read with; none without a
	//! layout or a pattern.
	std::vector<PredictedRange> FirstRanges(const PredictionLimits &limits) const override;

private:
	const uint64_t file_size;
	std::shared_ptr<const ParquetLayout> layout;
	//! A footer whose metadata did not fit in the read of its trailer: its range, to parse when it is read.
	ByteRange pending_metadata {0, 0};
	const std::shared_ptr<PatternMemory> patterns;
	const std::string dataset;
};

} // namespace httpfs2
