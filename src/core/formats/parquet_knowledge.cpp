#include "core/formats/parquet_knowledge.hpp"

namespace httpfs2 {

ParquetKnowledge::ParquetKnowledge(uint64_t file_size_p, std::shared_ptr<PatternMemory> patterns_p,
                                   std::string dataset_p)
    : file_size(file_size_p), patterns(std::move(patterns_p)), dataset(std::move(dataset_p)) {
}

std::unique_ptr<AccessPredictor> ParquetKnowledge::NewPredictor() const {
	if (!layout) {
		return std::unique_ptr<AccessPredictor>(new SequentialPredictor(file_size));
	}
	std::unique_ptr<ParquetPredictor> parquet(new ParquetPredictor(layout));
	ColumnPattern seed;
	if (patterns && patterns->Recall(dataset, parquet->Pattern().columns.size(), seed)) {
		parquet->Seed(seed);
	}
	return std::move(parquet);
}

std::vector<std::function<void()>> ParquetKnowledge::SharePattern(const AccessPredictor &predictor) {
	ColumnPattern pattern;
	if (!patterns || !predictor.PatternToShare(pattern)) {
		return {};
	}
	return patterns->Remember(dataset, pattern);
}

bool ParquetKnowledge::WatchShared(std::function<void()> watcher) {
	if (!patterns) {
		return false;
	}
	patterns->Watch(dataset, std::move(watcher));
	return true;
}

bool ParquetKnowledge::ReadsData(const ByteRange &read) const {
	return read.offset + ParquetFooter::DuckDBTailReadSize(file_size) < file_size;
}

bool ParquetKnowledge::MetadataIn(const ByteRange &range, const char *data, ByteRange &metadata) {
	if (layout) {
		return false;
	}
	if (range.End() == file_size && range.length >= ParquetFooter::TRAILER_SIZE) {
		uint32_t metadata_length = 0;
		if (!ParquetFooter::ParseTrailer(data + range.length - ParquetFooter::TRAILER_SIZE, file_size,
		                                 metadata_length)) {
			return false;
		}
		pending_metadata = ByteRange {file_size - ParquetFooter::TRAILER_SIZE - metadata_length, metadata_length};
	}
	if (pending_metadata.length == 0 || range.offset > pending_metadata.offset ||
	    range.End() < pending_metadata.End()) {
		return false;
	}
	metadata = pending_metadata;
	return true;
}

std::shared_ptr<const FileLayout> ParquetKnowledge::Parse(const char *bytes, uint64_t length) const {
	auto parsed = std::make_shared<ParquetLayout>();
	std::string error;
	if (!ParquetFooter::ParseLayout(bytes, length, file_size, *parsed, error)) {
		return nullptr;
	}
	return std::move(parsed);
}

bool ParquetKnowledge::Install(std::shared_ptr<const FileLayout> installed) {
	auto parquet = std::dynamic_pointer_cast<const ParquetLayout>(std::move(installed));
	if (!parquet) {
		return false;
	}
	layout = std::move(parquet);
	pending_metadata = ByteRange {0, 0};
	return true;
}

std::shared_ptr<const FileLayout> ParquetKnowledge::Layout() const {
	return layout;
}

std::vector<PredictedRange> ParquetKnowledge::FirstRanges(const PredictionLimits &limits) const {
	ColumnPattern seed;
	if (!layout || !patterns) {
		return {};
	}
	ParquetPredictor first(layout);
	if (!patterns->Recall(dataset, first.Pattern().columns.size(), seed)) {
		return {};
	}
	// What is held already is not fetched again.
	first.Seed(seed);
	return first.Start(limits).ranges;
}

} // namespace httpfs2
