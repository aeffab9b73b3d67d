#include "core/prefetch/prefetch_executor.hpp"

namespace httpfs2 {

GatedPredictions GatePredictions(std::vector<OpenPrediction> predictions, bool fetch_ahead, QueryFiles *files,
                                 const std::string &opening) {
	GatedPredictions gated;
	if (!fetch_ahead) {
		if (files) {
			files->Unseen({}, opening);
		}
		return gated;
	}
	if (files) {
		predictions = files->Unseen(std::move(predictions), opening);
	}
	for (auto &prediction : predictions) {
		if (prediction.bytes == PredictedBytes::FOOTER) {
			gated.footers.push_back(std::move(prediction));
		} else if (prediction.bytes == PredictedBytes::CONTENTS) {
			gated.contents.push_back(std::move(prediction));
		} else {
			gated.for_open.push_back(std::move(prediction));
		}
	}
	return gated;
}

} // namespace httpfs2
