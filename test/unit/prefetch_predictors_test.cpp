// The predictors of core/prefetch: ListingPredictor (the footers of the files a glob listed after the one opening),
// DataFilePredictor (which data files' tails to fetch as an Iceberg scan opens them in its manifests' order, and none
// when it skips files) and FolderPredictor (when a list of a folder's files is followed by listing the folder, and
// which footers its opens predict).

#include "core/prefetch/data_file_predictor.hpp"
#include "core/prefetch/folder_predictor.hpp"
#include "core/prefetch/listing_predictor.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using httpfs2::DataFilePredictor;
using httpfs2::FolderPredictor;
using httpfs2::ListedManifest;
using httpfs2::ListedPath;
using httpfs2::ListingPredictor;
using httpfs2::OpenPrediction;
using httpfs2::PredictedBytes;
using httpfs2::PrefetchLimits;
using std::string;
using std::vector;

namespace {

vector<string> Files(const string &manifest, size_t count) {
	vector<string> files;
	for (size_t i = 0; i < count; i++) {
		files.push_back("s3://b/t/data/" + manifest + "-" + std::to_string(i) + ".parquet");
	}
	return files;
}

vector<ListedManifest> List(const vector<string> &paths) {
	vector<ListedManifest> list;
	for (auto &path : paths) {
		list.push_back(ListedManifest {path, 1000});
	}
	return list;
}

//! The paths of predictions or listed files.
template <class T>
vector<string> Paths(const vector<T> &items) {
	vector<string> paths;
	for (auto &item : items) {
		paths.push_back(item.path);
	}
	return paths;
}

} // namespace

TEST(DataFilePredictor, AManifestListPredictsItsManifestsWholeUpToTheLimit) {
	DataFilePredictor order;
	vector<ListedManifest> list {{"s3://b/m0.avro", 100}, {"s3://b/m1.avro", PrefetchLimits::MAX_WHOLE_BYTES + 1}};
	auto whole = order.ListRead(list);
	ASSERT_EQ(whole.size(), 1u) << "a manifest longer than the limit is left to its open";
	EXPECT_EQ(whole[0].path, "s3://b/m0.avro");
	EXPECT_EQ(whole[0].bytes, PredictedBytes::WHOLE);
	EXPECT_EQ(whole[0].length, 100u);
}

TEST(DataFilePredictor, AScanInTheManifestsOrderFetchesTheNextTailsAhead) {
	DataFilePredictor order;
	order.ListRead(List({"m0", "m1"}));
	auto generation = order.Generation();
	order.Parsed(generation, "m0", Files("m0", 3));
	order.Parsed(generation, "m1", Files("m1", 10));
	auto ahead = order.Opened(Files("m0", 3)[0]);
	ASSERT_EQ(ahead.size(), PrefetchLimits::TAILS_AHEAD) << "the list's first file: a window ahead, across manifests";
	EXPECT_EQ(ahead[0].path, Files("m0", 3)[1]);
	EXPECT_EQ(ahead[2].path, Files("m1", 10)[0]);
	EXPECT_EQ(ahead.back().path, Files("m1", 10)[5]);
	ahead = order.Opened(Files("m0", 3)[1]);
	ASSERT_EQ(ahead.size(), 1u) << "a file fetched ahead opened: the window moves on by one";
	EXPECT_EQ(ahead[0].path, Files("m1", 10)[6]);
	EXPECT_TRUE(order.Opened(Files("m0", 3)[1]).empty()) << "opened again in the query";
	EXPECT_TRUE(order.Opened("s3://b/other.parquet").empty()) << "named by no manifest";
}

TEST(DataFilePredictor, AScanThatSkipsFilesFetchesNothingAhead) {
	DataFilePredictor order;
	order.ListRead(List({"m0"}));
	order.Parsed(order.Generation(), "m0", Files("m0", 40));
	auto files = Files("m0", 40);
	EXPECT_TRUE(order.Opened(files[20]).empty()) << "the file before it was not opened";
	EXPECT_TRUE(order.Opened(files[30]).empty());
	EXPECT_EQ(order.Opened(files[31]).size(), PrefetchLimits::TAILS_AHEAD)
	    << "two in a row: the scan follows the order";
}

