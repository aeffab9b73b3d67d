//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/cache/cached_read.hpp
//
// One read of a remote object through the block cache: served from what is held when all of it is, otherwise fetched
// in one request, the bytes asked copied out and handed to the cache's background writer (the read returns without
// waiting for the disk): the blocks (aligned in the object, its last block short) the read covers whole, and of a
// block it covers only in part, at its ends, that part alone as a piece of the block. Widening a read's ends to whole
// blocks fetched bytes no read asked for: a cold glob aggregate of 64 Parquet files of 1.1 MB fetched 17.2 MiB where
// 14.3 MiB were asked (its three column chunks of a file lie in one block, of which they are 185 KiB), a projection
// 66.6 MiB for 51.4 MiB. A repeated query reads the same ranges, whose pieces serve it.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/cache/block_cache.hpp"
#include "core/common/io_stats.hpp"
#include "core/split/range_planner.hpp"

#include <functional>

namespace httpfs2 {

//! Fetches `range` of the object into its buffer; may update the key to the version the answer proved (an ETag
//! the open did not know). Throws as the fetch does.
using BlockFetch = std::function<void(const ByteRange &range, char *destination, CacheKey &key)>;

//! The blocks [first, end) of the object that `range` touches; `range` lies within the object's `object_size` bytes.
ByteRange BlockSpan(const ByteRange &range, uint64_t object_size);

//! Reads `range` of the object version `key` (`object_size` bytes) into `destination`: from the cache when every
//! block it touches is held, whole or as the piece the read wants of it (no fetch), else with one `fetch` from the
//! first one missing to the last (of a block at its ends, only the part it wants), which are then handed to the
//! cache's writer. Counts hits, misses and bytes served in `stats`. False when
//! the cache refuses blocks (its writes failed: disk full, directory gone): the bytes are right, the caller stops
//! using the cache. A block another read is fetching (in this process or, by its claim, in another; for a part of a
//! block, the block's fetch too, or pieces of it another process claimed that cover the part with what the cache
//! holds) is waited for until `cancelled` says so: BlockWaitCancelled.
bool ReadThroughBlockCache(BlockCache &cache, CacheKey key, uint64_t object_size, const ByteRange &range,
                           char *destination, IoStats &stats, const BlockFetch &fetch,
                           const CancelCheck &cancelled = nullptr);

//! Reads `range` of the object version `key` into `destination` from the cache when it holds every block the range
//! touches, whole or as the piece the range wants of it (counted as hits), and nothing else: false, with no miss
//! counted, when one is not held (or is found corrupt, then removed): the caller fetches the range itself. Waits as
//! ReadThroughBlockCache, for another process's live claim too (false when it ends without the block).
bool ReadHeldBlocks(BlockCache &cache, const CacheKey &key, uint64_t object_size, const ByteRange &range,
                    char *destination, IoStats &stats, const CancelCheck &cancelled = nullptr);

//! Hands the blocks of `key` that lie wholly within `held` (bytes of the object, e.g. a tail GET's) and that the cache
//! does not hold yet to its writer, copied. False when the cache refuses blocks (as ReadThroughBlockCache).
bool FillBlockCache(BlockCache &cache, const CacheKey &key, uint64_t object_size, const ByteRange &held,
                    const char *bytes);

//! The index under which `piece`, part of one block, is kept beside the object's blocks, named by its offset and
//! length: a read's end that wants only part of a block (ReadThroughBlockCache).
uint64_t PieceIndex(const ByteRange &piece);

//! The index under which the last `length` bytes of an object (at most a block's) are kept whole beside its blocks,
//! named by their length: a footer fetched as asked, where widening it to its block would fetch the rest of that block
//! for it alone (a cold glob of small files fetched half as much again for its footers' blocks).
uint64_t TailPieceIndex(uint64_t length);

//! Reads `range`, which lies within the last `piece_length` bytes of the object, from its tail piece of that length
//! when the cache holds it (counted as a hit); false otherwise, with no miss counted.
bool ReadHeldTailPiece(BlockCache &cache, const CacheKey &key, uint64_t object_size, uint64_t piece_length,
                       const ByteRange &range, char *destination, IoStats &stats);

//! For a read of the tail piece of `piece_length` bytes (`range`, exactly it) the cache missed: while another process
//! claims its fetch, waits for it and serves `range` from it (true); otherwise claims the fetch for this process
//! (BlockCache::ClaimFetch) and is false: the caller fetches and hands it to FillTailPiece, whose write ends the claim
//! (or ends it with EndFetchClaim). Throws BlockWaitCancelled once `cancelled` says so.
bool ReadTailPieceOrClaimIt(BlockCache &cache, const CacheKey &key, uint64_t object_size, uint64_t piece_length,
                            const ByteRange &range, char *destination, IoStats &stats,
                            const CancelCheck &cancelled = nullptr);

//! Hands the last `piece_length` bytes of the object to the cache's writer, copied, as its tail piece, from `bytes`
//! (the span `held` of the object, which must end with the object and cover them). False when the cache refuses
//! blocks (as ReadThroughBlockCache).
bool FillTailPiece(BlockCache &cache, const CacheKey &key, uint64_t object_size, uint64_t piece_length,
                   const ByteRange &held, const char *bytes);

} // namespace httpfs2
