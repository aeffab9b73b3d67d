#include "adapter/filesystem/listing_memory.hpp"

#include <algorithm>

namespace httpfs2 {

constexpr size_t ListingMemory::MAX_FILES;
constexpr size_t ListingMemory::MAX_LISTINGS;
constexpr size_t ListingMemory::DEPTH;

void ListingMemory::Remember(std::vector<duckdb::OpenFileInfo> files) {
	if (files.size() < 2) {
		return;
	}
	std::lock_guard<std::mutex> guard(lock);
	listings.push_front(std::move(files));
	if (listings.size() > MAX_LISTINGS) {
		listings.pop_back();
	}
}

std::vector<duckdb::OpenFileInfo> ListingMemory::After(const std::string &path) {
	std::lock_guard<std::mutex> guard(lock);
	for (auto &files : listings) {
		auto found = std::find_if(files.begin(), files.end(),
		                          [&](const duckdb::OpenFileInfo &file) { return file.path == path; });
		if (found != files.end()) {
			auto first = found + 1;
			auto last = first + static_cast<std::ptrdiff_t>(std::min<size_t>(DEPTH, files.end() - first));
			return std::vector<duckdb::OpenFileInfo>(first, last);
		}
	}
	return {};
}

} // namespace httpfs2
