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
//   httpfs2-blocks-v1/<2 hex>/<16 hex>/<index>.blk    block <index> of one object version (core/cache/block_file), or
//                                                    its tail piece or a piece of a block (indices past any block:
//                                                    TailPieceIndex, PieceIndex)
//   httpfs2-blocks-v1/<2 hex>/<16 hex>/tmp-<pid>-<n>  a block being written, renamed onto its .blk name when done
//   httpfs2-blocks-v1/<2 hex>/<16 hex>/<index>.fetch  a process's claim on fetching that block (ClaimFetch): a hard
//                                                    link to its liveness file (a file naming it where links fail)
//   httpfs2-processes-v1/<pid>-<6 chars>             a process's liveness file, empty: the process holds a lock on it
//                                                    (flock) while its cache is open, which the kernel releases when
//                                                    the process dies, killed or not, reaped or not
//
//   httpfs2-versions-v1/...                          the versions learnt of objects (core/cache/version_records)
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
// The version records (httpfs2-versions-v1/) count against the same bound and are scanned and evicted with the
// blocks, least recently written or read first, so the whole directory keeps to the bound.
//
// Reads put blocks in the background (PutInBackground, core/cache/block_writer): the write to disk is never on a
// query's path. A write that fails (a full disk, a directory made unwritable) turns writes off for 30 s
// (WRITE_RETRY_NS): the readers that hand blocks over meanwhile are told, and stop using the cache for their file.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/cache/block_file.hpp"
#include "core/cache/block_writer.hpp"
#include "core/cache/fetching_blocks.hpp"
#include "core/cache/version_records.hpp"
#include "core/common/thread_annotations.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <sys/types.h>
#include <unistd.h>

namespace httpfs2 {

//! What the cache holds of one object version.
struct CachedObject {
	std::string path;
	std::string version;
	uint64_t blocks = 0;
	//! The blocks' bytes of the object (the files' headers not counted).
	uint64_t bytes = 0;
};

//! What one listing of an object version's folder found (BlockCache::ListFolder): the indices of its blocks and pieces
//! (files, not checked) and of the claims on fetching them, each sorted.
struct FolderListing {
	std::vector<uint64_t> held;
	std::vector<uint64_t> claims;
};

//! What one BlockCache did since it was opened (this process only).
struct BlockCacheCounters {
	uint64_t hits = 0;
	uint64_t misses = 0;
	uint64_t bytes_served = 0;
	//! The blocks' bytes stored on disk by this process (written in the background, so after the reads' return).
	uint64_t bytes_written = 0;
	uint64_t bytes_evicted = 0;
	//! Blocks not cached because the blocks waiting to be written held the pending bound already.
	uint64_t writes_skipped = 0;
	//! Blocks whose write failed (disk full, directory unwritable or gone).
	uint64_t write_failures = 0;
	//! Blocks found torn, truncated, of another key or length, or failing a checksum, and removed.
	uint64_t corrupt_blocks_removed = 0;
};

class BlockCache {
public:
	//! 256 KiB. When reads were widened to whole blocks, a block's size was what a read paid beyond its bytes: a
	//! Parquet projection fetched 2.2x its bytes with 1 MiB blocks, 1.3x with 256 KiB (bench warm, lineitem projection
	//! at region: 112 and 67 MiB for 51 MiB read); a read's ends are now kept as pieces of their blocks
	//! (core/cache/cached_read). A span of blocks is still one request; a 1 GB table is ~4000 files, which a directory
	//! scan (a stat each, once a second while writing) lists in milliseconds.
	static constexpr uint64_t BLOCK_SIZE = 256 * 1024;
	//! Bytes of blocks handed to the background writer and not yet written: a quarter of a second of a local disk's
	//! writes at 256 MiB/s, more than the link fills in that time at region speeds. Past it a block is not cached
	//! (counted, writes_skipped) rather than a read waiting for the disk.
	static constexpr uint64_t PENDING_LIMIT = 64 * 1024 * 1024;
	//! After a failed write, blocks are refused for this long (then tried again: a disk may have been freed).
	static constexpr int64_t WRITE_RETRY_NS = 30LL * 1000 * 1000 * 1000;

