#include "core/prefetch/listing_predictor.hpp"

#include "core/formats/parquet_layout.hpp"

#include <algorithm>

namespace httpfs2 {

std::vector<OpenPrediction> ListingPredictor::Footers(const std::vector<ListedPath> &files, size_t first) {
	std::vector<OpenPrediction> footers;
	auto end = std::min(files.size(), first + PrefetchLimits::FOOTERS_AHEAD);
	for (auto index = first; index < end; index++) {
		if (IsParquetPath(files[index].path)) {
			footers.push_back(OpenPrediction::Footer(files[index]));
		}
	}
	return footers;
}

std::vector<OpenPrediction> ListingPredictor::Listed(std::vector<ListedPath> files, bool scan_reads_them) {
	if (files.size() < 2) {
		return {};
	}
	if (files.size() > PrefetchLimits::FILES_PER_LISTING) {
		files.resize(PrefetchLimits::FILES_PER_LISTING);
	}
	auto first = scan_reads_them ? Footers(files, 0) : std::vector<OpenPrediction>();
	MutexLock guard(lock);
	listings.push_front(std::move(files));
	if (listings.size() > PrefetchLimits::LISTINGS_REMEMBERED) {
		listings.pop_back();
	}
	return first;
}

std::vector<OpenPrediction> ListingPredictor::Opened(const std::string &path) {
	MutexLock guard(lock);
	for (auto &files : listings) {
		auto found =
		    std::find_if(files.begin(), files.end(), [&](const ListedPath &file) { return file.path == path; });
		if (found != files.end()) {
			return Footers(files, static_cast<size_t>(found - files.begin()) + 1);
		}
	}
	return {};
}

} // namespace httpfs2
