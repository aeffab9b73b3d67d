#include "adapter/prefetch/folder_prefetch.hpp"

#include "adapter/common/query_versions.hpp"

#include <algorithm>

namespace httpfs2 {

constexpr size_t FolderOrder::SLACK;
constexpr size_t FolderOrder::DEPTH;
constexpr size_t FolderOrder::MAX_FILES;
constexpr size_t FolderOrder::MAX_FOLDERS;

void FolderOrder::Clear() {
	MutexLock guard(lock);
	folders.clear();
	footers_asked.clear();
	listed_files = 0;
}

FolderOrder::Folder *FolderOrder::FolderOf(const std::string &path) {
	auto name = path.substr(0, path.rfind('/') + 1);
	auto found = folders.find(name);
	if (found != folders.end()) {
		return &found->second;
	}
	return folders.size() < MAX_FOLDERS ? &folders[name] : nullptr;
}

std::string FolderOrder::ListAfter(const std::string &path) {
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
			return folder->first;
		}
		return std::string();
	case State::FOLLOWED: {
		auto at = folder->index.find(path);
		if (at == folder->index.end() || !folder->truncated || folder->extending ||
		    folder->files.size() - at->second > DEPTH) {
			return std::string();
		}
		folder->extending = true;
		return folder->files.back().path;
	}
	default:
		return std::string();
	}
}

bool FolderOrder::Listed(const std::string &after, const std::string &path, std::vector<ListedFile> files,
                         bool truncated) {
	MutexLock guard(lock);
	auto folder = FolderOf(after);
	if (!folder) {
		return false;
	}
	if (folder->state == State::LISTING) {
		auto follows = std::find_if(files.begin(), files.begin() + std::min(SLACK, files.size()),
		                            [&](const ListedFile &file) { return file.path == path; });
		if (follows == files.begin() + std::min(SLACK, files.size())) {
			folder->state = State::NOT_FOLLOWED;
			return false;
		}
		folder->state = State::FOLLOWED;
	}
	if (folder->state != State::FOLLOWED) {
		return false;
	}
	folder->extending = false;
	folder->truncated = truncated && listed_files + files.size() < MAX_FILES;
	for (auto &file : files) {
		if (listed_files < MAX_FILES && folder->index.emplace(file.path, folder->files.size()).second) {
			folder->files.push_back(std::move(file));
			listed_files++;
		}
	}
	return true;
}

std::vector<ListedFile> FolderOrder::Ahead(const std::string &path) {
	MutexLock guard(lock);
	auto folder = FolderOf(path);
	std::vector<ListedFile> ahead;
	if (!folder || folder->state != State::FOLLOWED) {
		return ahead;
	}
	auto at = folder->index.find(path);
	if (at == folder->index.end()) {
		return ahead;
	}
	auto end = std::min(folder->files.size(), at->second + 1 + DEPTH);
	for (auto index = at->second; index < end; index++) {
		if (footers_asked.insert(folder->files[index].path).second) {
			ahead.push_back(folder->files[index]);
		}
	}
	return ahead;
}

void FolderPrefetch::Opening(const std::string &path, RemoteStore &store, ReadAheadWiring &read_ahead,
                             const ReadAheadTuning &tuning, duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto order = FolderOrder::Of(opener);
	auto query = QueryVersions::Of(opener);
	if (!order || !query) {
		return;
	}
	auto after = order->ListAfter(path);
	if (!after.empty()) {
		std::vector<ListedFile> listed;
		bool truncated = false;
		if (!store.ListAfter(after, opener, listed, truncated)) {
			listed.clear();
			truncated = false;
		}
		// Only the files a scan of Parquet files opens, at versions that name their bytes (as a tail's must).
		std::vector<ListedFile> files;
		for (auto &file : listed) {
			if (ReadAheadWiring::IsParquetPath(file.path) && file.version.IsContentHash()) {
				files.push_back(std::move(file));
			}
		}
		if (order->Listed(after, path, files, truncated)) {
			for (auto &file : files) {
				query->Learn(file.path, file.version);
			}
		}
	}
	for (auto &file : order->Ahead(path)) {
		read_ahead.PrefetchFooter(file.path, file.version, tuning, opener);
	}
}

} // namespace httpfs2
