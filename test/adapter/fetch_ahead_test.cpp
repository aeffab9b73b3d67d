// What one query remembers of fetches made ahead of its opens (QueryVersions): an open waits for a fetch under way,
// takes over one still queued, takes what a fetch delivered once. What is predicted is core/prefetch's
// (test/unit/prefetch_predictors_test.cpp).

#include "adapter/common/query_versions.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

using httpfs2::ObjectTail;
using httpfs2::ObjectVersion;
using httpfs2::QueryVersions;
using std::string;
using std::vector;

namespace {

std::shared_ptr<ObjectTail> Tail(uint64_t size, const string &etag) {
	auto tail = std::make_shared<ObjectTail>();
	tail->version.size = size;
	tail->version.etag = etag;
	tail->range = httpfs2::ByteRange {size - 3, 3};
	tail->bytes = "end";
	return tail;
}

} // namespace

TEST(QueryVersions, AnOpenWaitsForAFetchUnderWayAndTakesItsBytesOnce) {
	QueryVersions query;
	auto expected = query.Expect("s3://b/f.parquet");
	ASSERT_NE(expected, 0u);
	EXPECT_EQ(query.Expect("s3://b/f.parquet"), 0u) << "awaited already";
	ASSERT_TRUE(query.Start("s3://b/f.parquet", expected));
	std::atomic<bool> found {false};
	ObjectVersion version;
	std::thread open([&]() { found = query.Find("s3://b/f.parquet", version); });
	std::this_thread::sleep_for(std::chrono::milliseconds(100));
	EXPECT_FALSE(found) << "waits while the fetch is under way";
	query.Deliver("s3://b/f.parquet", Tail(100, "\"abc\""), expected);
	open.join();
	ASSERT_TRUE(found);
	EXPECT_EQ(version.size, 100u);
	auto fetched = query.TakeFetched("s3://b/f.parquet");
	ASSERT_TRUE(fetched);
	EXPECT_EQ(fetched->bytes, "end");
	EXPECT_FALSE(query.TakeFetched("s3://b/f.parquet")) << "handed out once";
}

TEST(QueryVersions, AnOpenTakesOverAFetchStillQueued) {
	QueryVersions query;
	auto expected = query.Expect("s3://b/f.parquet");
	ObjectVersion version;
	EXPECT_FALSE(query.Find("s3://b/f.parquet", version)) << "after a short wait the open sends its own request";
	EXPECT_FALSE(query.Start("s3://b/f.parquet", expected)) << "the queued fetch is not sent";
	query.Deliver("s3://b/f.parquet", Tail(100, ""), expected);
	EXPECT_FALSE(query.Find("s3://b/f.parquet", version)) << "a late delivery is ignored";
	EXPECT_FALSE(query.TakeFetched("s3://b/f.parquet"));
}

TEST(QueryVersions, AnOpenWaitsBrieflyForAQueuedFetchToStart) {
	QueryVersions query;
	auto expected = query.Expect("s3://b/f.parquet");
	std::thread fetch([&]() {
		std::this_thread::sleep_for(std::chrono::milliseconds(2));
		ASSERT_TRUE(query.Start("s3://b/f.parquet", expected)) << "started within the open's short wait";
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
		query.Deliver("s3://b/f.parquet", Tail(100, ""), expected);
	});
	ObjectVersion version;
	EXPECT_TRUE(query.Find("s3://b/f.parquet", version)) << "then waits for its answer";
	fetch.join();
}

TEST(QueryVersions, NoFetchStartsForAPathItsOpenAsksForItself) {
	QueryVersions query;
	ObjectVersion version;
	EXPECT_FALSE(query.Find("s3://b/f.parquet", version)) << "neither known nor awaited";
	EXPECT_EQ(query.Expect("s3://b/f.parquet"), 0u) << "the open's own request is under way";
	query.Clear();
	EXPECT_NE(query.Expect("s3://b/f.parquet"), 0u) << "the next query";
}

TEST(QueryVersions, AnAbandonedFetchReleasesItsWaiters) {
	QueryVersions query;
	auto expected = query.Expect("s3://b/f.parquet");
	ASSERT_TRUE(query.Start("s3://b/f.parquet", expected));
	std::thread abandon([&]() {
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
		query.Abandon("s3://b/f.parquet", expected);
	});
	ObjectVersion version;
	EXPECT_FALSE(query.Find("s3://b/f.parquet", version));
	abandon.join();
}

TEST(QueryVersions, AVersionLearntFromAListingNeverReplacesOneTheQueryHasOrAsksFor) {
	QueryVersions query;
	ObjectVersion listed;
	listed.size = 10;
	listed.etag = "\"listed\"";
	ObjectVersion own = listed;
	own.etag = "\"own\"";
	query.Store("s3://b/known", own);
	query.Learn("s3://b/known", listed);
	ObjectVersion found;
	ASSERT_TRUE(query.Find("s3://b/known", found));
	EXPECT_EQ(found.etag, own.etag);
	// An open that found nothing asks the store itself: a listing that comes back meanwhile does not answer for it.
	EXPECT_FALSE(query.Find("s3://b/asking", found));
	query.Learn("s3://b/asking", listed);
	EXPECT_FALSE(query.Find("s3://b/asking", found));
	query.Learn("s3://b/new", listed);
	ASSERT_TRUE(query.Find("s3://b/new", found));
	EXPECT_EQ(found.etag, listed.etag);
}
