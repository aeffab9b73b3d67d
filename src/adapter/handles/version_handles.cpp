#include "adapter/handles/version_handles.hpp"

namespace httpfs2 {

constexpr size_t VersionHandles::CAPACITY;

VersionHandles::~VersionHandles() {
	Clear();
}

std::shared_ptr<duckdb::FileHandle> VersionHandles::FindLocked(const VersionKey &version, uint64_t connection) {
	for (auto entry = handles.begin(); entry != handles.end(); ++entry) {
		if (entry->version == version && entry->connection == connection) {
			handles.splice(handles.begin(), handles, entry);
			return handles.front().handle;
		}
	}
	return nullptr;
}

std::shared_ptr<duckdb::FileHandle> VersionHandles::Get(const VersionKey &version, uint64_t connection,
                                                        const Opener &open) {
	{
		MutexLock guard(lock);
		if (auto kept = FindLocked(version, connection)) {
			return kept;
		}
	}
	std::shared_ptr<duckdb::FileHandle> opened(open().release());
	std::shared_ptr<duckdb::FileHandle> evicted;
	{
		MutexLock guard(lock);
		if (auto kept = FindLocked(version, connection)) {
			return kept; // another thread opened it meanwhile; ours is dropped
		}
		handles.push_front(Kept {version, connection, opened});
		if (handles.size() > CAPACITY) {
			evicted = std::move(handles.back().handle);
			handles.pop_back();
		}
	}
	return opened;
}

void VersionHandles::Clear() {
	std::list<Kept> dropped;
	{
		MutexLock guard(lock);
		dropped.swap(handles);
	}
}

} // namespace httpfs2