	//! Opens the cache in `directory` (created with its parents when missing), bounded by `max_bytes`, and evicts
	//! down to that bound. Null, with `error` naming the directory and the reason, when it cannot be created or
	//! written.
	static std::unique_ptr<BlockCache> Open(const std::string &directory, uint64_t max_bytes, std::string &error,
	                                        uint64_t pending_limit = PENDING_LIMIT);
	//! Writes the blocks still pending, then stops the writer.
	~BlockCache();

	//! Block `index` of `key`: bytes [index * BLOCK_SIZE, + length) of the object, where `length` is BLOCK_SIZE
	//! but for the object's last block, into `out`, from its file or, while it waits to be written, the bytes
	//! handed over. False on a miss; a block file that is not exactly this block is a miss and is removed.
	bool Get(const CacheKey &key, uint64_t index, uint64_t length, char *out);
	//! Stores the block (atomically: see above), then evicts when the cache is over its bound. False on any IO
	//! error (disk full, directory unwritable): the caller stops using the cache. Never throws for IO.
	bool Put(const CacheKey &key, uint64_t index, const char *data, uint64_t length);
	//! Hands the block to the background writer, which Puts it, and returns at once. `data` is kept until then. A
	//! block over the pending bound is not cached (counted). False while writes are failing (see WRITE_RETRY_NS):
	//! the caller stops using the cache, and LastWriteError says why.
	bool PutInBackground(const CacheKey &key, uint64_t index, SharedBytes data, uint64_t length);
	//! Waits until the blocks handed over before the call are written (or failed to be).
	void Flush();
	//! The reason of the last failed write ("" when none failed).
	std::string LastWriteError() const;
	//! Removes the blocks of every object whose path starts with `path_prefix` ("" removes all), those waiting to be
	//! written included, and the versions recorded of those paths; the bytes removed (blocks' files' sizes).
	uint64_t Clear(const std::string &path_prefix);
	//! Removes the blocks of every version of the object at exactly `path` that were not written or read since
	//! `before_ns` (CLOCK_REALTIME: when the object was written anew, so that blocks of its new version read since
	//! stay), those waiting to be written included; the bytes removed.
	uint64_t ClearPath(const std::string &path, int64_t before_ns);
	//! What all processes hold now, per object version, by path and version (this process's pending blocks written
	//! first).
	std::vector<CachedObject> Info();
	//! The bytes on disk now (files' sizes, headers included, as the bound counts them), from a scan of the
	//! directory, which also evicts when over the bound and removes temporary files left by writes killed over a
	//! minute ago.
	uint64_t HeldBytes();
	//! Whether block `index` of `key` has a file (not checked: a Get checks it) or waits to be written: a block
	//! already held need not be handed over again.
	bool Holds(const CacheKey &key, uint64_t index) const;
	//! One listing of `key`'s folder: what the pieces and claims of a block are looked up in (HeldIndices,
	//! ClaimedElsewhere). A read lists once and looks up in it as often as it needs (core/cache/cached_read): listing a
	//! folder of a few hundred blocks and pieces costs far more than a stat. The last listing of a folder is kept and
	//! given again while the folder's modification time (a stat) is what it was when that listing began, and was then
	//! over LISTING_SETTLED_NS old: a name made or removed since would have changed it (a warm scan lists each folder
	//! once, not at every read).
	FolderListing ListFolder(const CacheKey &key);
	//! How much older than a listing's start its folder's modification time must be for the listing to be kept: more
	//! than file systems' coarsest timestamps, so that a change in the same tick as the last one shows.
	static constexpr int64_t LISTING_SETTLED_NS = 100LL * 1000 * 1000;
	//! The indices in [first, end) of what the cache holds of `key`, on disk as `listing` found (not checked) or
	//! waiting to be written now: the pieces of a block (core/cache/cached_read).
	std::vector<uint64_t> HeldIndices(const CacheKey &key, const FolderListing &listing, uint64_t first, uint64_t end);
	//! The versions learnt of objects, with when (for a trust window), in the same directory.
	VersionRecords &Versions();
	//! The blocks this process's reads are fetching now (core/cache/cached_read waits for them).
	FetchingBlocks &Fetching();
	//! Claims the fetch of block `index` of `key` for this process, for the others to see: a hard link to this cache's
	//! liveness file beside the block, made exclusively (a name, no file of its own: a file made and removed per
	//! fetch was most of what the cache added to a cold glob), live while the file's lock is held. Where links
	//! cannot be made, a marker file naming the liveness file (its pid alone when there is none). False when another
	//! process's live claim is there (FetchedElsewhere): its block is waited for. A stale claim is replaced: its
	//! liveness file not locked (its process died: a zombie or a pid taken again by another process is dead too) or
	//! gone, for a claim naming a pid alone no such process, an empty marker for over CLAIM_WRITE_NS (its process died
	//! between making it and writing it), or a claim older than FETCH_CLAIM_NS (a link's age: since its process last
	//! made or ended a claim). A claim that cannot be made is no claim, and true (the caller fetches).
	bool ClaimFetch(const CacheKey &key, uint64_t index);
	//! Removes this process's claim on the block, if it holds one. The cache does so itself once the block handed
	//! over is written or refused; a read whose fetch failed does so at once.
	void EndFetchClaim(const CacheKey &key, uint64_t index);
	//! Whether a live claim of another process (or another BlockCache) on the block is there.
	bool FetchedElsewhere(const CacheKey &key, uint64_t index);
	//! The indices in [first, end) of `key` that other processes (or other BlockCaches) hold live claims on, of those
	//! `listing` found (each checked live now): the pieces of a block another process is fetching
	//! (core/cache/cached_read).
	std::vector<uint64_t> ClaimedElsewhere(const CacheKey &key, const FolderListing &listing, uint64_t first,
	                                       uint64_t end);
	//! A claim on a fetch is stale past this age: longer than a request's timeout (http_timeout 30 s) and its retries
	//! take in all but the worst cases, after which a waiter fetches the block itself.
	static constexpr int64_t FETCH_CLAIM_NS = 60LL * 1000 * 1000 * 1000;
	//! An empty claim is one being written (a few bytes, right after it was made) for this long, then a dead one.
	static constexpr int64_t CLAIM_WRITE_NS = 1000LL * 1000 * 1000;
	//! Versions().Record, the record counted against the bound (and evicted with the blocks, oldest first). A record
	//! of the same version learnt at most `fresh_ns` before `learnt_ns` is left as it is (true): a warm query proves
	//! the versions of all the files it opens, and rewriting each record (a file written and renamed over the old one)
	//! cost it more than reading their blocks. A record so left says the version was learnt earlier than it was last
	//! proven: a trust window that opens at it ends sooner, never later.
	bool RecordVersion(const std::string &path, const std::string &version, int64_t learnt_ns, int64_t fresh_ns = 0);
	//! How long a record stands before the same version proven again is written anew (RecordVersion's `fresh_ns`): at
	//! most RECORD_REFRESH_NS, and half of a trust window of `trust_seconds` (0: none in this session) so that a
	//! query repeated within the window keeps trusting.
	static int64_t RecordFreshNanoseconds(uint64_t trust_seconds);
	static constexpr int64_t RECORD_REFRESH_NS = 60LL * 1000 * 1000 * 1000;
	uint64_t MaxBytes() const;
	BlockCacheCounters Counters() const;
	//! Where block `index` of `key` is kept.
	std::string BlockFile(const CacheKey &key, uint64_t index) const;

private:
	struct ScannedBlock;

