#include "core/read_ahead_registry.hpp"

#include <algorithm>
#include <vector>

namespace httpfs2 {

constexpr size_t ReadAheadRegistry::LAYOUT_CACHE_ENTRIES;
constexpr size_t ReadAheadRegistry::MAX_PINNED;

ReadAheadRegistry::~ReadAheadRegistry() {
	CloseAll();
}

void ReadAheadRegistry::CloseAll() {
	std::vector<std::shared_ptr<ObjectReadAhead>> open;
	{
		std::lock_guard<std::mutex> guard(lock);
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
ReadAheadRegistry::Attach(const std::string &key, const std::function<std::shared_ptr<ObjectReadAhead>()> &create) {
	std::lock_guard<std::mutex> guard(lock);
	auto &entry = objects[key];
	if (!entry.object) {
		try {
			entry.object = create();
		} catch (...) {
			objects.erase(key);
			throw;
		}
		auto layout = layout_index.find(key);
		if (layout != layout_index.end()) {
			entry.object->UseLayout(layout->second->second);
		}
	}
	entry.handles++;
	entry.pinned = false;
	return entry.object;
}

std::shared_ptr<ObjectReadAhead>
ReadAheadRegistry::Pin(const std::string &key, const std::function<std::shared_ptr<ObjectReadAhead>()> &create) {
	std::shared_ptr<ObjectReadAhead> evicted;
	std::shared_ptr<ObjectReadAhead> object;
	{
		std::lock_guard<std::mutex> guard(lock);
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

bool ReadAheadRegistry::Contains(const std::string &key) {
	std::lock_guard<std::mutex> guard(lock);
	return objects.count(key) > 0;
}

void ReadAheadRegistry::Detach(const std::string &key) {
	std::shared_ptr<ObjectReadAhead> closing;
	{
		std::lock_guard<std::mutex> guard(lock);
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
	std::lock_guard<std::mutex> guard(lock);
	draining.erase(std::remove_if(draining.begin(), draining.end(),
	                              [](const std::shared_ptr<ObjectReadAhead> &done) { return !done->IsFetching(); }),
	               draining.end());
	if (fetching) {
		draining.push_back(std::move(object));
	}
}

void ReadAheadRegistry::RememberLayout(const std::string &key, std::shared_ptr<const ParquetLayout> layout) {
	std::lock_guard<std::mutex> guard(lock);
	auto known = layout_index.find(key);
	if (known != layout_index.end()) {
		layouts.erase(known->second);
	}
	layouts.emplace_front(key, std::move(layout));
	layout_index[key] = layouts.begin();
	if (layouts.size() > LAYOUT_CACHE_ENTRIES) {
		layout_index.erase(layouts.back().first);
		layouts.pop_back();
	}
}

std::shared_ptr<const ParquetLayout> ReadAheadRegistry::KnownLayout(const std::string &key) {
	std::lock_guard<std::mutex> guard(lock);
	auto known = layout_index.find(key);
	if (known == layout_index.end()) {
		return nullptr;
	}
	layouts.splice(layouts.begin(), layouts, known->second);
	return known->second->second;
}

size_t ReadAheadRegistry::OpenObjects() {
	std::lock_guard<std::mutex> guard(lock);
	return objects.size();
}

} // namespace httpfs2
