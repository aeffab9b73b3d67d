#include "core/read_stats.hpp"
#include "core/url_redaction.hpp"

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
	stats.RecordPassThrough(10);
	stats.RecordSplit(100, 4);
	stats.RecordSplit(100, 4);
	stats.SubReadStarted();
	stats.SubReadStarted();
	stats.SubReadFinished(50, 10);
	stats.SubReadFinished(50, 10);
	stats.RecordError();
	auto snapshot = stats.Snapshot();
	EXPECT_EQ(snapshot.reads, 3u);
	EXPECT_EQ(snapshot.bytes_read, 210u);
	EXPECT_EQ(snapshot.reads_split, 2u);
	EXPECT_EQ(snapshot.reads_passed_through, 1u);
	EXPECT_EQ(snapshot.fanout_histogram[4], 2u);
	EXPECT_EQ(snapshot.in_flight_peak, 2u);
	EXPECT_EQ(snapshot.sub_read_bytes, 100u);
	EXPECT_EQ(snapshot.errors, 1u);
	stats.Reset();
	EXPECT_EQ(stats.Snapshot().reads, 0u);
	EXPECT_EQ(stats.Snapshot().fanout_histogram[4], 0u);
}
