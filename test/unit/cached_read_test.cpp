// ReadThroughBlockCache: what a read through the block cache fetches, serves and puts; AlignCuts.

#include "core/cache/cached_read.hpp"
#include "block_cache_folder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
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
	std::vector<char> Bytes(const ByteRange &range) const {
		std::vector<char> bytes(range.length);
		for (uint64_t i = 0; i < range.length; i++) {
			bytes[i] = ByteAt(range.offset + i);
		}
		return bytes;
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

//! A fetch of `object` that counts its calls and holds each until released; the first fails, with `fail_first`.
struct HeldFetch {
	explicit HeldFetch(FakeObject &object_p, bool fail_first_p = false) : object(object_p), fail_first(fail_first_p) {
	}
	BlockFetch Fetch() {
		return [this](const ByteRange &range, char *destination, CacheKey &key) {
			std::unique_lock<std::mutex> guard(lock);
			auto call = ++calls;
			changed.notify_all();
			changed.wait(guard, [this]() { return released; });
			if (fail_first && call == 1) {
				throw std::runtime_error("the first fetch failed");
			}
			object.Fetch()(range, destination, key); // under the lock: `fetched` is one vector
		};
	}
	bool WaitForCalls(int count) {
		std::unique_lock<std::mutex> guard(lock);
		return changed.wait_for(guard, std::chrono::seconds(10), [&]() { return calls >= count; });
	}
	void Release() {
		std::lock_guard<std::mutex> guard(lock);
		released = true;
		changed.notify_all();
	}
	int Calls() {
		std::lock_guard<std::mutex> guard(lock);
		return calls;
	}
	FakeObject &object;
	const bool fail_first;
	std::mutex lock;
	std::condition_variable changed;
	int calls = 0;
	bool released = false;
};

class CachedReadTest : public BlockCacheFolderTest {
protected:
	std::vector<char> Read(FakeObject &object, const ByteRange &range) {
		std::vector<char> bytes(range.length);
		EXPECT_TRUE(ReadThroughBlockCache(*cache, key, object.size, range, bytes.data(), stats, object.Fetch()));
		EXPECT_TRUE(object.Holds(range, bytes));
		return bytes;
	}
	//! Waits until `count` blocks were missed (a second read got past its look in the cache), then a moment more.
	void WaitForMisses(uint64_t count) {
		auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
		while (stats.Snapshot().Get(Counter::CACHE_MISSES) < count && std::chrono::steady_clock::now() < deadline) {
			std::this_thread::sleep_for(std::chrono::milliseconds(5));
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(200));
	}
	CacheKey key {"s3://bucket/object", "etag=\"abc\";size=1"};
	IoStats stats;
};

} // namespace

TEST_F(CachedReadTest, AMissFetchesTheBytesAskedAndAWarmReadWithinThemFetchesNothing) {
	FakeObject object(4 * BLOCK + 100);
	// Part of block 1, block 2 whole, part of block 3: one fetch of the bytes asked, not widened to blocks.
	ByteRange first {BLOCK + 10, 2 * BLOCK};
	Read(object, first);
	ASSERT_EQ(object.fetched.size(), 1u);
	EXPECT_EQ(object.fetched[0].offset, first.offset);
	EXPECT_EQ(object.fetched[0].length, first.length);
	Read(object, ByteRange {BLOCK + 500, BLOCK});
	Read(object, ByteRange {2 * BLOCK, BLOCK + 10});
	EXPECT_EQ(object.fetched.size(), 1u);
	auto snapshot = stats.Snapshot();
	EXPECT_EQ(snapshot.Get(Counter::CACHE_MISSES), 3u);
	EXPECT_EQ(snapshot.Get(Counter::CACHE_HITS), 4u);
	EXPECT_EQ(snapshot.Get(Counter::CACHE_BYTES_SERVED), 2 * BLOCK + 10);
	cache->Flush();
	EXPECT_EQ(cache->Counters().bytes_written, first.length);
	// Bytes of a block the first read did not ask for are fetched, exactly.
	Read(object, ByteRange {BLOCK, 20});
	ASSERT_EQ(object.fetched.size(), 2u);
	EXPECT_EQ(object.fetched[1].offset, BLOCK);
	EXPECT_EQ(object.fetched[1].length, 20u);
}

