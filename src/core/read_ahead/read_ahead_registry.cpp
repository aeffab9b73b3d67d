#include "core/read_ahead/read_ahead_registry.hpp"

#include <algorithm>
#include <vector>

namespace httpfs2 {

constexpr size_t ReadAheadRegistry::LAYOUT_CACHE_ENTRIES;
constexpr size_t ReadAheadRegistry::MAX_PINNED;
constexpr uint64_t ReadAheadRegistry::FOOTER_CACHE_BYTES;
constexpr uint64_t ReadAheadRegistry::MAX_FOOTER_BYTES;

ReadAheadRegistry::~ReadAheadRegistry() {
	CloseAll();
}

void ReadAheadRegistry::CloseAll() {
	std::vector<std::shared_ptr<ObjectReadAhead>> open;
	{
		MutexLock guard(lock);
		for (auto &entry : objects) {
			open.push_back(entry.second.object);
		}
		objects.clear();
		open.insert(open.end(), draining.begin(), draining.end());
		draining.clear();
		pinned.clear();
	}
	for (auto &object : open) {
		object->Close();
	}
}

std::shared_ptr<ObjectReadAhead>
ReadAheadRegistry::Attach(const VersionKey &key, const std::function<std::shared_ptr<ObjectReadAhead>()> &create) {
	MutexLock guard(lock);
	auto &entry = objects[key];
	if (!entry.object) {
		try {
			entry.object = create();
		} catch (...) {
			objects.erase(key);
			throw;
		}
		ApplyKnownLocked(key, *entry.object, true);
	}
	entry.handles++;
	entry.pinned = false;
	return entry.object;
}

std::shared_ptr<ObjectReadAhead>
ReadAheadRegistry::Pin(const VersionKey &key, const std::function<std::shared_ptr<ObjectReadAhead>()> &create) {
	std::shared_ptr<ObjectReadAhead> evicted;
	std::shared_ptr<ObjectReadAhead> object;
	{
		MutexLock guard(lock);
		if (objects.count(key) > 0) {
			return nullptr;
		}
		if (pinned.size() >= MAX_PINNED) {
			auto oldest = objects.find(pinned.front());
			if (oldest != objects.end() && oldest->second.pinned) {
				evicted = std::move(oldest->second.object);
				objects.erase(oldest);
			}
			pinned.pop_front();
		}
		object = create();
		// Without the layout: the footer, once prefetched (from these bytes), is parsed as one fetched ahead of any
		// reader, which fetches the first row group too.
		ApplyKnownLocked(key, *object, false);
		auto &entry = objects[key];
		entry.object = object;
		entry.pinned = true;
		pinned.push_back(key);
	}
	if (evicted) {
		Retire(std::move(evicted));
	}
	return object;
}

void ReadAheadRegistry::Unpin(const VersionKey &key) {
	std::shared_ptr<ObjectReadAhead> unpinned;
	{
		MutexLock guard(lock);
		auto entry = objects.find(key);
		if (entry == objects.end() || !entry->second.pinned) {
			return;
		}
		unpinned = std::move(entry->second.object);
		objects.erase(entry);
		pinned.remove(key);
	}
	Retire(std::move(unpinned));
}

bool ReadAheadRegistry::Contains(const VersionKey &key) {
	MutexLock guard(lock);
	return objects.count(key) > 0;
}

void ReadAheadRegistry::Detach(const VersionKey &key) {
	std::shared_ptr<ObjectReadAhead> closing;
	{
		MutexLock guard(lock);
		auto entry = objects.find(key);
		if (entry == objects.end() || --entry->second.handles > 0) {
			return;
		}
		closing = std::move(entry->second.object);
		objects.erase(entry);
	}
	Retire(std::move(closing));
}

void ReadAheadRegistry::Retire(std::shared_ptr<ObjectReadAhead> object) {
	bool fetching = object->Abandon();
	MutexLock guard(lock);
	draining.erase(std::remove_if(draining.begin(), draining.end(),
	                              [](const std::shared_ptr<ObjectReadAhead> &done) { return !done->IsFetching(); }),
	               draining.end());
	if (fetching) {
		draining.push_back(std::move(object));
	}
}

ReadAheadRegistry::Known &ReadAheadRegistry::TouchLocked(const VersionKey &key) {
	auto position = known_index.find(key);
	if (position != known_index.end()) {
		known.splice(known.begin(), known, position->second);
	} else {
		known.emplace_front(key, Known());
		known_index[key] = known.begin();
	}
	return known.front().second;
}

void ReadAheadRegistry::TrimLocked() {
	while (known.size() > LAYOUT_CACHE_ENTRIES) {
		footer_bytes -= known.back().second.footer.length;
		known_index.erase(known.back().first);
		known.pop_back();
	}
	for (auto position = known.rbegin(); footer_bytes > FOOTER_CACHE_BYTES && position != known.rend(); ++position) {
		footer_bytes -= position->second.footer.length;
		position->second.footer = ByteRange {0, 0};
		position->second.footer_bytes.reset();
	}
}

void ReadAheadRegistry::ApplyKnownLocked(const VersionKey &key, ObjectReadAhead &object, bool with_layout) {
	if (known_index.count(key) == 0) {
		return;
	}
	auto &entry = TouchLocked(key);
	if (entry.layout && with_layout) {
		object.UseLayout(entry.layout);
	}
	if (entry.footer_bytes) {
		object.Hold(entry.footer, *entry.footer_bytes);
	}
}

void ReadAheadRegistry::RememberLayout(const VersionKey &key, std::shared_ptr<const FileLayout> layout) {
	MutexLock guard(lock);
	TouchLocked(key).layout = std::move(layout);
	TrimLocked();
}

void ReadAheadRegistry::RememberFooter(const VersionKey &key, const ByteRange &range, const char *data) {
	if (range.length == 0 || range.length > MAX_FOOTER_BYTES) {
		return;
	}
	MutexLock guard(lock);
	auto &entry = TouchLocked(key);
	if (entry.footer_bytes && entry.footer.offset <= range.offset && entry.footer.End() >= range.End()) {
		return;
	}
	footer_bytes -= entry.footer.length;
	entry.footer = range;
	entry.footer_bytes = std::make_shared<const std::string>(data, range.length);
	footer_bytes += range.length;
	TrimLocked();
}

void ReadAheadRegistry::ExtendFooter(const VersionKey &key, const ByteRange &range, const char *data) {
	MutexLock guard(lock);
	auto position = known_index.find(key);
	if (position == known_index.end()) {
		return;
	}
	auto &entry = position->second->second;
	if (!entry.footer_bytes || range.offset >= entry.footer.offset || range.End() < entry.footer.offset ||
	    entry.footer.End() - range.offset > MAX_FOOTER_BYTES) {
		return;
	}
	auto bytes = std::make_shared<std::string>(data, entry.footer.offset - range.offset);
	bytes->append(*entry.footer_bytes);
	footer_bytes += entry.footer.offset - range.offset;
	entry.footer = ByteRange {range.offset, bytes->size()};
	entry.footer_bytes = std::move(bytes);
	TouchLocked(key);
	TrimLocked();
}

std::shared_ptr<const FileLayout> ReadAheadRegistry::KnownLayout(const VersionKey &key) {
	MutexLock guard(lock);
	if (known_index.count(key) == 0) {
		return nullptr;
	}
	return TouchLocked(key).layout;
}

bool ReadAheadRegistry::RemembersFooterOf(const std::string &path) {
	MutexLock guard(lock);
	for (auto &entry : known) {
		if (entry.second.footer_bytes && entry.first.path == path) {
			return true;
		}
	}
	return false;
}

uint64_t ReadAheadRegistry::FooterBytes() {
	MutexLock guard(lock);
	return footer_bytes;
}

size_t ReadAheadRegistry::OpenObjects() {
	MutexLock guard(lock);
	return objects.size();
}

} // namespace httpfs2