	BlockCache(const std::string &directory, uint64_t max_bytes, uint64_t pending_limit);
	std::string ObjectFolder(const CacheKey &key) const;
	bool WriteBlock(const CacheKey &key, uint64_t index, const char *data, uint64_t length);
	//! The writer's store: a Put, and on an IO error writes turned off for WRITE_RETRY_NS.
	void StorePending(const PendingBlock &block);
	bool WritesFailing() const;
	//! When the bytes counted cross the bound or the last scan is over a second old.
	bool ScanDue() const;
	void EvictIfDue();
	uint64_t ScanAndEvict();
	//! Lists every block and version record of all processes (removing stale temporary files), evicts the least
	//! recently used ones when over the bound, and resets the count of held bytes to what is left.
	uint64_t ScanAndEvictLocked() HTTPFS2_REQUIRES(scan_mutex);
	std::vector<ScannedBlock> ScanBlocks();
	//! ScanBlocks, and the version records' files: what the bound counts.
	std::vector<ScannedBlock> ScanBlocksAndRecords();
	//! The blocks in one object's folder; its temporary files older than a minute are removed, and the folder
	//! when it is empty.
	//! Stale fetch claims are removed too; with `claims`, the live ones are listed in it.
	void ScanObjectFolder(const std::string &folder, const char *suffix, int64_t now_ns,
	                      std::vector<ScannedBlock> &blocks, std::vector<std::string> *claims = nullptr) const;
	//! Whether the fetch claim `file` is live (ClaimFetch says when it is stale).
	bool ClaimLive(const std::string &file, int64_t now_ns) const;
	//! Whether this process made this cache's liveness file (and holds its lock).
	bool OwnsLiveness() const;
	//! Makes the claim `file` (ClaimFetch); false with errno when it cannot (EEXIST: another claim is there).
	bool MakeClaim(const std::string &file);
	//! Makes and locks this process's liveness file (none when it cannot: its claims then name its pid), and removes
	//! those of processes that died (unlocked and over a minute old: one just made is locked at once).
	void StartLiveness();
	std::vector<ScannedBlock> ScanBlocks(std::vector<std::string> *claims);
	std::string ClaimFile(const CacheKey &key, uint64_t index) const;
	//! Ends this process's claims on blocks of paths that `matches` and are not pending (dropped by a clear).
	void EndDroppedClaims(const std::function<bool(const std::string &)> &matches);
	uint64_t EvictLeastRecentlyUsed(std::vector<ScannedBlock> &blocks, uint64_t held);
	uint64_t RemoveBlocks(const std::vector<ScannedBlock> &blocks);
	//! Removes the blocks whose key's path `matches` (all blocks, unreadable ones included, with `all`), of those last
	//! written or read before `before_ns`.
	uint64_t ClearWhere(bool all, const std::function<bool(const std::string &)> &matches, int64_t before_ns);

