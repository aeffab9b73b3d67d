// ReadThroughBlockCache: what a read through the block cache fetches, serves and puts; AlignCuts.

#include "core/cache/cached_read.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace httpfs2;

namespace {

constexpr uint64_t BLOCK = BlockCache::BLOCK_SIZE;

//! An object of `size` bytes, each byte a function of its offset, fetched by ranges that are recorded.
struct FakeObject {
	explicit FakeObject(uint64_t size_p) : size(size_p) {
	}
	char ByteAt(uint64_t offset) const {
		return static_cast<char>((offset * 131 + offset / 7) & 0xFF);
	}
	BlockFetch Fetch() {
		return [this](const ByteRange &range, char *destination, CacheKey &) {
			fetched.push_back(range);
			for (uint64_t i = 0; i < range.length; i++) {
				destination[i] = ByteAt(range.offset + i);
			}
		};
	}
	bool Holds(const ByteRange &range, const std::vector<char> &bytes) const {
		for (uint64_t i = 0; i < range.length; i++) {
			if (bytes[i] != ByteAt(range.offset + i)) {
				return false;
			}
		}
		return true;
	}
	uint64_t size;
	std::vector<ByteRange> fetched;
};

class CachedReadTest : public ::testing::Test {
protected:
	void SetUp() override {
		char pattern[] = "/tmp/httpfs2-cached-read-XXXXXX";
		folder = mkdtemp(pattern);
		std::string error;
		cache = BlockCache::Open(folder, 64 * BLOCK, error);
		ASSERT_NE(cache, nullptr) << error;
	}
	void TearDown() override {
		cache.reset();
		std::system(("rm -rf '" + folder + "'").c_str());
	}
	std::vector<char> Read(FakeObject &object, const ByteRange &range) {
		std::vector<char> bytes(range.length);
		EXPECT_TRUE(ReadThroughBlockCache(*cache, key, object.size, range, bytes.data(), stats, object.Fetch()));
		EXPECT_TRUE(object.Holds(range, bytes));
		return bytes;
	}
	std::string folder;
	std::unique_ptr<BlockCache> cache;
	CacheKey key {"s3://bucket/object", "etag=\"abc\";size=1"};
	IoStats stats;
};

} // namespace

TEST_F(CachedReadTest, AMissFetchesWholeBlocksAndAWarmReadFetchesNothing) {
	FakeObject object(3 * BLOCK + 100);
	Read(object, ByteRange {BLOCK + 10, 1000});
	ASSERT_EQ(object.fetched.size(), 1u);
	EXPECT_EQ(object.fetched[0].offset, BLOCK);
	EXPECT_EQ(object.fetched[0].length, BLOCK);
	Read(object, ByteRange {BLOCK + 500, BLOCK - 500});
	EXPECT_EQ(object.fetched.size(), 1u);
	auto snapshot = stats.Snapshot();
	EXPECT_EQ(snapshot.Get(Counter::CACHE_MISSES), 1u);
	EXPECT_EQ(snapshot.Get(Counter::CACHE_HITS), 1u);
	EXPECT_EQ(snapshot.Get(Counter::CACHE_BYTES_SERVED), BLOCK - 500);
	cache->Flush();
	EXPECT_EQ(cache->Counters().bytes_written, BLOCK);
}

TEST_F(CachedReadTest, TheLastBlockIsShortAndOnlyMissingBlocksAreFetched) {
	FakeObject object(3 * BLOCK + 100);
	Read(object, ByteRange {3 * BLOCK, 100});
	ASSERT_EQ(object.fetched.size(), 1u);
	EXPECT_EQ(object.fetched[0].length, 100u);
	Read(object, ByteRange {0, BLOCK});
	// Blocks 1 and 2 are missing, 0 and 3 held: one fetch of the span between.
	Read(object, ByteRange {5, 3 * BLOCK + 90});
	ASSERT_EQ(object.fetched.size(), 3u);
	EXPECT_EQ(object.fetched[2].offset, BLOCK);
	EXPECT_EQ(object.fetched[2].length, 2 * BLOCK);
	Read(object, ByteRange {0, object.size});
	EXPECT_EQ(object.fetched.size(), 3u);
}

TEST_F(CachedReadTest, TheBlocksHandedOverOwnTheirBytesNotTheCallers) {
	FakeObject object(2 * BLOCK);
	// Exactly one block: the caller's buffer would do to fetch into, but the caller may free it once the read is
	// done (a cancelled query), while the block is still to be written.
	std::vector<char> caller(BLOCK);
	ASSERT_TRUE(ReadThroughBlockCache(*cache, key, object.size, ByteRange {BLOCK, BLOCK}, caller.data(), stats,
	                                  object.Fetch()));
	EXPECT_TRUE(object.Holds(ByteRange {BLOCK, BLOCK}, caller));
	std::fill(caller.begin(), caller.end(), '\x5a');
	cache->Flush();
	// Another cache on the folder (another process) has no pending blocks: what it reads is on disk.
	std::string error;
	auto other = BlockCache::Open(folder, 64 * BLOCK, error);
	ASSERT_NE(other, nullptr) << error;
	std::vector<char> held(BLOCK);
	ASSERT_TRUE(other->Get(key, 1, BLOCK, held.data()));
	EXPECT_TRUE(object.Holds(ByteRange {BLOCK, BLOCK}, held));
}