TEST(DataFilePredictor, AFileOpenedBeforeItsManifestWasParsedStillLeadsTheNext) {
	DataFilePredictor order;
	order.ListRead(List({"m0"}));
	auto files = Files("m0", 12);
	EXPECT_TRUE(order.Opened(files[0]).empty()) << "no manifest names it yet";
	order.Parsed(order.Generation(), "m0", files);
	EXPECT_EQ(order.Opened(files[1]).size(), PrefetchLimits::TAILS_AHEAD) << "the file before it was opened";
}

TEST(DataFilePredictor, OnlyParsedManifestsOfThisQueryAreFollowed) {
	DataFilePredictor order;
	order.ListRead(List({"m0", "m1"}));
	auto stale = order.Generation();
	order.Clear(); // the query ended
	order.ListRead(List({"m0", "m1"}));
	order.Parsed(stale, "m0", Files("m0", 3));
	EXPECT_TRUE(order.Opened(Files("m0", 3)[0]).empty()) << "parsed for a query that ended";
	order.Parsed(order.Generation(), "m1", Files("m1", 3));
	EXPECT_TRUE(order.Opened(Files("m1", 3)[0]).empty()) << "the file before it is behind a manifest not parsed";
	order.Parsed(order.Generation(), "m0", Files("m0", 3));
	auto ahead = order.Opened(Files("m0", 3)[1]);
	ASSERT_EQ(ahead.size(), 3u) << "up to the end of the list: m0's last and m1's two not opened";
	EXPECT_EQ(ahead[0].path, Files("m0", 3)[2]);
	EXPECT_EQ(ahead[1].path, Files("m1", 3)[1]);
}

namespace {

vector<ListedPath> Listing(const string &folder, size_t first, size_t count) {
	vector<ListedPath> files;
	for (size_t i = first; i < first + count; i++) {
		ListedPath file;
		file.path = folder + "part-" + std::to_string(100 + i) + ".parquet";
		file.version.size = 1000 + i;
		file.version.etag = "\"" + std::to_string(i) + "\"";
		files.push_back(file);
	}
	return files;
}

} // namespace

TEST(FolderPredictor, TheSecondFileOfAFolderListsAfterTheFirstAndIsFollowedWhenItComesNext) {
	FolderPredictor order;
	const std::ptrdiff_t depth = PrefetchLimits::FOOTERS_AHEAD;
	auto all = Listing("s3://b/d/", 0, 2 * depth + 8);
	auto at = [&](std::ptrdiff_t index) {
		return all.begin() + index;
	};
	EXPECT_EQ(order.ListAfter(all[0].path), "");              // the first file: nothing to list after yet
	EXPECT_EQ(order.ListAfter(all[0].path), "");              // opened again (the scan after the bind)
	EXPECT_EQ(order.ListAfter("s3://b/other/x.parquet"), ""); // another folder is watched on its own
	EXPECT_EQ(order.ListAfter(all[2].path), all[0].path);     // a scan's threads open a few at once
	EXPECT_EQ(order.ListAfter(all[1].path), "");              // listing under way
	vector<ListedPath> listed(at(1), at(depth + 5));
	EXPECT_TRUE(order.Listed(all[0].path, all[2].path, listed, true));
	// The opening file first, then FOOTERS_AHEAD after it; each footer asked for once.
	EXPECT_EQ(Paths(order.Ahead(all[2].path)), Paths(vector<ListedPath>(at(2), at(depth + 3))));
	EXPECT_EQ(Paths(order.Ahead(all[1].path)), vector<string> {all[1].path});
	EXPECT_EQ(Paths(order.Ahead(all[3].path)), vector<string> {all[depth + 3].path});
	EXPECT_TRUE(order.Ahead(all[0].path).empty()); // listed after it: not in the listing
	// Within FOOTERS_AHEAD of the end of what was listed (and more follows): list after the last, once.
	EXPECT_EQ(order.ListAfter(all[3].path), "");
	EXPECT_EQ(order.ListAfter(all[5].path), all[depth + 4].path);
	EXPECT_EQ(order.ListAfter(all[6].path), "");
	EXPECT_TRUE(order.Listed(all[depth + 4].path, all[5].path, vector<ListedPath>(at(depth + 5), all.end()), false));
	EXPECT_EQ(Paths(order.Ahead(all[6].path)), Paths(vector<ListedPath>(at(depth + 4), at(depth + 7))));
	EXPECT_EQ(order.ListAfter(all[30].path), ""); // nothing more follows
	order.Clear();
	EXPECT_TRUE(order.Ahead(all[6].path).empty());
}

