// What one query remembers of fetches made ahead of its opens: QueryVersions (an open waits for a fetch under way,
// takes over one still queued, takes what a fetch delivered once) and DataFileOrder (which data files' tails to fetch
// as an Iceberg scan opens them in its manifests' order, and none when it skips files), and FolderOrder (when a
// list of a folder's files is followed by listing the folder, and which footers its opens fetch ahead).

#include "adapter/prefetch/folder_prefetch.hpp"
#include "adapter/prefetch/manifest_prefetch.hpp"
#include "adapter/common/query_versions.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

using httpfs2::DataFileOrder;
using httpfs2::FolderOrder;
using httpfs2::ListedFile;
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

vector<string> Files(const string &manifest, size_t count) {
	vector<string> files;
	for (size_t i = 0; i < count; i++) {
		files.push_back("s3://b/t/data/" + manifest + "-" + std::to_string(i) + ".parquet");
	}
	return files;
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

TEST(DataFileOrder, AScanInTheManifestsOrderFetchesTheNextTailsAhead) {
	DataFileOrder order;
	order.Listed({"m0", "m1"});
	auto generation = order.Generation();
	order.Parsed(generation, "m0", Files("m0", 3));
	order.Parsed(generation, "m1", Files("m1", 10));
	auto ahead = order.Opened(Files("m0", 3)[0]);
	ASSERT_EQ(ahead.size(), DataFileOrder::WINDOW) << "the list's first file: a window ahead, across manifests";
	EXPECT_EQ(ahead[0], Files("m0", 3)[1]);
	EXPECT_EQ(ahead[2], Files("m1", 10)[0]);
	EXPECT_EQ(ahead.back(), Files("m1", 10)[5]);
	ahead = order.Opened(Files("m0", 3)[1]);
	ASSERT_EQ(ahead.size(), 1u) << "a file fetched ahead opened: the window moves on by one";
	EXPECT_EQ(ahead[0], Files("m1", 10)[6]);
	EXPECT_TRUE(order.Opened(Files("m0", 3)[1]).empty()) << "opened again in the query";
	EXPECT_TRUE(order.Opened("s3://b/other.parquet").empty()) << "named by no manifest";
}

TEST(DataFileOrder, AScanThatSkipsFilesFetchesNothingAhead) {
	DataFileOrder order;
	order.Listed({"m0"});
	order.Parsed(order.Generation(), "m0", Files("m0", 40));
	auto files = Files("m0", 40);
	EXPECT_TRUE(order.Opened(files[20]).empty()) << "the file before it was not opened";
	EXPECT_TRUE(order.Opened(files[30]).empty());
	EXPECT_EQ(order.Opened(files[31]).size(), DataFileOrder::WINDOW) << "two in a row: the scan follows the order";
}

TEST(DataFileOrder, AFileOpenedBeforeItsManifestWasParsedStillLeadsTheNext) {
	DataFileOrder order;
	order.Listed({"m0"});
	auto files = Files("m0", 12);
	EXPECT_TRUE(order.Opened(files[0]).empty()) << "no manifest names it yet";
	order.Parsed(order.Generation(), "m0", files);
	EXPECT_EQ(order.Opened(files[1]).size(), DataFileOrder::WINDOW) << "the file before it was opened";
}

TEST(DataFileOrder, OnlyParsedManifestsOfThisQueryAreFollowed) {
	DataFileOrder order;
	order.Listed({"m0", "m1"});
	auto stale = order.Generation();
	order.Clear(); // the query ended
	order.Listed({"m0", "m1"});
	order.Parsed(stale, "m0", Files("m0", 3));
	EXPECT_TRUE(order.Opened(Files("m0", 3)[0]).empty()) << "parsed for a query that ended";
	order.Parsed(order.Generation(), "m1", Files("m1", 3));
	EXPECT_TRUE(order.Opened(Files("m1", 3)[0]).empty()) << "the file before it is behind a manifest not parsed";
	order.Parsed(order.Generation(), "m0", Files("m0", 3));
	auto ahead = order.Opened(Files("m0", 3)[1]);
	ASSERT_EQ(ahead.size(), 3u) << "up to the end of the list: m0's last and m1's two not opened";
	EXPECT_EQ(ahead[0], Files("m0", 3)[2]);
	EXPECT_EQ(ahead[1], Files("m1", 3)[1]);
}

namespace {

vector<ListedFile> Listing(const string &folder, size_t first, size_t count) {
	vector<ListedFile> files;
	for (size_t i = first; i < first + count; i++) {
		ListedFile file;
		file.path = folder + "part-" + std::to_string(100 + i) + ".parquet";
		file.version.size = 1000 + i;
		file.version.etag = "\"" + std::to_string(i) + "\"";
		files.push_back(file);
	}
	return files;
}

vector<string> Paths(const vector<ListedFile> &files) {
	vector<string> paths;
	for (auto &file : files) {
		paths.push_back(file.path);
	}
	return paths;
}

} // namespace

TEST(FolderOrder, TheSecondFileOfAFolderListsAfterTheFirstAndIsFollowedWhenItComesNext) {
	FolderOrder order;
	auto all = Listing("s3://b/d/", 0, 40);
	EXPECT_EQ(order.ListAfter(all[0].path), "");           // the first file: nothing to list after yet
	EXPECT_EQ(order.ListAfter(all[0].path), "");           // opened again (the scan after the bind)
	EXPECT_EQ(order.ListAfter("s3://b/other/x.parquet"), ""); // another folder is watched on its own
	EXPECT_EQ(order.ListAfter(all[2].path), all[0].path);  // a scan's threads open a few at once
	EXPECT_EQ(order.ListAfter(all[1].path), "");           // listing under way
	vector<ListedFile> listed(all.begin() + 1, all.begin() + 21);
	EXPECT_TRUE(order.Listed(all[0].path, all[2].path, listed, true));
	// The opening file first, then DEPTH after it; each footer asked for once.
	EXPECT_EQ(Paths(order.Ahead(all[2].path)), Paths(vector<ListedFile>(all.begin() + 2, all.begin() + 19)));
	EXPECT_EQ(Paths(order.Ahead(all[1].path)), vector<string> {all[1].path});
	EXPECT_EQ(Paths(order.Ahead(all[3].path)), vector<string> {all[19].path});
	EXPECT_TRUE(order.Ahead(all[0].path).empty()); // listed after it: not in the listing
	// Near the end of what was listed (and more follows): list after the last, once.
	EXPECT_EQ(order.ListAfter(all[3].path), "");
	EXPECT_EQ(order.ListAfter(all[5].path), all[20].path);
	EXPECT_EQ(order.ListAfter(all[6].path), "");
	EXPECT_TRUE(order.Listed(all[20].path, all[5].path, vector<ListedFile>(all.begin() + 21, all.end()), false));
	EXPECT_EQ(Paths(order.Ahead(all[6].path)), Paths(vector<ListedFile>(all.begin() + 20, all.begin() + 23)));
	EXPECT_EQ(order.ListAfter(all[30].path), ""); // nothing more follows
	order.Clear();
	EXPECT_TRUE(order.Ahead(all[6].path).empty());
}

TEST(FolderOrder, AListInAnotherOrderIsListedOnceOrNever) {
	FolderOrder order;
	auto all = Listing("s3://b/d/", 0, 20);
	// Backwards: nothing sorts after the first file.
	EXPECT_EQ(order.ListAfter(all[10].path), "");
	EXPECT_EQ(order.ListAfter(all[9].path), "");
	EXPECT_EQ(order.ListAfter(all[8].path), "");
	// Skipping: the second file is not among the first SLACK listed after the first.
	EXPECT_EQ(order.ListAfter(all[15].path), all[10].path);
	EXPECT_FALSE(order.Listed(all[10].path, all[15].path, vector<ListedFile>(all.begin() + 11, all.end()), false));
	EXPECT_TRUE(order.Ahead(all[15].path).empty());
	EXPECT_EQ(order.ListAfter(all[16].path), "");
	// A listing that failed leaves the folder unfollowed too.
	auto other = Listing("s3://b/e/", 0, 5);
	EXPECT_EQ(order.ListAfter(other[0].path), "");
	EXPECT_EQ(order.ListAfter(other[1].path), other[0].path);
	EXPECT_FALSE(order.Listed(other[0].path, other[1].path, {}, false));
	EXPECT_TRUE(order.Ahead(other[1].path).empty());
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
