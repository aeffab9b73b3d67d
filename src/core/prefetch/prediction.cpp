#include "core/prefetch/prediction.hpp"

namespace httpfs2 {

constexpr size_t PrefetchLimits::FOOTERS_AHEAD;
constexpr size_t PrefetchLimits::TAILS_AHEAD;
constexpr uint64_t PrefetchLimits::MAX_WHOLE_BYTES;
constexpr size_t PrefetchLimits::MAX_FILES_PER_QUERY;
constexpr size_t PrefetchLimits::MAX_FOLDERS_PER_QUERY;
constexpr size_t PrefetchLimits::FOLDER_SLACK;
constexpr size_t PrefetchLimits::LISTINGS_REMEMBERED;
constexpr size_t PrefetchLimits::FILES_PER_LISTING;

void QueryFiles::Clear() {
	MutexLock guard(lock);
	seen.clear();
}

bool QueryFiles::RememberLocked(const std::string &path) {
	if (seen.count(path) > 0) {
		return false;
	}
	if (seen.size() < PrefetchLimits::MAX_FILES_PER_QUERY) {
		seen.insert(path);
	}
	return true;
}

std::vector<OpenPrediction> QueryFiles::Unseen(std::vector<OpenPrediction> predictions, const std::string &opening) {
	MutexLock guard(lock);
	std::vector<OpenPrediction> unseen;
	for (auto &prediction : predictions) {
		if (RememberLocked(prediction.path)) {
			unseen.push_back(std::move(prediction));
		}
	}
	if (!opening.empty()) {
		RememberLocked(opening);
	}
	return unseen;
}

} // namespace httpfs2
