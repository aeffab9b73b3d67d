#include "adapter/filesystem/version_handles.hpp"

namespace httpfs2 {

constexpr size_t VersionHandles::CAPACITY;

VersionHandles::~VersionHandles() {
	Clear();
}

std::shared_ptr<duckdb::FileHandle> VersionHandles::FindLocked(const std::string &key) {
	for (auto entry = handles.begin(); entry != handles.end(); ++entry) {
		if (entry->first == key) {
			handles.splice(handles.begin(), handles, entry);
			return handles.front().second;
		}
	}
	return nullptr;
}

std::shared_ptr<duckdb::FileHandle> VersionHandles::Get(const std::string &key, const Opener &open) {
	{
		std::lock_guard<std::mutex> guard(lock);
		if (auto kept = FindLocked(key)) {
			return kept;
		}
	}
	std::shared_ptr<duckdb::FileHandle> opened(open().release());
	std::shared_ptr<duckdb::FileHandle> evicted;
	{
		std::lock_guard<std::mutex> guard(lock);
		if (auto kept = FindLocked(key)) {
			return kept; // another thread opened it meanwhile; ours is dropped
		}
		handles.emplace_front(key, opened);
		if (handles.size() > CAPACITY) {
			evicted = std::move(handles.back().second);
			handles.pop_back();
		}
	}
	return opened;
}

void VersionHandles::Clear() {
	std::list<std::pair<std::string, std::shared_ptr<duckdb::FileHandle>>> dropped;
	{
		std::lock_guard<std::mutex> guard(lock);
		dropped.swap(handles);
	}
}

} // namespace httpfs2
