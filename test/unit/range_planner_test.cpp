#include "core/split/range_planner.hpp"
#include "core/common/io_settings.hpp"

#include <gtest/gtest.h>

#include <random>

using namespace httpfs2;

static void ExpectExactCover(const std::vector<ByteRange> &pieces, uint64_t offset, uint64_t length) {
	uint64_t position = offset;
	for (auto &piece : pieces) {
		EXPECT_EQ(piece.offset, position);
		EXPECT_GT(piece.length, 0u);
		position += piece.length;
	}
	EXPECT_EQ(position, offset + length);
}

TEST(RangePlanner, SplitsIntoChunks) {
	RangePlanner planner(16 * MiB, 2 * MiB);
	auto pieces = planner.Plan(0, 128 * MiB, 4);
	ASSERT_EQ(pieces.size(), 8u);
	for (auto &piece : pieces) {
		EXPECT_EQ(piece.length, 16 * MiB);
	}
	ExpectExactCover(pieces, 0, 128 * MiB);
}

TEST(RangePlanner, SmallReadsAreCutForTheFanout) {
	RangePlanner planner(16 * MiB, 2 * MiB);
	EXPECT_EQ(planner.Plan(0, 8 * MiB, 4).size(), 4u);
	// never below min_bytes / 2 per piece
	EXPECT_EQ(planner.Plan(0, 3 * MiB, 4).size(), 3u);
	EXPECT_EQ(planner.Plan(0, 2 * MiB, 4).size(), 2u);
	EXPECT_EQ(planner.Plan(0, 8 * MiB, 1).size(), 1u);
}

TEST(RangePlanner, PieceCountIsWholeWaves) {
	RangePlanner planner(16 * MiB, 2 * MiB);
	// 9 chunks of 16 MiB on 4 streams would leave one stream a lone extra round trip: 12 smaller pieces instead
	EXPECT_EQ(planner.Plan(0, 144 * MiB, 4).size(), 12u);
	EXPECT_EQ(planner.Plan(0, 128 * MiB, 3).size(), 9u);
	// but never below min_bytes / 2 per piece
	EXPECT_EQ(RangePlanner(1 * MiB, 2 * MiB).Plan(0, 5 * MiB, 4).size(), 5u);
}

TEST(RangePlanner, ShouldSplitFollowsMinBytes) {
	RangePlanner planner(16 * MiB, 2 * MiB);
	EXPECT_FALSE(planner.ShouldSplit(2 * MiB - 1));
	EXPECT_TRUE(planner.ShouldSplit(2 * MiB));
	EXPECT_FALSE(planner.ShouldSplit(0));
}

TEST(RangePlanner, RandomPlansCoverExactlyWithNearEqualPieces) {
	std::mt19937_64 rng(42);
	for (int i = 0; i < 5000; i++) {
		uint64_t chunk = 64 * KiB + rng() % (4 * MiB);
		uint64_t min_bytes = 64 * KiB + rng() % (4 * MiB);
		uint64_t fanout = 1 + rng() % 16;
		uint64_t offset = rng() % (1ULL << 40);
		uint64_t length = 1 + rng() % (64 * MiB);
		auto pieces = RangePlanner(chunk, min_bytes).Plan(offset, length, fanout);
		ExpectExactCover(pieces, offset, length);
		uint64_t smallest = UINT64_MAX, largest = 0;
		for (auto &piece : pieces) {
			smallest = std::min(smallest, piece.length);
			largest = std::max(largest, piece.length);
			EXPECT_LE(piece.length, chunk);
		}
		EXPECT_LE(largest - smallest, 1u);
	}
}

TEST(RangePlanner, EmptyReadHasNoPieces) {
	EXPECT_TRUE(RangePlanner(MiB, MiB).Plan(10, 0, 4).empty());
}
