//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/cache/block_cache.hpp
//
// Fixed-size blocks of remote objects kept on local disk, keyed by the object's path and version, bounded in
// size, and shared by every process that opens the same directory (two DuckDB processes, CLI and Python).
//
// On disk, under the directory given:
//
//   httpfs2-blocks-v1/<2 hex>/<16 hex>/<index>.blk    block <index> of one object version (core/cache/block_file)
//   httpfs2-blocks-v1/<2 hex>/<16 hex>/tmp-<pid>-<n>  a block being written, renamed onto its .blk name when done
//
// <16 hex> is HashCacheKey(key), and <2 hex> its first two digits, so no folder holds more than a few thousand
// entries. Processes agree through the files alone: a block is renamed in whole (readers see it all or not at
// all), every block names its key and carries checksums (a torn, corrupt or colliding block is a miss and is
// removed), and recency is each block's modification time, set when written and when read, so least recently used
// means the same to all processes. A block another process removed is a miss. A temporary file older than a minute
// is a write that was killed: the next scan removes it.
//
// The bound: each process counts what it writes on top of what its last scan of the directory found, and scans
// again (evicting the least recently used blocks down to 90% of the bound) when that count crosses the bound, and
// at least once a second while it writes, to see what the others wrote. So the cache holds at most the bound plus
// the blocks being written at once, plus, with several processes, what the others wrote within their last second.
// Processes that open one directory with different bounds each evict down to their own: the smallest one wins.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/cache/block_file.hpp"
#include "core/common/thread_annotations.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace httpfs2 {

//! What the cache holds of one object version.
struct CachedObject {
	std::string path;
	std::string version;
	uint64_t blocks = 0;
	//! The blocks' bytes of the object (the files' headers not counted).
	uint64_t bytes = 0;
};

//! What one BlockCache did since it was opened (this process only).
struct BlockCacheCounters {
	uint64_t hits = 0;
	uint64_t misses = 0;
	uint64_t bytes_served = 0;
	uint64_t bytes_written = 0;
	uint64_t bytes_evicted = 0;
	//! Blocks found torn, truncated, of another key or length, or failing a checksum, and removed.
	uint64_t corrupt_blocks_removed = 0;
};

class BlockCache {
public:
	//! 1 MiB: about what one stream transfers in one first-byte latency (~90 MiB/s a stream, ~10 ms to the first
	//! byte), so fetching a whole block for a smaller read costs little over the bytes asked, while a 1 GB table is
	//! ~1000 files, few enough for a directory scan to list and for eviction to sort.
	static constexpr uint64_t BLOCK_SIZE = 1024 * 1024;

	//! Opens the cache in `directory` (created with its parents when missing), bounded by `max_bytes`, and evicts
	//! down to that bound. Null, with `error` naming the directory and the reason, when it cannot be created or
	//! written.
	static std::unique_ptr<BlockCache> Open(const std::string &directory, uint64_t max_bytes, std::string &error);

	//! Block `index` of `key`: bytes [index * BLOCK_SIZE, + length) of the object, where `length` is BLOCK_SIZE
	//! but for the object's last block, into `out`. False on a miss; a block file that is not exactly this block
	//! is a miss and is removed.
	bool Get(const CacheKey &key, uint64_t index, uint64_t length, char *out);
	//! Stores the block (atomically: see above), then evicts when the cache is over its bound. False on any IO
	//! error (disk full, directory unwritable): the caller stops using the cache. Never throws for IO.
	bool Put(const CacheKey &key, uint64_t index, const char *data, uint64_t length);
	//! Removes the blocks of every object whose path starts with `path_prefix` ("" removes all); the bytes removed
	//! (files' sizes).
	uint64_t Clear(const std::string &path_prefix);
	//! Removes the blocks of every version of the object at exactly `path` that were not written or read since
	//! `before_ns` (CLOCK_REALTIME: when the object was written anew, so that blocks of its new version read since
	//! stay); the bytes removed.
	uint64_t ClearPath(const std::string &path, int64_t before_ns);
	//! What all processes hold now, per object version, by path and version.
	std::vector<CachedObject> Info();
	//! The bytes on disk now (files' sizes, headers included, as the bound counts them), from a scan of the
	//! directory, which also evicts when over the bound and removes temporary files left by writes killed over a
	//! minute ago.
	uint64_t HeldBytes();
	uint64_t MaxBytes() const;
	BlockCacheCounters Counters() const;
	//! Where block `index` of `key` is kept.
	std::string BlockFile(const CacheKey &key, uint64_t index) const;

private:
	struct ScannedBlock;

	BlockCache(std::string root, uint64_t max_bytes);
	std::string ObjectFolder(const CacheKey &key) const;
	bool WriteBlock(const CacheKey &key, uint64_t index, const char *data, uint64_t length);
	//! When the bytes counted cross the bound or the last scan is over a second old.
	bool ScanDue() const;
	void EvictIfDue();
	uint64_t ScanAndEvict();
	//! Lists every block of all processes (removing stale temporary files), evicts the least recently used ones
	//! when over the bound, and resets the count of held bytes to what is left.
	uint64_t ScanAndEvictLocked() HTTPFS2_REQUIRES(scan_mutex);
	std::vector<ScannedBlock> ScanBlocks();
	//! The blocks in one object's folder; its temporary files older than a minute are removed, and the folder
	//! when it is empty.
	static void ScanObjectFolder(const std::string &folder, int64_t now_ns, std::vector<ScannedBlock> &blocks);
	uint64_t EvictLeastRecentlyUsed(std::vector<ScannedBlock> &blocks, uint64_t held);
	uint64_t RemoveBlocks(const std::vector<ScannedBlock> &blocks);
	//! Removes the blocks whose key's path `matches` (all blocks, unreadable ones included, with `all`), of those last
	//! written or read before `before_ns`.
	uint64_t ClearWhere(bool all, const std::function<bool(const std::string &)> &matches, int64_t before_ns);

	const std::string root;
	const uint64_t max_bytes;
	//! Held bytes as this process counts them: the last scan's total plus its writes since.
	std::atomic<uint64_t> counted_bytes {0};
	std::atomic<int64_t> last_scan_ns {0};
	std::atomic<uint64_t> temp_sequence {0};
	//! One scan at a time in this process: a second would find the same blocks to evict.
	Mutex scan_mutex;

	std::atomic<uint64_t> hits {0};
	std::atomic<uint64_t> misses {0};
	std::atomic<uint64_t> bytes_served {0};
	std::atomic<uint64_t> bytes_written {0};
	std::atomic<uint64_t> bytes_evicted {0};
	std::atomic<uint64_t> corrupt_blocks_removed {0};
};

} // namespace httpfs2
