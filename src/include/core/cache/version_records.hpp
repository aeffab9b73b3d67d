//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/cache/version_records.hpp
//
// The versions of remote objects the block cache learnt (from a tail GET, a listing, a HEAD), with when, kept on
// local disk beside the blocks and shared by every process using the directory: what lets a user who sets a trust
// window (httpfs2_cache_trust_seconds) open an object held in the cache with no request at all.
//
// On disk, under the cache's directory:
//
//   httpfs2-versions-v1/<2 hex>/<16 hex>.ver     the record of one path (<16 hex> = HashCacheKey({path, ""}))
//   httpfs2-versions-v1/<2 hex>/tmp-<pid>-<n>    a record being written, renamed onto its .ver name when done
//
//   offset  size  field
//        0     8  magic "h2fsver\n"
//        8     4  format version (1)
//       12     4  path length P
//       16     4  version length V
//       20     4  CRC-32C of the 32 header bytes (this field as 0), the path and the version
//       24     8  when the version was learnt (CLOCK_REALTIME, ns)
//       32     P  the path, then V bytes of the version (the adapter's encoding)
//
// A record is written whole to a temporary name and renamed, names its whole path and is checked on every read: a
// torn, truncated, corrupt or colliding record is no record (a torn one is removed). The last writer wins: a record
// is only ever the version some process learnt from the store at the time it says. Records count against the block
// cache's bound and are evicted with its blocks, least recently written first (BlockCache): an evicted record is no
// record, and its path's next open proves the version again.
//===----------------------------------------------------------------------===//

#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace httpfs2 {

class VersionRecords {
public:
	//! Records kept under `directory` (the cache's directory, not its blocks' folder).
	explicit VersionRecords(const std::string &directory);

	//! Records that `path` was at `version` at `learnt_ns` (CLOCK_REALTIME). False on an IO error (never throws).
	//! BlockCache::RecordVersion records and counts the record against the cache's bound.
	bool Record(const std::string &path, const std::string &version, int64_t learnt_ns);
	//! The size of the file a record of `path` at `version` is.
	static uint64_t RecordBytes(const std::string &path, const std::string &version);
	//! The folder the records are kept in (shards of record files: BlockCache's scans count and evict them).
	const std::string &Root() const;
	static const char *const RECORD_SUFFIX;
	//! The version of `path` learnt at or after `not_before_ns` and not after `now_ns` plus a second (a record from a
	//! clock set back is not believed), into `version`. False when there is none, it is older, or it is not valid.
	bool Find(const std::string &path, int64_t not_before_ns, int64_t now_ns, std::string &version);
	//! Removes the record of exactly `path`.
	void Forget(const std::string &path);
	//! Removes the records of every path starting with `path_prefix` ("" removes all, unreadable ones included).
	void ForgetPrefix(const std::string &path_prefix);

private:
	std::string RecordFile(const std::string &path) const;

	const std::string root;
	std::atomic<uint64_t> temp_sequence {0};
};

} // namespace httpfs2
