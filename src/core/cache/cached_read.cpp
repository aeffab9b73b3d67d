#include "core/cache/cached_read.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace httpfs2 {

namespace {
constexpr uint64_t BLOCK = BlockCache::BLOCK_SIZE;

uint64_t BlockLength(uint64_t index, uint64_t object_size) {
	return std::min(BLOCK, object_size - index * BLOCK);
}

//! Copies what `range` wants of the bytes `held` (a span of the object) into `destination`; the bytes copied.
uint64_t CopyOverlap(const ByteRange &held, const char *bytes, const ByteRange &range, char *destination) {
	auto start = std::max(held.offset, range.offset);
	auto end = std::min(held.End(), range.End());
	if (start >= end) {
		return 0;
	}
	std::memcpy(destination + (start - range.offset), bytes + (start - held.offset), end - start);
	return end - start;
}

ByteRange BlockRange(uint64_t index, uint64_t object_size) {
	return ByteRange {index * BLOCK, BlockLength(index, object_size)};
}

//! Another read's fetch of block `index`, waited for.
struct AwaitedBlock {
	uint64_t index;
	std::shared_ptr<FetchingBlocks::Fetch> fetch;
};

//! Fetches blocks [first, last] whole, copies what `range` wants of them into `destination`, hands them to the
//! cache's writer, then ends the claims on them (`claims`, when given) with their bytes. False when the cache refused
//! them.
bool FetchBlocks(BlockCache &cache, CacheKey key, uint64_t object_size, uint64_t first, uint64_t last,
                 const ByteRange &range, char *destination, const BlockFetch &fetch, BlockClaims *claims) {
	auto fetch_end = std::min(object_size, (last + 1) * BLOCK);
	ByteRange fetched {first * BLOCK, fetch_end - first * BLOCK};
	// Into a buffer of the cache's, never the caller's: the blocks keep it until the writer has stored them, while
	// the caller's memory may be freed as soon as this returns (a cancelled query).
	std::shared_ptr<char> bytes(new char[fetched.length], std::default_delete<char[]>());
	fetch(fetched, bytes.get(), key);
	CopyOverlap(fetched, bytes.get(), range, destination);
	bool kept = true;
	std::vector<SharedBytes> blocks;
	for (auto index = first; index <= last; index++) {
		// Each block shares the buffer (aliasing: it points at its own bytes, the buffer goes with the last block).
		blocks.emplace_back(bytes, bytes.get() + (index * BLOCK - fetched.offset));
		kept = kept && cache.PutInBackground(key, index, blocks.back(), BlockLength(index, object_size));
	}
	// After the hand-over: a read that finds no fetch under way once these end finds the blocks pending.
	for (auto index = first; claims && index <= last; index++) {
		claims->End(index, std::move(blocks[index - first]));
	}
	return kept;
}
} // namespace

ByteRange BlockSpan(const ByteRange &range, uint64_t object_size) {
	auto start = range.offset / BLOCK * BLOCK;
	auto end = std::min(object_size, (range.End() + BLOCK - 1) / BLOCK * BLOCK);
	return ByteRange {start, end - start};
}

bool ReadThroughBlockCache(BlockCache &cache, CacheKey key, uint64_t object_size, const ByteRange &range,
                           char *destination, IoStats &stats, const BlockFetch &fetch, const CancelCheck &cancelled) {
	if (range.length == 0) {
		return true;
	}
	auto span = BlockSpan(range, object_size);
	auto first = span.offset / BLOCK;
	auto end = (span.End() + BLOCK - 1) / BLOCK;
	// Blocks held are copied out at once.
	std::vector<uint64_t> missing;
	uint64_t served = 0;
	std::unique_ptr<char[]> block(new char[BLOCK]);
	for (auto index = first; index < end; index++) {
		if (cache.Get(key, index, BlockLength(index, object_size), block.get())) {
			stats.Add(Counter::CACHE_HITS);
			served += CopyOverlap(BlockRange(index, object_size), block.get(), range, destination);
			continue;
		}
		stats.Add(Counter::CACHE_MISSES);
		missing.push_back(index);
	}
	// A missing block another read is fetching is waited for, not fetched twice; the others are claimed.
	BlockClaims claims(cache.Fetching(), key);
	std::vector<AwaitedBlock> awaited;
	std::vector<uint64_t> claimed;
	for (auto index : missing) {
		auto other = claims.Claim(index);
		if (other) {
			awaited.push_back(AwaitedBlock {index, std::move(other)});
		} else if (cache.Get(key, index, BlockLength(index, object_size), block.get())) {
			// A fetch that ended between the miss and the claim: its block is in the cache now.
			served += CopyOverlap(BlockRange(index, object_size), block.get(), range, destination);
			claims.End(index, nullptr);
		} else {
			claimed.push_back(index);
		}
	}
	bool kept = true;
	if (!claimed.empty()) {
		// One fetch from the first block claimed to the last: the blocks between that others fetch are fetched here
		// too (one request, not two), and not waited for.
		auto first_claimed = claimed.front();
		auto last_claimed = claimed.back();
		awaited.erase(std::remove_if(awaited.begin(), awaited.end(),
		                             [&](const AwaitedBlock &other) {
			                             return other.index >= first_claimed && other.index <= last_claimed;
		                             }),
		              awaited.end());
		kept = FetchBlocks(cache, key, object_size, first_claimed, last_claimed, range, destination, fetch, &claims);
	}
	std::vector<uint64_t> failed;
	for (auto &other : awaited) {
		auto bytes = other.fetch->Wait(cancelled);
		if (!bytes) {
			failed.push_back(other.index); // that fetch failed: this read fetches the block itself
			continue;
		}
		stats.Add(Counter::CACHE_FETCHES_SHARED);
		CopyOverlap(BlockRange(other.index, object_size), bytes.get(), range, destination);
	}
	if (!failed.empty()) {
		kept =
		    FetchBlocks(cache, key, object_size, failed.front(), failed.back(), range, destination, fetch, nullptr) &&
		    kept;
	}
	stats.Add(Counter::CACHE_BYTES_SERVED, served);
	return kept;
}