TEST(FolderPredictor, AListInAnotherOrderIsListedOnceOrNever) {
	FolderPredictor order;
	auto all = Listing("s3://b/d/", 0, 20);
	// Backwards: nothing sorts after the first file.
	EXPECT_EQ(order.ListAfter(all[10].path), "");
	EXPECT_EQ(order.ListAfter(all[9].path), "");
	EXPECT_EQ(order.ListAfter(all[8].path), "");
	// Skipping: the second file is not among the first SLACK listed after the first.
	EXPECT_EQ(order.ListAfter(all[15].path), all[10].path);
	EXPECT_FALSE(order.Listed(all[10].path, all[15].path, vector<ListedPath>(all.begin() + 11, all.end()), false));
	EXPECT_TRUE(order.Ahead(all[15].path).empty());
	EXPECT_EQ(order.ListAfter(all[16].path), "");
	// A listing that failed leaves the folder unfollowed too.
	auto other = Listing("s3://b/e/", 0, 5);
	EXPECT_EQ(order.ListAfter(other[0].path), "");
	EXPECT_EQ(order.ListAfter(other[1].path), other[0].path);
	EXPECT_FALSE(order.Listed(other[0].path, other[1].path, {}, false));
	EXPECT_TRUE(order.Ahead(other[1].path).empty());
}

