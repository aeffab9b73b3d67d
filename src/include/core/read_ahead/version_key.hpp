//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_ahead/version_key.hpp
//
// What read-ahead and what it remembers (layouts, footers) are shared under: one version of one object. Two opens
// share them only when path, ETag, modification time and size are all equal; a version without ETag is its open's
// alone (`open` tells the opens apart), since another version of the same size in the same second looks the same.
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
	//! 0 for a version other opens can recognise (one with an ETag); else a number no other open has.
	uint64_t open = 0;

	bool operator==(const VersionKey &other) const {
		return path == other.path && etag == other.etag && last_modified == other.last_modified && size == other.size &&
		       open == other.open;
	}
	bool operator!=(const VersionKey &other) const {
		return !(*this == other);
	}

	struct Hash {
		size_t operator()(const VersionKey &key) const {
			size_t hash = std::hash<std::string>()(key.path);
			for (size_t part : {std::hash<std::string>()(key.etag), std::hash<int64_t>()(key.last_modified),
			                    std::hash<uint64_t>()(key.size), std::hash<uint64_t>()(key.open)}) {
				hash ^= part + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
			}
			return hash;
		}
	};
};

} // namespace httpfs2
