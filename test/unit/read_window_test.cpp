#include "core/read_ahead/read_window.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

using namespace httpfs2;

static constexpr uint64_t MIB = 1024 * 1024;

//! An object whose byte at offset i is (i * 7 + i / 251) mod 256, and the fetches made of it.
struct FakeObject {
	explicit FakeObject(uint64_t size_p) : size(size_p) {
	}
	static char ByteAt(uint64_t offset) {
		return static_cast<char>((offset * 7 + offset / 251) & 0xff);
	}
	ReadWindow::Fetch Fetcher() {
		return [this](const ByteRange &range, char *destination) {
			fetches.push_back(range);
			if (fail_next) {
				fail_next = false;
				throw std::runtime_error("the store failed");
			}
			for (uint64_t i = 0; i < range.length; i++) {
				destination[i] = ByteAt(range.offset + i);
			}
		};
	}
	//! Reads `range` through `window` and checks every byte.
	void ReadAndCheck(ReadWindow &window, const ByteRange &range) {
		std::vector<char> out(range.length);
		window.Read(range, size, out.data(), Fetcher());
		for (uint64_t i = 0; i < range.length; i++) {
			ASSERT_EQ(out[i], ByteAt(range.offset + i)) << "byte " << range.offset + i;
		}
	}

	uint64_t size;
	std::vector<ByteRange> fetches;
	bool fail_next = false;
};

static void ExpectFetches(const std::vector<ByteRange> &fetches, const std::vector<ByteRange> &expected) {
	ASSERT_EQ(fetches.size(), expected.size());
	for (size_t i = 0; i < expected.size(); i++) {
		EXPECT_EQ(fetches[i].offset, expected[i].offset) << "fetch " << i;
		EXPECT_EQ(fetches[i].length, expected[i].length) << "fetch " << i;
	}
}

TEST(ReadWindow, ASmallReadFetchesAWindowAndTheNextReadsInsideItCostNothing) {
	FakeObject object(10 * MIB);
	ReadWindow window;
	object.ReadAndCheck(window, {100, 1000});
	object.ReadAndCheck(window, {1100, 5000});
	object.ReadAndCheck(window, {MIB, 100});
	ExpectFetches(object.fetches, {{100, MIB}});
	// Before the window: fetched anew.
	object.ReadAndCheck(window, {0, 100});
	ExpectFetches(object.fetches, {{100, MIB}, {0, MIB}});
}

TEST(ReadWindow, ReadsThatFollowEachOtherDoubleTheWindowUpToItsMaximum) {
	FakeObject object(200 * MIB);
	ReadWindow window;
	for (uint64_t position = 0; position < object.size; position += 100 * 1024) {
		object.ReadAndCheck(window, {position, std::min<uint64_t>(100 * 1024, object.size - position)});
	}
	// 1, 2, 4, 8, 16, 32, 32, ... MiB, each where the last ended, the last one cut at the object's end.
	uint64_t expected_length = MIB;
	uint64_t position = 0;
	for (auto &fetch : object.fetches) {
		EXPECT_EQ(fetch.offset, position);
		EXPECT_EQ(fetch.length, std::min(expected_length, object.size - position));
		position = fetch.End();
		expected_length = std::min(expected_length * 2, ReadWindow::MAX_BYTES);
	}
	EXPECT_EQ(position, object.size);
	// 1 + 2 + 4 + 8 + 16 + 32 = 63 MiB in 6 fetches, then 4 of 32 MiB and the last 9 MiB.
	EXPECT_EQ(object.fetches.size(), 11u);
}

TEST(ReadWindow, AReadLargerThanTheWindowIsFetchedAlone) {
	FakeObject object(10 * MIB);
	ReadWindow window;
	object.ReadAndCheck(window, {0, 3 * MIB});
	// It ended where the next begins, so the window doubles for the next small read.
	object.ReadAndCheck(window, {3 * MIB, 10});
	ExpectFetches(object.fetches, {{0, 3 * MIB}, {3 * MIB, 2 * MIB}});
}

TEST(ReadWindow, AReadPartlyInsideTheWindowFetchesOnlyTheRest) {
	FakeObject object(10 * MIB);
	ReadWindow window;
	object.ReadAndCheck(window, {0, 10});
	object.ReadAndCheck(window, {MIB - 100, 300});
	ExpectFetches(object.fetches, {{0, MIB}, {MIB, 2 * MIB}});
}

TEST(ReadWindow, TheWindowStopsAtTheObjectsEnd) {
	FakeObject object(MIB + 500);
	ReadWindow window;
	object.ReadAndCheck(window, {MIB, 100});
	object.ReadAndCheck(window, {MIB + 400, 100});
	ExpectFetches(object.fetches, {{MIB, 500}});
}

TEST(ReadWindow, AFetchThatFailsLeavesTheWindowEmpty) {
	FakeObject object(10 * MIB);
	ReadWindow window;
	object.ReadAndCheck(window, {0, 10});
	object.fail_next = true;
	std::vector<char> out(10);
	EXPECT_THROW(window.Read({2 * MIB, 10}, object.size, out.data(), object.Fetcher()), std::runtime_error);
	// Neither the failed window's bytes nor the earlier window's are served: the read inside the failed one fetches.
	object.ReadAndCheck(window, {2 * MIB + 5, 10});
	object.ReadAndCheck(window, {5, 10});
	ExpectFetches(object.fetches, {{0, MIB}, {2 * MIB, MIB}, {2 * MIB + 5, MIB}, {5, MIB}});
}

TEST(ReadWindow, ReleaseFreesTheBytesAndTheNextReadFetchesAgain) {
	FakeObject object(10 * MIB);
	ReadWindow window;
	object.ReadAndCheck(window, {0, 10});
	window.Release();
	object.ReadAndCheck(window, {10, 10});
	// The read did not follow the last fetch: the window keeps its size.
	ExpectFetches(object.fetches, {{0, MIB}, {10, MIB}});
}
