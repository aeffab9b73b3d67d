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

const std::vector<ListedPath> *ListingPredictor::FindLocked(const std::string &path, size_t &index) {
	for (auto &files : listings) {
		auto found =
		    std::find_if(files.begin(), files.end(), [&](const ListedPath &file) { return file.path == path; });
		if (found != files.end()) {
			index = static_cast<size_t>(found - files.begin());
			return &files;
		}
	}
	return nullptr;
}

std::vector<OpenPrediction> ListingPredictor::Opened(const std::string &path) {
	MutexLock guard(lock);
	size_t index;
	auto files = FindLocked(path, index);
	return files ? Footers(*files, index + 1) : std::vector<OpenPrediction>();
}

std::vector<OpenPrediction> ListingPredictor::ReadWhole(const std::string &path) {
	std::vector<OpenPrediction> contents;
	if (IsParquetPath(path)) {
		return contents;
	}
	MutexLock guard(lock);
	size_t index;
	auto files = FindLocked(path, index);
	if (!files) {
		return contents;
	}
	auto end = std::min(files->size(), index + 1 + PrefetchLimits::CONTENTS_AHEAD);
	for (auto next = index + 1; next < end; next++) {
		auto &file = (*files)[next];
		if (IsParquetPath(file.path) || !file.version_known || file.version.size == 0 ||
		    file.version.size > PrefetchLimits::MAX_CONTENTS_BYTES) {
			break; // the scan's files are alike: one that is not stops the prediction there
		}
		contents.push_back(OpenPrediction::Contents(file));
	}
	return contents;
}

} // namespace httpfs2