	const std::string root;
	//! Where the liveness files of the processes using the cache are (httpfs2-processes-v1).
	const std::string processes;
	//! This cache's liveness file ("" when none) and the descriptor holding its lock, open until the cache goes.
	std::string liveness_name;
	int liveness_fd = -1;
	//! The process that opened the cache: a child forked without exec has a copy of it, not its liveness file, lock or
	//! claims (OwnsLiveness, the destructor).
	const pid_t opened_by = getpid();
	//! Whether claims are hard links to the liveness file (ClaimFetch), until the file system refuses one.
	std::atomic<bool> claims_link {true};
	const uint64_t max_bytes;
	VersionRecords versions;
	FetchingBlocks fetching;
	//! Held bytes as this process counts them: the last scan's total plus its writes since.
	std::atomic<uint64_t> counted_bytes {0};
	std::atomic<int64_t> last_scan_ns {0};
	std::atomic<uint64_t> temp_sequence {0};
	//! One scan at a time in this process: a second would find the same blocks to evict.
	Mutex scan_mutex;
	Mutex claims_mutex;
	//! A folder's last listing (ListFolder) and its modification time then.
	struct KeptListing {
		int64_t modified_ns;
		FolderListing listing;
	};
	Mutex listings_mutex;
	std::map<std::string, KeptListing> kept_listings HTTPFS2_GUARDED_BY(listings_mutex);
	//! The fetch claims this process made and holds, by their file.
	std::map<std::string, std::pair<CacheKey, uint64_t>> own_claims HTTPFS2_GUARDED_BY(claims_mutex);

	std::atomic<uint64_t> hits {0};
	std::atomic<uint64_t> misses {0};
	std::atomic<uint64_t> bytes_served {0};
	std::atomic<uint64_t> bytes_written {0};
	std::atomic<uint64_t> bytes_evicted {0};
	std::atomic<uint64_t> corrupt_blocks_removed {0};
	std::atomic<uint64_t> writes_skipped {0};
	std::atomic<uint64_t> write_failures {0};
	//! When the last write failed (CLOCK_MONOTONIC; 0: the last write succeeded), and its errno.
	std::atomic<int64_t> write_failed_ns {0};
	std::atomic<int> write_errno {0};

	//! Last, so it is destroyed first: its thread stores the pending blocks while all of the above is alive.
	std::unique_ptr<BlockWriter> writer;
};

} // namespace httpfs2
