#include "core/prefetch/folder_predictor.hpp"

#include <algorithm>

namespace httpfs2 {

constexpr std::chrono::milliseconds FolderPredictor::GIVE_UP_CHECK;
constexpr std::chrono::seconds FolderPredictor::MAX_WAIT;

void FolderPredictor::Clear() {
	{
		MutexLock guard(lock);
		folders.clear();
		predicted.clear();
		listed_files = 0;
	}
	listing_done.notify_all();
}

FolderPredictor::Folder *FolderPredictor::FolderOf(const std::string &path) {
	auto name = path.substr(0, path.rfind('/') + 1);
	auto found = folders.find(name);
	if (found != folders.end()) {
		return &found->second;
	}
	return folders.size() < PrefetchLimits::MAX_FOLDERS_PER_QUERY ? &folders[name] : nullptr;
}

std::string FolderPredictor::ListAfter(const std::string &path) {
	MutexLock guard(lock);
	auto folder = FolderOf(path);
	if (!folder) {
		return std::string();
	}
	switch (folder->state) {
	case State::WATCHING:
		if (folder->first.empty()) {
			folder->first = path;
		} else if (path > folder->first) {
			folder->state = State::LISTING;
			folder->listing = true;
			return folder->first;
		}
		return std::string();
	case State::FOLLOWED: {
		auto at = folder->index.find(path);
		if (at == folder->index.end() || !folder->truncated || folder->extending ||
		    folder->files.size() - at->second > PrefetchLimits::FOOTERS_AHEAD) {
			return std::string();
		}
		folder->extending = true;
		folder->listing = true;
		return folder->files.back().path;
	}
	default:
		return std::string();
	}
}

bool FolderPredictor::Listed(const std::string &after, const std::string &path, std::vector<ListedPath> files,
                             bool truncated) {
	MutexLock guard(lock);
	auto folder = FolderOf(after);
	if (!folder) {
		return false;
	}
	if (folder->state == State::LISTING) {
		auto follows = std::find_if(files.begin(), files.begin() + std::min(PrefetchLimits::FOLDER_SLACK, files.size()),
		                            [&](const ListedPath &file) { return file.path == path; });
		if (follows == files.begin() + std::min(PrefetchLimits::FOLDER_SLACK, files.size())) {
			folder->state = State::NOT_FOLLOWED;
			return false;
		}
		folder->state = State::FOLLOWED;
	}
	if (folder->state != State::FOLLOWED) {
		return false;
	}
	folder->extending = false;
	folder->truncated = truncated && listed_files + files.size() < PrefetchLimits::MAX_FILES_PER_QUERY;
	for (auto &file : files) {
		if (listed_files < PrefetchLimits::MAX_FILES_PER_QUERY &&
		    folder->index.emplace(file.path, folder->files.size()).second) {
			folder->files.push_back(std::move(file));
			listed_files++;
		}
	}
	return true;
}

void FolderPredictor::ListingDone(const std::string &after) {
	{
		MutexLock guard(lock);
		auto folder = folders.find(after.substr(0, after.rfind('/') + 1));
		if (folder != folders.end()) {
			folder->second.listing = false;
		}
	}
	listing_done.notify_all();
}

bool FolderPredictor::AwaitListing(const std::string &path, const std::function<bool()> &give_up) {
	auto deadline = std::chrono::steady_clock::now() + MAX_WAIT;
	auto name = path.substr(0, path.rfind('/') + 1);
	bool waited = false;
	MutexLock guard(lock);
	while (std::chrono::steady_clock::now() < deadline) {
		// Looked up again after each wait: Clear() may have dropped the folder meanwhile.
		auto found = folders.find(name);
		if (found == folders.end()) {
			break;
		}
		auto &folder = found->second;
		if (!folder.listing || path <= folder.first || folder.index.count(path)) {
			break;
		}
		if (give_up && give_up()) {
			break;
		}
		waited = true;
		listing_done.wait_for(lock, GIVE_UP_CHECK);
	}
	return waited;
}

std::vector<OpenPrediction> FolderPredictor::Ahead(const std::string &path) {
	MutexLock guard(lock);
	auto folder = FolderOf(path);
	std::vector<OpenPrediction> ahead;
	if (!folder || folder->state != State::FOLLOWED) {
		return ahead;
	}
	auto at = folder->index.find(path);
	if (at == folder->index.end()) {
		return ahead;
	}
	auto end = std::min(folder->files.size(), at->second + 1 + PrefetchLimits::FOOTERS_AHEAD);
	for (auto index = at->second; index < end; index++) {
		if (predicted.insert(folder->files[index].path).second) {
			ahead.push_back(OpenPrediction::Footer(folder->files[index]));
		}
	}
	return ahead;
}

} // namespace httpfs2