TEST(FolderPredictor, OpensOfFilesAListingWillNameWaitForIt) {
	// DuckDB 2.0 opens a list's files ahead, many at once: each of them waits for the listing under way rather than
	// send a tail GET of its own (256 KiB, of which DuckDB reads 16 KiB of a small file).
	FolderPredictor order;
	auto all = Listing("s3://b/d/", 0, 10);
	auto never = [] {
		return false;
	};
	EXPECT_EQ(order.ListAfter(all[0].path), "");
	EXPECT_FALSE(order.AwaitListing(all[3].path, never)) << "no listing under way";
	EXPECT_EQ(order.ListAfter(all[1].path), all[0].path);
	EXPECT_FALSE(order.AwaitListing(all[0].path, never)) << "listed after it: the listing will not name it";
	EXPECT_FALSE(order.AwaitListing("s3://b/other/x.parquet", never)) << "another folder";
	std::atomic<bool> waited {false};
	std::atomic<bool> returned {false};
	std::thread open([&] {
		waited = order.AwaitListing(all[3].path, never);
		returned = true;
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(120)); // over two of its give-up checks
	EXPECT_FALSE(returned) << "it waits while the listing is under way";
	EXPECT_TRUE(order.Listed(all[0].path, all[1].path, vector<ListedPath>(all.begin() + 1, all.end()), false));
	order.ListingDone(all[0].path);
	open.join();
	EXPECT_TRUE(waited);
	EXPECT_FALSE(order.AwaitListing(all[4].path, never)) << "the listing is over";

	// An interrupted query stops waiting.
	FolderPredictor interrupted;
	auto other = Listing("s3://b/e/", 0, 5);
	interrupted.ListAfter(other[0].path);
	EXPECT_EQ(interrupted.ListAfter(other[1].path), other[0].path);
	EXPECT_FALSE(interrupted.AwaitListing(other[2].path, [] { return true; }));
}

TEST(ListingPredictor, AnOpenPredictsTheFootersOfTheParquetFilesListedAfterIt) {
	ListingPredictor listings;
	vector<ListedPath> files;
	// More files than are predicted at once.
	const size_t listed = 2 * PrefetchLimits::FOOTERS_AHEAD + 8;
	for (size_t i = 0; i < listed; i++) {
		ListedPath file;
		file.path = "s3://b/g/part-" + std::to_string(1000 + i) + (i == 3 ? ".csv" : ".parquet");
		file.version_known = i != 5;
		file.version.size = 1000 + i;
		files.push_back(file);
	}
	EXPECT_TRUE(listings.Listed(files, false).empty()) << "a listing alone (glob()) predicts nothing";
	auto first = listings.Listed(files, true);
	ASSERT_EQ(first.size(), PrefetchLimits::FOOTERS_AHEAD - 1) << "a reader's listing: its first files, not the CSV";
	EXPECT_EQ(first[0].path, files[0].path);
	EXPECT_EQ(first[0].bytes, PredictedBytes::FOOTER);
	EXPECT_FALSE(first[4].version_known) << "listed without a version: the executor looks it up where it can";
	auto after = listings.Opened(files[20].path);
	ASSERT_EQ(after.size(), PrefetchLimits::FOOTERS_AHEAD);
	EXPECT_EQ(after[0].path, files[21].path);
	EXPECT_EQ(after[0].version.size, files[21].version.size);
	EXPECT_EQ(Paths(listings.Opened(files[listed - 2].path)), vector<string> {files[listed - 1].path})
	    << "up to the listing's end";
	EXPECT_TRUE(listings.Opened("s3://b/other.parquet").empty()) << "in no listing";
	EXPECT_TRUE(listings.Listed({files[0]}, true).empty()) << "one file announces nothing";
}

TEST(ListingPredictor, AFileReadWholePredictsTheContentsOfTheNextFilesLikeIt) {
	ListingPredictor listings;
	vector<ListedPath> files;
	for (size_t i = 0; i < 9; i++) {
		ListedPath file;
		file.path = "s3://b/blobs/" + std::to_string(i) + (i == 7 ? ".parquet" : ".bin");
		file.version_known = i != 4;
		file.version.size = i == 5 ? PrefetchLimits::MAX_CONTENTS_BYTES + 1 : 1000 + i;
		files.push_back(file);
	}
	listings.Listed(files, false);
	static_assert(PrefetchLimits::CONTENTS_AHEAD == 2, "the cases below take two files ahead");
	auto next = listings.ReadWhole(files[0].path);
	ASSERT_EQ(Paths(next), (vector<string> {files[1].path, files[2].path})) << "CONTENTS_AHEAD files";
	EXPECT_EQ(next[0].bytes, PredictedBytes::CONTENTS);
	EXPECT_TRUE(next[0].version_known);
	EXPECT_EQ(next[1].version.size, files[2].version.size);
	EXPECT_EQ(Paths(listings.ReadWhole(files[2].path)), vector<string> {files[3].path})
	    << "up to a file listed without its version";
	EXPECT_TRUE(listings.ReadWhole(files[4].path).empty()) << "a file too large to hold next";
	EXPECT_EQ(Paths(listings.ReadWhole(files[5].path)), vector<string> {files[6].path}) << "up to a Parquet file";
	EXPECT_TRUE(listings.ReadWhole(files[6].path).empty()) << "a Parquet file next: its footer is what is read first";
	EXPECT_TRUE(listings.ReadWhole(files[7].path).empty()) << "a Parquet file read whole predicts no contents";
	EXPECT_TRUE(listings.ReadWhole(files[8].path).empty()) << "the listing's last file";
	EXPECT_TRUE(listings.ReadWhole("s3://b/other.bin").empty()) << "in no listing";
}

TEST(QueryFiles, AFileTheQueryOpenedOrHadPredictedIsNotPredictedAgain) {
	// DuckDB 2.0 opens files ahead of its scan: file 9 was opened (and read) before file 2's open predicts 3 to 10.
	httpfs2::QueryFiles files;
	auto listed = Listing("s3://b/d/", 0, 12);
	auto footers = [&](size_t from, size_t to) {
		vector<OpenPrediction> predictions;
		for (auto index = from; index < to; index++) {
			predictions.push_back(OpenPrediction::Footer(listed[index]));
		}
		return predictions;
	};
	EXPECT_EQ(Paths(files.Unseen(footers(1, 3), listed[0].path)), Paths(vector<ListedPath>(&listed[1], &listed[3])));
	EXPECT_TRUE(files.Unseen({}, listed[9].path).empty());
	auto next = Paths(files.Unseen(footers(3, 11), listed[2].path));
	EXPECT_EQ(next, (vector<string> {listed[3].path, listed[4].path, listed[5].path, listed[6].path, listed[7].path,
	                                 listed[8].path, listed[10].path}));
	EXPECT_TRUE(files.Unseen(footers(0, 11), listed[5].path).empty()) << "every one opened or predicted already";
	// An open may predict its own footer: the path it opens is remembered after its predictions.
	EXPECT_EQ(Paths(files.Unseen(footers(11, 12), listed[11].path)), vector<string> {listed[11].path});
	files.Clear();
	EXPECT_EQ(files.Unseen(footers(0, 12), "").size(), 12u) << "a new query";
}
