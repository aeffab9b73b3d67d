//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_ahead/version_key.hpp
//
// What read-ahead and what it remembers (layouts, footers) are shared under: one version of one object. Two opens
// share them only when path, ETag, modification time and size are all equal. A version without ETag is shared only
// by the opens of one query (`scope`), as httpfs shares what a query's first open of a file learnt: another version
// of the same size in the same second would look the same to a later query.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace httpfs2 {

struct VersionKey {
	std::string path;
	std::string etag;
	//! Microseconds since the epoch, as DuckDB's timestamp_t holds them.
	int64_t last_modified = 0;
	uint64_t size = 0;
	//! 0 for a version with an ETag; else the query whose opens share it, or (PER_OPEN set) a number no other open has.
	uint64_t scope = 0;
	static constexpr uint64_t PER_OPEN = 1ULL << 63;

	//! Whether other opens may find what was learnt under this key.
	bool Shared() const {
		return (scope & PER_OPEN) == 0;
	}

	bool operator==(const VersionKey &other) const {
		return path == other.path && etag == other.etag && last_modified == other.last_modified && size == other.size &&
		       scope == other.scope;
	}
	bool operator!=(const VersionKey &other) const {
		return !(*this == other);
	}

	struct Hash {
		size_t operator()(const VersionKey &key) const {
			size_t hash = std::hash<std::string>()(key.path);
			for (size_t part : {std::hash<std::string>()(key.etag), std::hash<int64_t>()(key.last_modified),
			                    std::hash<uint64_t>()(key.size), std::hash<uint64_t>()(key.scope)}) {
				hash ^= part + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
			}
			return hash;
		}
	};
};

} // namespace httpfs2