TEST_F(CachedReadTest, BlocksOverThePendingLimitAreNotCachedAndAreCounted) {
	std::string error;
	auto unbuffered = BlockCache::Open(folder + "/unbuffered", 64 * BLOCK, error, 0);
	ASSERT_NE(unbuffered, nullptr) << error;
	FakeObject object(2 * BLOCK + 7);
	std::vector<char> bytes(object.size);
	ASSERT_TRUE(ReadThroughBlockCache(*unbuffered, key, object.size, ByteRange {0, object.size}, bytes.data(), stats,
	                                  object.Fetch()));
	EXPECT_TRUE(object.Holds(ByteRange {0, object.size}, bytes));
	unbuffered->Flush();
	EXPECT_EQ(unbuffered->Counters().writes_skipped, 3u);
	EXPECT_EQ(unbuffered->Counters().bytes_written, 0u);
	EXPECT_EQ(unbuffered->HeldBytes(), 0u);
	EXPECT_FALSE(unbuffered->Get(key, 0, BLOCK, bytes.data()));
}

TEST_F(CachedReadTest, AFailedWriteMakesTheCacheRefuseBlocksWithItsReasonAndReadsStayRight) {
	// The cache's folder replaced by a file under the open cache (removed by hand, a disk unmounted).
	auto root = folder + "/httpfs2-blocks-v1";
	ASSERT_EQ(std::system(("rm -rf '" + root + "' && touch '" + root + "'").c_str()), 0);
	FakeObject object(3 * BLOCK);
	// The write fails in the background: this read is right and has handed its block over.
	Read(object, ByteRange {0, 100});
	cache->Flush();
	EXPECT_EQ(cache->Counters().write_failures, 1u);
	EXPECT_EQ(cache->Counters().bytes_written, 0u);
	EXPECT_EQ(cache->LastWriteError(), std::strerror(ENOTDIR));
	// The next read is told, so its reader stops using the cache; its bytes are right all the same.
	std::vector<char> bytes(200);
	EXPECT_FALSE(
	    ReadThroughBlockCache(*cache, key, object.size, ByteRange {BLOCK, 200}, bytes.data(), stats, object.Fetch()));
	EXPECT_TRUE(object.Holds(ByteRange {BLOCK, 200}, bytes));
}

TEST(AlignCuts, CutsMoveToBlocksAndCoverTheSameBytes) {
	constexpr uint64_t ALIGNMENT = 1 << 20;
	std::vector<ByteRange> pieces {{100, 1500000}, {1500100, 1500000}, {3000100, 10}};
	AlignCuts(pieces, ALIGNMENT);
	ASSERT_EQ(pieces.size(), 2u);
	EXPECT_EQ(pieces[0].offset, 100u);
	EXPECT_EQ(pieces[0].End(), ALIGNMENT);
	EXPECT_EQ(pieces[1].offset, ALIGNMENT);
	EXPECT_EQ(pieces[1].End(), 3000110u);
}

TEST_F(CachedReadTest, ATailFillsTheBlocksItHoldsWholeAndAReadOfThemFetchesNothing) {
	FakeObject object(3 * BLOCK + 1000);
	// The last 256 KiB: the short last block whole, the block before it in part.
	ByteRange tail {object.size - BLOCK, BLOCK};
	std::vector<char> bytes(tail.length);
	for (uint64_t i = 0; i < tail.length; i++) {
		bytes[i] = object.ByteAt(tail.offset + i);
	}
	ASSERT_TRUE(FillBlockCache(*cache, key, object.size, tail, bytes.data()));
	cache->Flush();
	EXPECT_TRUE(cache->Holds(key, 3));
	EXPECT_FALSE(cache->Holds(key, 2)) << "a block the tail holds in part is not cached";
	Read(object, ByteRange {3 * BLOCK, 1000});
	EXPECT_TRUE(object.fetched.empty());
	Read(object, ByteRange {3 * BLOCK - 10, 20});
	ASSERT_EQ(object.fetched.size(), 1u);
	EXPECT_EQ(object.fetched[0].offset, 2 * BLOCK);
	EXPECT_EQ(object.fetched[0].length, BLOCK) << "only the block missing";
}

TEST_F(CachedReadTest, HeldBlocksAloneServeAReadAndAMissingOneFetchesNothing) {
	FakeObject object(3 * BLOCK + 100);
	ByteRange across {2 * BLOCK + 50, BLOCK + 50};
	std::vector<char> bytes(across.length);
	EXPECT_FALSE(ReadHeldBlocks(*cache, key, object.size, across, bytes.data(), stats));
	EXPECT_EQ(stats.Snapshot().Get(Counter::CACHE_MISSES), 0u) << "a miss is the caller's fetch to count";
	Read(object, ByteRange {2 * BLOCK, 10}); // block 2 alone
	cache->Flush();
	EXPECT_FALSE(ReadHeldBlocks(*cache, key, object.size, across, bytes.data(), stats)) << "block 3 is not held";
	Read(object, ByteRange {3 * BLOCK, 100});
	cache->Flush();
	auto fetched = object.fetched.size();
	ASSERT_TRUE(ReadHeldBlocks(*cache, key, object.size, across, bytes.data(), stats));
	EXPECT_TRUE(object.Holds(across, bytes));
	EXPECT_EQ(object.fetched.size(), fetched);
	CacheKey other {key.path, "etag=\"def\";size=1"};
	EXPECT_FALSE(ReadHeldBlocks(*cache, other, object.size, across, bytes.data(), stats)) << "another version";
}
