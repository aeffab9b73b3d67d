//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_ahead/read_ahead_registry.hpp
//
// The read-ahead of one wrapped filesystem: one ObjectReadAhead per object version that has open handles (so the
// threads of a scan, each with a handle of its own, share one prediction and one set of fetched ranges), and what
// was learned of files per object version: the layout (opaque here: its format's knowledge reads it), so a file
// reopened at the same version predicts from its first read, and a Parquet footer's bytes, so that its footer read is
// served without a request. DuckDB reads the footer at every open (bind, then each scan, of every query) unless its
// external file cache is on.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"
#include "core/read_ahead/object_read_ahead.hpp"
#include "core/read_ahead/version_key.hpp"

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
	//! Footer bytes remembered, in all (those of the least recently used versions dropped first) and per file.
	static constexpr uint64_t FOOTER_CACHE_BYTES = 16 * MiB;
	static constexpr uint64_t MAX_FOOTER_BYTES = MiB;
	//! Objects fetched ahead of any open (footers of listed files) kept at once; the oldest is closed first.
	static constexpr size_t MAX_PINNED = 128;

	//! Closes every object, waiting for their fetches in flight: call before the wrapped filesystem goes away.
	~ReadAheadRegistry();
	//! Closes every object now, waiting for their fetches in flight, and forgets them (layouts are kept). For when no
	//! connection is left to read: the wrapped filesystem's handles they hold must not outlive the database's
	//! logging, which the database tears down before its filesystems.
	void CloseAll();

	//! The object of `key` (path and version), created with `create` when none is open; counts one more handle.
	std::shared_ptr<ObjectReadAhead> Attach(const VersionKey &key,
	                                        const std::function<std::shared_ptr<ObjectReadAhead>()> &create);
	//! One handle fewer on `key`; the last one closes the object, freeing its read-ahead.
	void Detach(const VersionKey &key);
	//! An object for `key` that no handle has opened yet (a file a listing says will be opened soon), or nullptr
	//! when one exists already. It stays until a handle attaches, until it is unpinned, or until MAX_PINNED newer
	//! ones push it out.
	std::shared_ptr<ObjectReadAhead> Pin(const VersionKey &key,
	                                     const std::function<std::shared_ptr<ObjectReadAhead>()> &create);
	//! Closes the object of `key` if it is still pinned (no handle attached to it): the query that pinned it ended.
	void Unpin(const VersionKey &key);
	bool Contains(const VersionKey &key);

	//! What is remembered of `key` goes to every object created for it (Attach, Pin): its layout, and its footer
	//! bytes, held as if fetched. `key` must name the version by content (an ETag) for RememberFooter: the bytes are
	//! served without a request.
	void RememberLayout(const VersionKey &key, std::shared_ptr<const FileLayout> layout);
	//! Remembers `data`, the bytes of `range`, a read that ended at the end of the file (at most MAX_FOOTER_BYTES),
	//! unless a range covering it is remembered already.
	void RememberFooter(const VersionKey &key, const ByteRange &range, const char *data);
	//! Adds the bytes of `range` to the footer remembered for `key` when `range` reaches into it from before (the
	//! metadata DuckDB reads again when it did not fit in the first read from the end), within MAX_FOOTER_BYTES.
	void ExtendFooter(const VersionKey &key, const ByteRange &range, const char *data);
	std::shared_ptr<const FileLayout> KnownLayout(const VersionKey &key);
	//! Whether footer bytes are remembered for some version of the file at `path`.
	bool RemembersFooterOf(const std::string &path);
	//! Footer bytes remembered in all.
	uint64_t FooterBytes();

	size_t OpenObjects();

private:
	//! Closes an object no handle uses any more, without waiting for its fetches in flight.
	void Retire(std::shared_ptr<ObjectReadAhead> object);

	struct Entry {
		std::shared_ptr<ObjectReadAhead> object;
		size_t handles = 0;
		bool pinned = false;
	};
	struct Known {
		std::shared_ptr<const FileLayout> layout;
		ByteRange footer {0, 0};
		std::shared_ptr<const std::string> footer_bytes;
	};
	using KnownList = std::list<std::pair<VersionKey, Known>>;

	//! The entry of `key`, made the most recently used (created when missing); requires `lock`.
	Known &TouchLocked(const VersionKey &key) HTTPFS2_REQUIRES(lock);
	//! Drops entries and footers past the limits, least recently used first; requires `lock`.
	void TrimLocked() HTTPFS2_REQUIRES(lock);
	//! Gives a new object of `key` what is remembered of it (the layout only `with_layout`); requires `lock`.
	void ApplyKnownLocked(const VersionKey &key, ObjectReadAhead &object, bool with_layout) HTTPFS2_REQUIRES(lock);

	Mutex lock;
	std::unordered_map<VersionKey, Entry, VersionKey::Hash> objects HTTPFS2_GUARDED_BY(lock);
	//! Closed objects whose last fetches are still in flight: a closing handle does not wait for them (a query
	//! that stops reading must not pay for what it will never use), the registry's destruction does.
	std::vector<std::shared_ptr<ObjectReadAhead>> draining HTTPFS2_GUARDED_BY(lock);
	//! Keys of pinned entries, oldest first (may name entries a handle attached to since).
	std::list<VersionKey> pinned HTTPFS2_GUARDED_BY(lock);
	KnownList known HTTPFS2_GUARDED_BY(lock);
	std::unordered_map<VersionKey, KnownList::iterator, VersionKey::Hash> known_index HTTPFS2_GUARDED_BY(lock);
	uint64_t footer_bytes HTTPFS2_GUARDED_BY(lock) = 0;
};

} // namespace httpfs2