bool ReadHeldBlocks(BlockCache &cache, const CacheKey &key, uint64_t object_size, const ByteRange &range,
                    char *destination, IoStats &stats, const CancelCheck &cancelled) {
	auto span = BlockSpan(range, object_size);
	auto first = span.offset / BLOCK;
	auto end = (span.End() + BLOCK - 1) / BLOCK;
	// A block being fetched by another read is as good as held: its bytes are waited for.
	std::vector<AwaitedBlock> awaited;
	for (auto index = first; index < end; index++) {
		if (cache.Holds(key, index)) {
			continue;
		}
		auto fetch = cache.Fetching().Find(key, index);
		if (!fetch) {
			return false;
		}
		awaited.push_back(AwaitedBlock {index, std::move(fetch)});
	}
	for (auto &other : awaited) {
		auto bytes = other.fetch->Wait(cancelled);
		if (!bytes) {
			return false;
		}
		CopyOverlap(BlockRange(other.index, object_size), bytes.get(), range, destination);
	}
	std::unique_ptr<char[]> block(new char[BLOCK]);
	uint64_t served = 0;
	auto next_awaited = awaited.begin();
	for (auto index = first; index < end; index++) {
		if (next_awaited != awaited.end() && next_awaited->index == index) {
			next_awaited++;
			continue;
		}
		if (!cache.Get(key, index, BlockLength(index, object_size), block.get())) {
			return false; // removed meanwhile, or corrupt (and removed now)
		}
		served += CopyOverlap(BlockRange(index, object_size), block.get(), range, destination);
	}
	stats.Add(Counter::CACHE_HITS, end - first - awaited.size());
	stats.Add(Counter::CACHE_FETCHES_SHARED, awaited.size());
	stats.Add(Counter::CACHE_BYTES_SERVED, served);
	return true;
}

bool FillBlockCache(BlockCache &cache, const CacheKey &key, uint64_t object_size, const ByteRange &held,
                    const char *bytes) {
	if (held.End() > object_size) {
		return true;
	}
	for (auto index = (held.offset + BLOCK - 1) / BLOCK; index * BLOCK < held.End(); index++) {
		auto length = BlockLength(index, object_size);
		if (index * BLOCK + length > held.End() || cache.Holds(key, index)) {
			continue;
		}
		std::shared_ptr<char> block(new char[length], std::default_delete<char[]>());
		std::memcpy(block.get(), bytes + (index * BLOCK - held.offset), length);
		if (!cache.PutInBackground(key, index, std::move(block), length)) {
			return false;
		}
	}
	return true;
}

uint64_t TailPieceIndex(uint64_t length) {
	// Far past any block of an object (an index is its offset over 256 KiB).
	return (uint64_t(1) << 62) + length;
}

bool ReadHeldTailPiece(BlockCache &cache, const CacheKey &key, uint64_t object_size, uint64_t piece_length,
                       const ByteRange &range, char *destination, IoStats &stats) {
	if (piece_length == 0 || piece_length > std::min(BLOCK, object_size) || range.offset < object_size - piece_length ||
	    range.End() > object_size) {
		return false;
	}
	std::unique_ptr<char[]> piece(new char[piece_length]);
	if (!cache.Get(key, TailPieceIndex(piece_length), piece_length, piece.get())) {
		return false;
	}
	CopyOverlap(ByteRange {object_size - piece_length, piece_length}, piece.get(), range, destination);
	stats.Add(Counter::CACHE_HITS);
	stats.Add(Counter::CACHE_BYTES_SERVED, range.length);
	return true;
}

bool FillTailPiece(BlockCache &cache, const CacheKey &key, uint64_t object_size, uint64_t piece_length,
                   const ByteRange &held, const char *bytes) {
	if (piece_length == 0 || piece_length > std::min(BLOCK, object_size) || held.End() != object_size ||
	    held.length < piece_length) {
		return true;
	}
	std::shared_ptr<char> piece(new char[piece_length], std::default_delete<char[]>());
	std::memcpy(piece.get(), bytes + (held.length - piece_length), piece_length);
	return cache.PutInBackground(key, TailPieceIndex(piece_length), std::move(piece), piece_length);
}

} // namespace httpfs2
