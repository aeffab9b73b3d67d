#include "core/cache/cached_read.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace httpfs2 {

namespace {
constexpr uint64_t BLOCK = BlockCache::BLOCK_SIZE;

uint64_t BlockLength(uint64_t index, uint64_t object_size) {
	return std::min(BLOCK, object_size - index * BLOCK);
}

//! Copies what `range` wants of the bytes `held` (a span of the object) into `destination`.
void CopyOverlap(const ByteRange &held, const char *bytes, const ByteRange &range, char *destination) {
	auto start = std::max(held.offset, range.offset);
	auto end = std::min(held.End(), range.End());
	if (start < end) {
		std::memcpy(destination + (start - range.offset), bytes + (start - held.offset), end - start);
	}
}
} // namespace

ByteRange BlockSpan(const ByteRange &range, uint64_t object_size) {
	auto start = range.offset / BLOCK * BLOCK;
	auto end = std::min(object_size, (range.End() + BLOCK - 1) / BLOCK * BLOCK);
	return ByteRange {start, end - start};
}

bool ReadThroughBlockCache(BlockCache &cache, CacheKey key, uint64_t object_size, const ByteRange &range,
                           char *destination, IoStats &stats, const BlockFetch &fetch) {
	if (range.length == 0) {
		return true;
	}
	auto span = BlockSpan(range, object_size);
	auto first = span.offset / BLOCK;
	auto end = (span.End() + BLOCK - 1) / BLOCK;
	// Blocks held are copied out at once; the fetch covers the first missing block to the last.
	uint64_t first_missing = end;
	uint64_t last_missing = first;
	std::unique_ptr<char[]> block(new char[BLOCK]);
	for (auto index = first; index < end; index++) {
		auto length = BlockLength(index, object_size);
		if (cache.Get(key, index, length, block.get())) {
			stats.Add(Counter::CACHE_HITS);
			CopyOverlap(ByteRange {index * BLOCK, length}, block.get(), range, destination);
			continue;
		}
		stats.Add(Counter::CACHE_MISSES);
		first_missing = std::min(first_missing, index);
		last_missing = index;
	}
	auto served = range.length;
	if (first_missing == end) {
		stats.Add(Counter::CACHE_BYTES_SERVED, served);
		return true;
	}
	auto fetch_end = std::min(object_size, (last_missing + 1) * BLOCK);
	ByteRange fetched {first_missing * BLOCK, fetch_end - first_missing * BLOCK};
	// Into a buffer of the cache's, never the caller's: the blocks keep it until the writer has stored them, while
	// the caller's memory may be freed as soon as this returns (a cancelled query).
	std::shared_ptr<char> bytes(new char[fetched.length], std::default_delete<char[]>());
	fetch(fetched, bytes.get(), key);
	CopyOverlap(fetched, bytes.get(), range, destination);
	served -= std::min(fetched.End(), range.End()) - std::max(fetched.offset, range.offset);
	stats.Add(Counter::CACHE_BYTES_SERVED, served);
	for (auto index = first_missing; index <= last_missing; index++) {
		// Each block shares the buffer (aliasing: it points at its own bytes, the buffer goes with the last block).
		SharedBytes block(bytes, bytes.get() + (index * BLOCK - fetched.offset));
		if (!cache.PutInBackground(key, index, std::move(block), BlockLength(index, object_size))) {
			return false;
		}
	}
	return true;
}

bool ReadHeldBlocks(BlockCache &cache, const CacheKey &key, uint64_t object_size, const ByteRange &range,
                    char *destination, IoStats &stats) {
	auto span = BlockSpan(range, object_size);
	auto first = span.offset / BLOCK;
	auto end = (span.End() + BLOCK - 1) / BLOCK;
	for (auto index = first; index < end; index++) {
		if (!cache.Holds(key, index)) {
			return false;
		}
	}
	std::unique_ptr<char[]> block(new char[BLOCK]);
	for (auto index = first; index < end; index++) {
		auto length = BlockLength(index, object_size);
		if (!cache.Get(key, index, length, block.get())) {
			return false; // removed meanwhile, or corrupt (and removed now)
		}
		CopyOverlap(ByteRange {index * BLOCK, length}, block.get(), range, destination);
	}
	stats.Add(Counter::CACHE_HITS, end - first);
	stats.Add(Counter::CACHE_BYTES_SERVED, range.length);
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

} // namespace httpfs2
