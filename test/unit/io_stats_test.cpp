#include "core/common/io_stats.hpp"

#include <gtest/gtest.h>

using namespace httpfs2;

TEST(IoStats, CountsAndResets) {
	IoStats stats;
	for (int i = 0; i < 3; i++) {
		stats.RecordRead(70);
	}
	stats.RecordPassThrough();
	stats.RecordCheckedGet();
	stats.RecordSplit(4);
	stats.RecordSplit(4);
	stats.SubReadStarted();
	stats.SubReadStarted();
	stats.SubReadFinished(50, 10);
	stats.SubReadFinished(50, 10);
	stats.Add(Counter::ERRORS);
	auto snapshot = stats.Snapshot();
	EXPECT_EQ(snapshot.Get(Counter::READS), 3u);
	EXPECT_EQ(snapshot.Get(Counter::BYTES_READ), 210u);
	EXPECT_EQ(snapshot.Get(Counter::READS_SPLIT), 2u);
	EXPECT_EQ(snapshot.Get(Counter::READS_PASSED_THROUGH), 1u);
	EXPECT_EQ(snapshot.Get(Counter::CHECKED_GETS), 1u);
	// One pass-through, one checked GET and one request per sub-read.
	EXPECT_EQ(snapshot.Get(Counter::READER_REQUESTS), 4u);
	EXPECT_EQ(snapshot.fanout_histogram[4], 2u);
	EXPECT_EQ(snapshot.Get(Counter::IN_FLIGHT_PEAK), 2u);
	EXPECT_EQ(snapshot.Get(Counter::SUB_READ_BYTES), 100u);
	EXPECT_EQ(snapshot.Get(Counter::ERRORS), 1u);
	stats.Reset();
	EXPECT_EQ(stats.Snapshot().Get(Counter::READS), 0u);
	EXPECT_EQ(stats.Snapshot().fanout_histogram[4], 0u);
}

TEST(IoStats, EveryCounterHasOneColumnInOrder) {
	for (size_t i = 0; i < COUNTER_COUNT; i++) {
		EXPECT_EQ(static_cast<size_t>(COUNTER_SPECS[i].counter), i) << COUNTER_SPECS[i].column;
	}
}
