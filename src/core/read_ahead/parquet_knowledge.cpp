#include "core/read_ahead/parquet_knowledge.hpp"

namespace httpfs2 {

ParquetKnowledge::ParquetKnowledge(uint64_t file_size_p) : file_size(file_size_p) {
}

void ParquetKnowledge::SharePatterns(std::shared_ptr<PatternMemory> patterns_p, std::string dataset_p) {
	patterns = std::move(patterns_p);
	dataset = std::move(dataset_p);
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

std::vector<std::function<void()>> ParquetKnowledge::RememberPattern(const AccessPredictor &predictor) {
	ColumnPattern pattern;
	if (!patterns || !predictor.PatternToShare(pattern)) {
		return {};
	}
	return patterns->Remember(dataset, pattern);
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

std::shared_ptr<const ParquetLayout> ParquetKnowledge::Parse(const char *bytes, uint64_t length, uint64_t file_size) {
	auto parsed = std::make_shared<ParquetLayout>();
	std::string error;
	if (!ParquetFooter::ParseLayout(bytes, length, file_size, *parsed, error)) {
		return nullptr;
	}
	return std::move(parsed);
}

void ParquetKnowledge::Install(std::shared_ptr<const ParquetLayout> parsed) {
	layout = std::move(parsed);
	pending_metadata = ByteRange {0, 0};
}

bool ParquetKnowledge::LayoutToReport() {
	if (!layout || layout_reported) {
		return false;
	}
	layout_reported = true;
	return true;
}

std::vector<PredictedRange> ParquetKnowledge::FirstRowGroup(const PredictionLimits &limits) const {
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

bool ParquetKnowledge::WatchDataset(std::function<void()> watcher) {
	if (!patterns) {
		return false;
	}
	patterns->Watch(dataset, std::move(watcher));
	return true;
}

} // namespace httpfs2
