//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_ahead_registry.hpp
//
// The read-ahead of one wrapped filesystem: one ObjectReadAhead per object version that has open handles (so the
// threads of a scan, each with a handle of its own, share one prediction and one set of fetched ranges), and the
// Parquet layouts learned from footers, so a file reopened at the same version predicts from its first read
// (DuckDB's external file cache serves a repeated footer read without reaching the filesystem).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/object_read_ahead.hpp"

#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace httpfs2 {

class ReadAheadRegistry {
public:
	//! Layouts of this many object versions are remembered (least recently used dropped first).
	static constexpr size_t LAYOUT_CACHE_ENTRIES = 1024;
	//! Objects fetched ahead of any open (footers of listed files) kept at once; the oldest is closed first.
	static constexpr size_t MAX_PINNED = 32;

	//! Closes every object, waiting for their fetches in flight: call before the wrapped filesystem goes away.
	~ReadAheadRegistry();
	//! Closes every object now, waiting for their fetches in flight, and forgets them (layouts are kept). For when no
	//! connection is left to read: the wrapped filesystem's handles they hold must not outlive the database's
	//! logging, which the database tears down before its filesystems.
	void CloseAll();

	//! The object of `key` (path and version), created with `create` when none is open; counts one more handle.
	std::shared_ptr<ObjectReadAhead> Attach(const std::string &key,
	                                        const std::function<std::shared_ptr<ObjectReadAhead>()> &create);
	//! One handle fewer on `key`; the last one closes the object, freeing its read-ahead.
	void Detach(const std::string &key);
	//! An object for `key` that no handle has opened yet (a file a listing says will be opened soon), or nullptr
	//! when one exists already. It stays until a handle attaches, or until MAX_PINNED newer ones push it out.
	std::shared_ptr<ObjectReadAhead> Pin(const std::string &key,
	                                     const std::function<std::shared_ptr<ObjectReadAhead>()> &create);
	bool Contains(const std::string &key);

	void RememberLayout(const std::string &key, std::shared_ptr<const ParquetLayout> layout);
	std::shared_ptr<const ParquetLayout> KnownLayout(const std::string &key);

	size_t OpenObjects();

private:
	//! Closes an object no handle uses any more, without waiting for its fetches in flight.
	void Retire(std::shared_ptr<ObjectReadAhead> object);

	struct Entry {
		std::shared_ptr<ObjectReadAhead> object;
		size_t handles = 0;
		bool pinned = false;
	};
	using LayoutList = std::list<std::pair<std::string, std::shared_ptr<const ParquetLayout>>>;

	std::mutex lock;
	std::unordered_map<std::string, Entry> objects;
	//! Closed objects whose last fetches are still in flight: a closing handle does not wait for them (a query
	//! that stops reading must not pay for what it will never use), the registry's destruction does.
	std::vector<std::shared_ptr<ObjectReadAhead>> draining;
	//! Keys of pinned entries, oldest first (may name entries a handle attached to since).
	std::list<std::string> pinned;
	LayoutList layouts;
	std::unordered_map<std::string, LayoutList::iterator> layout_index;
};

} // namespace httpfs2
