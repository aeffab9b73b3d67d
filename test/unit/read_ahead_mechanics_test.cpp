// Read-ahead's mechanism apart from its policy: how predicted ranges merge, and which parts of a range the segments
// held so far leave to fetch.

#include "core/read_ahead/access_predictor.hpp"
#include "core/read_ahead/segments.hpp"

#include <gtest/gtest.h>

using namespace httpfs2;

namespace {

struct MergeCase {
	const char *what;
	std::vector<ByteRange> ranges;
	uint64_t merge_gap;
	//! Each merged range and its useful bytes.
	std::vector<std::pair<ByteRange, uint64_t>> merged;
};

bool operator==(const ByteRange &a, const ByteRange &b) {
	return a.offset == b.offset && a.length == b.length;
}

} // namespace

TEST(MergeRanges, FollowsTheTableOfExamples) {
	const std::vector<MergeCase> cases = {
	    {"nothing", {}, 10, {}},
	    {"one range", {{100, 50}}, 10, {{{100, 50}, 50}}},
	    {"sorted by offset", {{300, 10}, {100, 10}}, 0, {{{100, 10}, 10}, {{300, 10}, 10}}},
	    {"adjacent ranges join", {{0, 10}, {10, 10}}, 0, {{{0, 20}, 20}}},
	    {"a gap at the limit joins", {{0, 10}, {20, 10}}, 10, {{{0, 30}, 20}}},
	    {"a gap past the limit does not", {{0, 10}, {21, 10}}, 10, {{{0, 10}, 10}, {{21, 10}, 10}}},
	    {"overlaps count their bytes once", {{0, 100}, {50, 100}}, 0, {{{0, 150}, 150}}},
	    {"a range inside another adds nothing", {{0, 100}, {10, 20}}, 0, {{{0, 100}, 100}}},
	    {"chains across several gaps", {{0, 10}, {15, 10}, {30, 10}}, 5, {{{0, 40}, 30}}},
	};
	for (auto &example : cases) {
		auto merged = MergeRanges(example.ranges, example.merge_gap);
		ASSERT_EQ(merged.size(), example.merged.size()) << example.what;
		for (size_t i = 0; i < merged.size(); i++) {
			EXPECT_TRUE(merged[i].range == example.merged[i].first)
			    << example.what << ": range " << i << " is " << merged[i].range.offset << "+" << merged[i].range.length;
			EXPECT_EQ(merged[i].useful_bytes, example.merged[i].second) << example.what << ": range " << i;
		}
	}
}

TEST(Segments, MissingIsWhatNoSegmentCovers) {
	MemoryBudget budget(MiB);
	IoStats stats;
	Segments segments(budget, stats);
	ASSERT_TRUE(budget.TryReserve(30));
	segments.Add({100, 10}, 10);
	segments.Add({200, 20}, 20);
	struct Case {
		uint64_t offset, end;
		std::vector<ByteRange> missing;
	};
	const std::vector<Case> cases = {
	    {0, 50, {{0, 50}}},      {0, 300, {{0, 100}, {110, 90}, {220, 80}}},
	    {105, 205, {{110, 90}}}, {100, 110, {}},
	    {205, 215, {}},          {150, 150, {}},
	};
	for (auto &example : cases) {
		auto missing = segments.Missing(example.offset, example.end);
		ASSERT_EQ(missing.size(), example.missing.size()) << example.offset << "-" << example.end;
		for (size_t i = 0; i < missing.size(); i++) {
			EXPECT_TRUE(missing[i] == example.missing[i]) << example.offset << "-" << example.end << ": " << i;
		}
	}
	EXPECT_TRUE(segments.Overlaps({105, 1}));
	EXPECT_FALSE(segments.Overlaps({110, 90}));
	EXPECT_EQ(segments.Overlapping({0, 1000}).size(), 2u);
	EXPECT_EQ(segments.HeldBytes(), 30u);
}

TEST(Segments, DroppingCreditsTheBudgetAndCountsWhatWasWasted) {
	MemoryBudget budget(MiB);
	IoStats stats;
	Segments segments(budget, stats);
	ASSERT_TRUE(budget.TryReserve(300));
	auto queued = segments.Add({0, 100}, 100);
	auto ready = segments.Add({100, 100}, 100);
	auto read = segments.Add({200, 100}, 50);
	for (auto &segment : {ready, read}) {
		segment->state = Segment::State::READY;
	}
	segments.Consume(read, 50);
	EXPECT_FALSE(read->held) << "its useful bytes were read";
	EXPECT_EQ(stats.Snapshot().Get(Counter::READ_AHEAD_BYTES_USED), 50u);
	EXPECT_EQ(stats.Snapshot().Get(Counter::READ_AHEAD_BYTES_WASTED), 0u) << "merged-in bytes are not wasted";

	segments.DropPassed(200);
	EXPECT_FALSE(queued->held);
	EXPECT_FALSE(queued->charged) << "a segment that never fetched gives its charge back at once";
	EXPECT_EQ(stats.Snapshot().Get(Counter::READ_AHEAD_BYTES_WASTED), 100u) << "the ready segment no reader read";
	EXPECT_EQ(stats.Snapshot().Get(Counter::READ_AHEAD_BYTES_EVICTED), 100u);
	EXPECT_EQ(segments.HeldBytes(), 0u);
	ready.reset();
	read.reset();
	EXPECT_EQ(budget.InUse(), 0u) << "buffers gone, charges back";
}
