// FolderProofs: a folder is listed once per query whatever its listing gave, the files it named proven to later opens,
// opens that come while it is listed wait for that listing, a failed listing proves nothing, and a listing that ends
// after the query ended is not the next query's.
#include "core/cache/folder_proofs.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

using namespace httpfs2;
using Paths = std::unordered_set<std::string>;

namespace {

FolderProofs::List Listing(std::atomic<int> &listings, Paths proved, bool ok = true) {
	return [&listings, proved, ok](Paths &into) {
		listings++;
		into = proved;
		return ok;
	};
}

//! A listing that holds until released, begun by a first open of the folder on a thread of its own.
struct HeldListing {
	FolderProofs &proofs;
	Paths proved;
	std::atomic<int> listings {0};
	std::promise<void> entered, release;
	std::shared_future<void> released = release.get_future().share();
	FolderProofs::List list = [this](Paths &into) {
		listings++;
		entered.set_value();
		released.wait();
		into = proved;
		return true;
	};
	std::future<bool> first;

	HeldListing(FolderProofs &proofs_p, Paths proved_p, const std::string &path)
	    : proofs(proofs_p), proved(std::move(proved_p)) {
		first = std::async(std::launch::async, [this, path] { return proofs.Proves(path, list, nullptr); });
		entered.get_future().wait();
	}
};

} // namespace

TEST(FolderProofs, AFolderIsListedOnceAndProvesTheFilesItNamedToLaterOpens) {
	FolderProofs proofs;
	std::atomic<int> listings {0};
	auto list = Listing(listings, {"s3://b/t/a.parquet", "s3://b/t/b.parquet"});
	ASSERT_TRUE(proofs.Proves("s3://b/t/a.parquet", list, nullptr));
	ASSERT_TRUE(proofs.Proves("s3://b/t/b.parquet", list, nullptr));
	// A file the listing did not name is not proven, and the folder is not listed again for it.
	EXPECT_FALSE(proofs.Proves("s3://b/t/c.parquet", list, nullptr));
	EXPECT_EQ(listings.load(), 1);
	// Another folder is a listing of its own.
	EXPECT_FALSE(proofs.Proves("s3://b/u/a.parquet", list, nullptr));
	EXPECT_EQ(listings.load(), 2);
}

TEST(FolderProofs, AFailedListingProvesNothingAndIsNotSentAgainInTheQuery) {
	FolderProofs proofs;
	std::atomic<int> listings {0};
	auto list = Listing(listings, {"s3://b/t/a.parquet"}, false);
	EXPECT_FALSE(proofs.Proves("s3://b/t/a.parquet", list, nullptr));
	EXPECT_FALSE(proofs.Proves("s3://b/t/a.parquet", list, nullptr));
	EXPECT_EQ(listings.load(), 1);
	FolderProofs::List throwing = [](Paths &) -> bool {
		throw std::runtime_error("network");
	};
	EXPECT_FALSE(proofs.Proves("s3://b/u/a.parquet", throwing, nullptr));
}

TEST(FolderProofs, EachQueryListsAgain) {
	FolderProofs proofs;
	std::atomic<int> listings {0};
	ASSERT_TRUE(proofs.Proves("s3://b/t/a.parquet", Listing(listings, {"s3://b/t/a.parquet"}), nullptr));
	proofs.Clear();
	// The next query's listing no longer names the file (it was removed): not proven.
	EXPECT_FALSE(proofs.Proves("s3://b/t/a.parquet", Listing(listings, {"s3://b/t/b.parquet"}), nullptr));
	EXPECT_EQ(listings.load(), 2);
}

TEST(FolderProofs, OpensDuringTheListingWaitForIt) {
	FolderProofs proofs;
	HeldListing held(proofs, {"s3://b/t/a.parquet", "s3://b/t/b.parquet"}, "s3://b/t/a.parquet");
	auto second =
	    std::async(std::launch::async, [&] { return proofs.Proves("s3://b/t/b.parquet", held.list, nullptr); });
	EXPECT_EQ(second.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
	held.release.set_value();
	EXPECT_TRUE(held.first.get());
	EXPECT_TRUE(second.get());
	EXPECT_EQ(held.listings.load(), 1);
}

TEST(FolderProofs, AWaitingOpenGivesUpWhenToldAndALateListingIsNotTheNextQuerys) {
	FolderProofs proofs;
	HeldListing held(proofs, {"s3://b/t/a.parquet"}, "s3://b/t/a.parquet");
	EXPECT_FALSE(proofs.Proves("s3://b/t/a.parquet", held.list, [] { return true; }));
	proofs.Clear(); // the query ended while its listing was under way
	held.release.set_value();
	EXPECT_FALSE(held.first.get());
	std::atomic<int> listings {0};
	ASSERT_TRUE(proofs.Proves("s3://b/t/a.parquet", Listing(listings, {"s3://b/t/a.parquet"}), nullptr));
	EXPECT_EQ(held.listings.load() + listings.load(), 2);
}

TEST(FolderProofs, AnOpenThatMayNotListSeesOnlyWhatAListingProved) {
	FolderProofs proofs;
	std::atomic<int> listings {0};
	EXPECT_FALSE(proofs.Proves("s3://b/t/a.parquet", nullptr, nullptr));
	// It left nothing behind: the next open lists the folder.
	ASSERT_TRUE(
	    proofs.Proves("s3://b/t/b.parquet", Listing(listings, {"s3://b/t/a.parquet", "s3://b/t/b.parquet"}), nullptr));
	EXPECT_TRUE(proofs.Proves("s3://b/t/a.parquet", nullptr, nullptr));
	EXPECT_EQ(listings.load(), 1);
}
