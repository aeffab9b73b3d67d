#include "core/common/read_stats.hpp"
#include "core/requests/url_redaction.hpp"

#include <gtest/gtest.h>

using namespace httpfs2;

TEST(UrlRedaction, DropsQueryAndUserInfo) {
	EXPECT_EQ(RedactUrl("s3://bucket/key.parquet"), "s3://bucket/key.parquet");
	EXPECT_EQ(RedactUrl("https://host/obj?X-Amz-Signature=abc&X-Amz-Credential=AKIA"), "https://host/obj?<redacted>");
	EXPECT_EQ(RedactUrl("http://user:secret@host:9000/obj"), "http://host:9000/obj");
	EXPECT_EQ(RedactUrlIn("GET https://h/o?sig=1 failed: https://h/o?sig=1", "https://h/o?sig=1"),
	          "GET https://h/o?<redacted> failed: https://h/o?<redacted>");
}

TEST(ReadStats, CountsAndResets) {
	ReadStats stats;
	for (int i = 0; i < 3; i++) {
		stats.RecordRead(70);
	}
	stats.RecordPassThrough();
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
	// One pass-through plus one request per sub-read.
	EXPECT_EQ(snapshot.Get(Counter::READER_REQUESTS), 3u);
	EXPECT_EQ(snapshot.fanout_histogram[4], 2u);
	EXPECT_EQ(snapshot.Get(Counter::IN_FLIGHT_PEAK), 2u);
	EXPECT_EQ(snapshot.Get(Counter::SUB_READ_BYTES), 100u);
	EXPECT_EQ(snapshot.Get(Counter::ERRORS), 1u);
	stats.Reset();
	EXPECT_EQ(stats.Snapshot().Get(Counter::READS), 0u);
	EXPECT_EQ(stats.Snapshot().fanout_histogram[4], 0u);
}

TEST(ReadStats, EveryCounterHasOneColumnInOrder) {
	for (size_t i = 0; i < COUNTER_COUNT; i++) {
		EXPECT_EQ(static_cast<size_t>(COUNTER_SPECS[i].counter), i) << COUNTER_SPECS[i].column;
	}
}