TEST_F(CachedReadTest, PiecesHeldOfABlockServeAReadTheyCoverTogether) {
	FakeObject object(2 * BLOCK);
	// Two column chunks read one by one, then in one span (another scan's read-ahead, another process).
	Read(object, ByteRange {BLOCK + 100, 5000});
	Read(object, ByteRange {BLOCK + 3000, 9000});
	Read(object, ByteRange {BLOCK + 200, 10000});
	EXPECT_EQ(object.fetched.size(), 2u);
	cache->Flush();
	Read(object, ByteRange {BLOCK + 150, 11850});
	EXPECT_EQ(object.fetched.size(), 2u) << "served from the pieces on disk";
	Read(object, ByteRange {BLOCK + 50, 100});
	ASSERT_EQ(object.fetched.size(), 3u) << "bytes before the first piece";
	Read(object, ByteRange {BLOCK + 11000, 2000});
	ASSERT_EQ(object.fetched.size(), 4u) << "bytes past the last piece";
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
	EXPECT_EQ(object.fetched[0].offset, 3 * BLOCK - 10);
	EXPECT_EQ(object.fetched[0].length, 10u) << "only the part of block 2 missing";
}

TEST_F(CachedReadTest, HeldBlocksAloneServeAReadAndAMissingOneFetchesNothing) {
	FakeObject object(3 * BLOCK + 100);
	ByteRange across {2 * BLOCK + 50, BLOCK + 50};
	std::vector<char> bytes(across.length);
	EXPECT_FALSE(ReadHeldBlocks(*cache, key, object.size, across, bytes.data(), stats));
	EXPECT_EQ(stats.Snapshot().Get(Counter::CACHE_MISSES), 0u) << "a miss is the caller's fetch to count";
	Read(object, ByteRange {2 * BLOCK, BLOCK}); // block 2 alone
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

TEST_F(CachedReadTest, TwoReadsMissingTheSameBlockAtOnceShareOneFetch) {
	FakeObject object(3 * BLOCK);
	HeldFetch held(object);
	// The first read fetches block 1 whole (and parts of blocks 0 and 2), the second wants block 1.
	ByteRange first_read {BLOCK - 10, BLOCK + 20};
	ByteRange second_read {BLOCK, BLOCK};
	std::vector<char> first_bytes(first_read.length), second_bytes(second_read.length);
	std::thread first([&]() {
		ReadThroughBlockCache(*cache, key, object.size, first_read, first_bytes.data(), stats, held.Fetch());
	});
	ASSERT_TRUE(held.WaitForCalls(1));
	std::thread second([&]() {
		ReadThroughBlockCache(*cache, key, object.size, second_read, second_bytes.data(), stats, held.Fetch());
	});
	WaitForMisses(4);
	EXPECT_EQ(held.Calls(), 1) << "the second read sent a fetch of a block being fetched";
	held.Release();
	first.join();
	second.join();
	EXPECT_EQ(held.Calls(), 1);
	EXPECT_TRUE(object.Holds(first_read, first_bytes));
	EXPECT_TRUE(object.Holds(second_read, second_bytes));
	EXPECT_EQ(stats.Snapshot().Get(Counter::CACHE_FETCHES_SHARED), 1u);
	EXPECT_EQ(cache->Fetching().Count(), 0u);
}

TEST_F(CachedReadTest, AReadWaitingOnAFetchThatFailsFetchesTheBlockItself) {
	FakeObject object(3 * BLOCK);
	HeldFetch held(object, true);
	ByteRange read {2 * BLOCK + 1, 50};
	std::vector<char> first_bytes(read.length), second_bytes(read.length);
	bool first_failed = false;
	std::thread first([&]() {
		try {
			ReadThroughBlockCache(*cache, key, object.size, read, first_bytes.data(), stats, held.Fetch());
		} catch (std::runtime_error &) {
			first_failed = true;
		}
	});
	ASSERT_TRUE(held.WaitForCalls(1));
	std::thread second(
	    [&]() { ReadThroughBlockCache(*cache, key, object.size, read, second_bytes.data(), stats, held.Fetch()); });
	WaitForMisses(2);
	EXPECT_EQ(held.Calls(), 1);
	held.Release();
	first.join();
	second.join();
	EXPECT_TRUE(first_failed);
	EXPECT_EQ(held.Calls(), 2) << "the waiting read fetched the block once the fetch it waited on failed";
	EXPECT_TRUE(object.Holds(read, second_bytes));
	EXPECT_EQ(stats.Snapshot().Get(Counter::CACHE_FETCHES_SHARED), 0u);
	EXPECT_EQ(cache->Fetching().Count(), 0u);
}

TEST_F(CachedReadTest, AReadWaitingOnAFetchThatNeverEndsStopsWhenCancelled) {
	FakeObject object(3 * BLOCK);
	HeldFetch held(object);
	ByteRange read {BLOCK + 10, 100};
	std::vector<char> first_bytes(read.length);
	std::thread first(
	    [&]() { ReadThroughBlockCache(*cache, key, object.size, read, first_bytes.data(), stats, held.Fetch()); });
	ASSERT_TRUE(held.WaitForCalls(1));
	std::atomic<bool> cancel {false};
	std::atomic<bool> ended {false};
	std::atomic<bool> threw {false};
	std::chrono::steady_clock::time_point ended_at;
	std::thread second([&]() {
		// Its buffer goes when the wait ends: the fetch ending later must not write into it.
		auto bytes = std::unique_ptr<std::vector<char>>(new std::vector<char>(read.length));
		try {
			ReadThroughBlockCache(*cache, key, object.size, read, bytes->data(), stats, held.Fetch(),
			                      [&]() { return cancel.load(); });
		} catch (BlockWaitCancelled &) {
			threw = true;
		}
		ended_at = std::chrono::steady_clock::now();
		ended = true;
	});
	WaitForMisses(2);
	EXPECT_FALSE(ended.load()) << "the waiter ended before the fetch or its cancellation";
	auto cancelled_at = std::chrono::steady_clock::now();
	cancel = true;
	second.join();
	EXPECT_TRUE(threw);
	EXPECT_LT(ended_at - cancelled_at, std::chrono::seconds(1)) << "the wait outlived its cancellation";
	EXPECT_EQ(held.Calls(), 1) << "the cancelled read fetched the block itself";
	held.Release();
	first.join();
	EXPECT_TRUE(object.Holds(read, first_bytes));
	EXPECT_EQ(cache->Fetching().Count(), 0u);
}

TEST_F(CachedReadTest, HeldBlocksStopWaitingWhenCancelled) {
	FakeObject object(2 * BLOCK);
	HeldFetch held(object);
	std::vector<char> fetched_bytes(BLOCK);
	std::thread fetching([&]() {
		ReadThroughBlockCache(*cache, key, object.size, ByteRange {BLOCK, BLOCK}, fetched_bytes.data(), stats,
		                      held.Fetch());
	});
	ASSERT_TRUE(held.WaitForCalls(1));
	std::vector<char> held_bytes(100);
	auto started = std::chrono::steady_clock::now();
	EXPECT_THROW(ReadHeldBlocks(*cache, key, object.size, ByteRange {BLOCK + 50, 100}, held_bytes.data(), stats,
	                            []() { return true; }),
	             BlockWaitCancelled);
	EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
	held.Release();
	fetching.join();
	EXPECT_EQ(held.Calls(), 1);
	EXPECT_EQ(cache->Fetching().Count(), 0u);
}

TEST_F(CachedReadTest, AReadSpanningABlockBeingFetchedFetchesOnlyTheOthers) {
	FakeObject object(4 * BLOCK);
	HeldFetch held(object);
	std::vector<char> first_bytes(BLOCK), second_bytes(2 * BLOCK);
	std::thread first([&]() {
		ReadThroughBlockCache(*cache, key, object.size, ByteRange {BLOCK, BLOCK}, first_bytes.data(), stats,
		                      held.Fetch());
	});
	ASSERT_TRUE(held.WaitForCalls(1));
	// Blocks 1 and 2: block 1 is being fetched, block 2 is this read's alone.
	std::thread second([&]() {
		ReadThroughBlockCache(*cache, key, object.size, ByteRange {BLOCK + 100, 2 * BLOCK - 200}, second_bytes.data(),
		                      stats, held.Fetch());
	});
	ASSERT_TRUE(held.WaitForCalls(2));
	held.Release();
	first.join();
	second.join();
	ASSERT_EQ(object.fetched.size(), 2u);
	// Released at once: the fetches end in either order.
	auto second_fetch = object.fetched[0].offset == BLOCK ? object.fetched[1] : object.fetched[0];
	EXPECT_EQ(second_fetch.offset, 2 * BLOCK) << "block 1 is waited for";
	EXPECT_EQ(second_fetch.length, BLOCK - 100) << "the part of block 2 asked for alone";
	EXPECT_TRUE(object.Holds(ByteRange {BLOCK, BLOCK}, first_bytes));
	second_bytes.resize(2 * BLOCK - 200);
	EXPECT_TRUE(object.Holds(ByteRange {BLOCK + 100, 2 * BLOCK - 200}, second_bytes));
}

TEST_F(CachedReadTest, HeldBlocksWaitForABlockBeingFetched) {
	FakeObject object(2 * BLOCK);
	HeldFetch held(object);
	std::vector<char> fetched_bytes(BLOCK), held_bytes(100);
	std::thread fetching([&]() {
		ReadThroughBlockCache(*cache, key, object.size, ByteRange {BLOCK, BLOCK}, fetched_bytes.data(), stats,
		                      held.Fetch());
	});
	ASSERT_TRUE(held.WaitForCalls(1));
	EXPECT_FALSE(ReadHeldBlocks(*cache, key, object.size, ByteRange {0, 100}, held_bytes.data(), stats))
	    << "block 0 is neither held nor being fetched";
	bool served = false;
	std::thread waiting([&]() {
		served = ReadHeldBlocks(*cache, key, object.size, ByteRange {BLOCK + 50, 100}, held_bytes.data(), stats);
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	held.Release();
	fetching.join();
	waiting.join();
	EXPECT_TRUE(served);
	EXPECT_TRUE(object.Holds(ByteRange {BLOCK + 50, 100}, held_bytes));
	EXPECT_EQ(held.Calls(), 1);
}

TEST_F(CachedReadTest, ATailPieceServesReadsWithinItAndIsNoBlockButCoversTheLastOnesEnd) {
	FakeObject object(3 * BLOCK + 1000);
	constexpr uint64_t PIECE = 16384;
	ByteRange tail {object.size - PIECE, PIECE};
	std::vector<char> bytes(PIECE);
	for (uint64_t i = 0; i < PIECE; i++) {
		bytes[i] = object.ByteAt(tail.offset + i);
	}
	ASSERT_TRUE(FillTailPiece(*cache, key, object.size, PIECE, tail, bytes.data()));
	cache->Flush();
	ByteRange footer {object.size - 8, 8};
	std::vector<char> read(PIECE);
	ASSERT_TRUE(ReadHeldTailPiece(*cache, key, object.size, PIECE, tail, read.data(), stats));
	EXPECT_TRUE(object.Holds(tail, read));
	ASSERT_TRUE(ReadHeldTailPiece(*cache, key, object.size, PIECE, footer, read.data(), stats));
	read.resize(footer.length);
	EXPECT_TRUE(object.Holds(footer, read));
	read.resize(PIECE + 1);
	EXPECT_FALSE(ReadHeldTailPiece(*cache, key, object.size, PIECE + 1, ByteRange {object.size - PIECE - 1, PIECE + 1},
	                               read.data(), stats))
	    << "a piece of another length";
	EXPECT_FALSE(
	    ReadHeldTailPiece(*cache, key, object.size, PIECE, ByteRange {object.size - PIECE - 1, 10}, read.data(), stats))
	    << "bytes before the piece";
	EXPECT_EQ(stats.Snapshot().Get(Counter::CACHE_MISSES), 0u);
	// The tail piece is no block, but it covers the end of the last block as a piece would: a read through the blocks
	// within it (DuckDB reads a footer's metadata apart from the tail it read first) fetches nothing; one that starts
	// before it fetches.
	Read(object, ByteRange {object.size - 100, 92});
	EXPECT_TRUE(object.fetched.empty());
	Read(object, ByteRange {object.size - PIECE - 100, 200});
	ASSERT_EQ(object.fetched.size(), 1u);
	EXPECT_EQ(object.fetched[0].offset, object.size - PIECE - 100);
}

namespace {
//! Where a process's claim on fetching block `index` of `key` lies (BlockCache::ClaimFetch).
std::string ClaimFileOf(BlockCache &cache, const CacheKey &key, uint64_t index) {
	auto file = cache.BlockFile(key, index);
	return file.substr(0, file.size() - std::strlen(".blk")) + ".fetch";
}

//! Leaves a claim as process `pid` would have, made `age_seconds` ago.
void WriteClaim(const std::string &file, long pid, int age_seconds) {
	std::system(("mkdir -p '" + file.substr(0, file.rfind('/')) + "'").c_str());
	auto out = std::fopen(file.c_str(), "w");
	ASSERT_NE(out, nullptr);
	std::fprintf(out, "%ld", pid);
	std::fclose(out);
	timespec times[2];
	clock_gettime(CLOCK_REALTIME, &times[0]);
	times[0].tv_sec -= age_seconds;
	times[1] = times[0];
	ASSERT_EQ(utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
}

bool Exists(const std::string &file) {
	return access(file.c_str(), F_OK) == 0;
}

//! The pid of a process that has ended.
long DeadPid() {
	auto child = fork();
	if (child == 0) {
		_exit(0);
	}
	waitpid(child, nullptr, 0);
	return child;
}
} // namespace

TEST_F(CachedReadTest, TwoCachesOnOneDirectoryShareOneFetchOfBlocksAndPieces) {
	// A second BlockCache on the directory stands in for a second process: it shares only the files.
	std::string error;
	auto other = BlockCache::Open(folder, 64 * BLOCK, error);
	ASSERT_NE(other, nullptr) << error;
	FakeObject object(4 * BLOCK);
	HeldFetch held(object);
	// A piece of block 0, blocks 1 and 2 whole, a piece of block 3.
	ByteRange read {BLOCK - 10, 2 * BLOCK + 20};
	std::vector<char> first_bytes(read.length), second_bytes(read.length);
	std::thread first(
	    [&]() { ReadThroughBlockCache(*cache, key, object.size, read, first_bytes.data(), stats, held.Fetch()); });
	ASSERT_TRUE(held.WaitForCalls(1));
	IoStats other_stats;
	std::thread second([&]() {
		ReadThroughBlockCache(*other, key, object.size, read, second_bytes.data(), other_stats, held.Fetch());
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	EXPECT_EQ(held.Calls(), 1) << "the second process sent a fetch of units the first is fetching";
	held.Release();
	first.join();
	second.join();
	EXPECT_EQ(held.Calls(), 1);
	EXPECT_TRUE(object.Holds(read, first_bytes));
	EXPECT_TRUE(object.Holds(read, second_bytes));
	EXPECT_EQ(other_stats.Snapshot().Get(Counter::CACHE_FETCHES_SHARED), 4u);
	EXPECT_FALSE(Exists(ClaimFileOf(*cache, key, 1))) << "the claim outlived the block's write";
}

TEST_F(CachedReadTest, AClaimOfADeadProcessOrTooOldIsStaleAndTheBlockIsFetchedAtOnce) {
	FakeObject object(3 * BLOCK);
	auto dead = ClaimFileOf(*cache, key, 0);
	auto old = ClaimFileOf(*cache, key, 2);
	WriteClaim(dead, DeadPid(), 0);
	WriteClaim(old, long(getpid()), int(BlockCache::FETCH_CLAIM_NS / 1000000000) + 5);
	EXPECT_FALSE(cache->FetchedElsewhere(key, 0));
	EXPECT_FALSE(cache->FetchedElsewhere(key, 2));
	auto started = std::chrono::steady_clock::now();
	Read(object, ByteRange {0, BLOCK});
	Read(object, ByteRange {2 * BLOCK, BLOCK});
	EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1)) << "a stale claim was waited on";
	EXPECT_EQ(object.fetched.size(), 2u);
	cache->Flush();
	EXPECT_FALSE(Exists(dead));
	EXPECT_FALSE(Exists(old));
}

TEST_F(CachedReadTest, AStaleClaimIsNoBlockAndAScanRemovesItAndAClearTheLiveOnes) {
	auto stale = ClaimFileOf(*cache, key, 0);
	auto live = ClaimFileOf(*cache, key, 1);
	WriteClaim(stale, DeadPid(), 0);
	WriteClaim(live, long(getpid()), 0);
	EXPECT_EQ(cache->HeldBytes(), 0u);
	EXPECT_TRUE(cache->HeldIndices(key, cache->ListFolder(key), 0, 10).empty());
	EXPECT_TRUE(cache->Info().empty());
	EXPECT_FALSE(Exists(stale));
	EXPECT_TRUE(Exists(live));
	EXPECT_TRUE(cache->FetchedElsewhere(key, 1));
	cache->Clear("");
	EXPECT_FALSE(Exists(live));
}

TEST_F(CachedReadTest, AReadWaitingOnAnotherProcessStopsWhenCancelledAndFetchesWhenTheClaimEnds) {
	FakeObject object(2 * BLOCK);
	auto claim = ClaimFileOf(*cache, key, 1);
	WriteClaim(claim, long(getpid()), 0);
	std::atomic<bool> cancel {false};
	std::atomic<bool> threw {false};
	std::vector<char> bytes(BLOCK);
	std::thread cancelled([&]() {
		try {
			ReadThroughBlockCache(*cache, key, object.size, ByteRange {BLOCK, BLOCK}, bytes.data(), stats,
			                      object.Fetch(), [&]() { return cancel.load(); });
		} catch (BlockWaitCancelled &) {
			threw = true;
		}
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	EXPECT_FALSE(threw.load());
	auto cancelled_at = std::chrono::steady_clock::now();
	cancel = true;
	cancelled.join();
	EXPECT_TRUE(threw);
	EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, std::chrono::seconds(1));
	EXPECT_TRUE(object.fetched.empty()) << "the cancelled read fetched the block itself";
	EXPECT_EQ(cache->Fetching().Count(), 0u);
	EXPECT_TRUE(Exists(claim)) << "a waiter removed another process's claim";

	// The claim ends without the block (that fetch failed): the waiter fetches it itself.
	std::thread waiting([&]() {
		EXPECT_TRUE(ReadThroughBlockCache(*cache, key, object.size, ByteRange {BLOCK, BLOCK}, bytes.data(), stats,
		                                  object.Fetch()));
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	unlink(claim.c_str());
	waiting.join();
	EXPECT_EQ(object.fetched.size(), 1u);
	EXPECT_TRUE(object.Holds(ByteRange {BLOCK, BLOCK}, bytes));
}

TEST_F(CachedReadTest, AReadOfHeldBlocksWaitsOnAnotherProcessesClaimAndIsFalseWhenItEndsWithoutTheBlock) {
	auto other = Open();
	ASSERT_NE(other, nullptr);
	FakeObject object(2 * BLOCK);
	auto block = object.Bytes(ByteRange {BLOCK, BLOCK});
	auto claim = ClaimFileOf(*cache, key, 1);
	WriteClaim(claim, long(getpid()), 0);
	ByteRange wanted {BLOCK, BLOCK}; // the whole block: a piece would wait on a claim of that piece
	std::vector<char> bytes(wanted.length);
	std::atomic<bool> cancel {false};
	std::atomic<bool> threw {false};
	std::thread cancelled([&]() {
		try {
			ReadHeldBlocks(*cache, key, object.size, wanted, bytes.data(), stats, [&]() { return cancel.load(); });
		} catch (BlockWaitCancelled &) {
			threw = true;
		}
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	EXPECT_FALSE(threw.load()) << "a live claim elsewhere was taken for a block not held";
	cancel = true;
	cancelled.join();
	EXPECT_TRUE(threw);

	// The other process writes the block, then ends its claim: the waiter reads it.
	bool served = false;
	std::thread waiting([&]() { served = ReadHeldBlocks(*cache, key, object.size, wanted, bytes.data(), stats); });
	std::this_thread::sleep_for(std::chrono::milliseconds(100));
	ASSERT_TRUE(other->Put(key, 1, block.data(), BLOCK));
	unlink(claim.c_str());
	waiting.join();
	EXPECT_TRUE(served);
	EXPECT_TRUE(object.Holds(wanted, bytes));

	// A claim that ends without the block: false, for the caller to fetch.
	auto second_claim = ClaimFileOf(*cache, key, 0);
	WriteClaim(second_claim, long(getpid()), 0);
	std::thread failing([&]() {
		served = ReadHeldBlocks(*cache, key, object.size, ByteRange {0, BLOCK}, bytes.data(), stats);
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(100));
	unlink(second_claim.c_str());
	failing.join();
	EXPECT_FALSE(served);
	EXPECT_TRUE(object.fetched.empty());
}

TEST_F(CachedReadTest, APieceOfABlockAnotherProcessFetchesWholeWaitsForThatFetch) {
	auto other = Open();
	ASSERT_NE(other, nullptr);
	FakeObject object(2 * BLOCK);
	auto block = object.Bytes(ByteRange {BLOCK, BLOCK});
	ASSERT_TRUE(other->ClaimFetch(key, 1)); // the other process fetches block 1 whole
	ByteRange piece {BLOCK + 100, 1000};
	std::vector<char> held_bytes(piece.length), read_bytes(piece.length);
	std::atomic<bool> held_done {false};
	bool held = false;
	std::thread narrow([&]() {
		held = ReadHeldBlocks(*cache, key, object.size, piece, held_bytes.data(), stats);
		held_done = true;
	});
	std::thread through(
	    [&]() { ReadThroughBlockCache(*cache, key, object.size, piece, read_bytes.data(), stats, object.Fetch()); });
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	EXPECT_FALSE(held_done.load()) << "a read of held blocks gave up on a piece whose block is being fetched";
	EXPECT_TRUE(object.fetched.empty()) << "a piece was fetched again while another process fetched its block";
	ASSERT_TRUE(other->Put(key, 1, block.data(), BLOCK)); // written, then its claim ends
	narrow.join();
	through.join();
	EXPECT_TRUE(object.fetched.empty());
	EXPECT_TRUE(held);
	EXPECT_TRUE(object.Holds(piece, held_bytes));
	EXPECT_TRUE(object.Holds(piece, read_bytes));
}

TEST_F(CachedReadTest, APieceThatAnotherProcessesPieceCoversWithTheTailPieceWaitsForItAndOneNotCoveredIsFetched) {
	// DuckDB 2.0 in two processes: one reads a Parquet file's column chunks to the end of the last one, the other
	// further, into the footer's tail piece, which the cache holds.
	auto other = Open();
	ASSERT_NE(other, nullptr);
	FakeObject object(4 * BLOCK + 100000);
	uint64_t tail_length = 16384;
	auto tail = object.Bytes(ByteRange {object.size - tail_length, tail_length});
	ASSERT_TRUE(cache->Put(key, TailPieceIndex(tail_length), tail.data(), tail_length));
	ByteRange claimed {4 * BLOCK, 85000}; // past the tail piece's start (4 * BLOCK + 83616)
	ASSERT_TRUE(other->ClaimFetch(key, PieceIndex(claimed)));
	ByteRange wanted {4 * BLOCK, 95000};
	std::vector<char> bytes(wanted.length);
	std::thread through(
	    [&]() { ReadThroughBlockCache(*cache, key, object.size, wanted, bytes.data(), stats, object.Fetch()); });
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	EXPECT_TRUE(object.fetched.empty()) << "fetched what another process's piece and the tail piece cover";
	auto piece = object.Bytes(claimed);
	ASSERT_TRUE(other->Put(key, PieceIndex(claimed), piece.data(), claimed.length)); // written, then its claim ends
	through.join();
	EXPECT_TRUE(object.fetched.empty());
	EXPECT_TRUE(object.Holds(wanted, bytes));
	EXPECT_EQ(stats.Snapshot().Get(Counter::CACHE_FETCHES_SHARED), 1u);

	// A claimed piece that leaves a gap before the tail piece is no cover: the read fetches at once.
	ByteRange short_claim {3 * BLOCK, 1000};
	ASSERT_TRUE(other->ClaimFetch(key, PieceIndex(short_claim)));
	ByteRange across {3 * BLOCK, 2000};
	std::vector<char> across_bytes(across.length);
	ReadThroughBlockCache(*cache, key, object.size, across, across_bytes.data(), stats, object.Fetch());
	ASSERT_EQ(object.fetched.size(), 1u);
	EXPECT_EQ(object.fetched[0].offset, across.offset);
	EXPECT_TRUE(object.Holds(across, across_bytes));
}
