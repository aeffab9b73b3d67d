// VersionRecords in a temporary folder: a version is found within its window only, a torn or corrupt record is no
// record (and is removed), a record names its whole path, forgetting works by path and prefix, and a second
// VersionRecords on the folder (another process) sees what the first wrote.
#include "core/cache/block_cache.hpp"
#include "core/cache/version_records.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace httpfs2;

namespace {

constexpr int64_t SECOND = 1000LL * 1000 * 1000;
constexpr int64_t NOW = 1800000000LL * SECOND;

class VersionRecordsTest : public ::testing::Test {
protected:
	void SetUp() override {
		char pattern[] = "/tmp/httpfs2-version-records-XXXXXX";
		folder = mkdtemp(pattern);
	}
	void TearDown() override {
		std::system(("rm -rf '" + folder + "'").c_str());
	}
	//! The one record file under the folder.
	std::string OnlyRecordFile() {
		std::string found;
		for (auto &shard : FolderNames(folder + "/httpfs2-versions-v1")) {
			for (auto &name : FolderNames(folder + "/httpfs2-versions-v1/" + shard)) {
				EXPECT_TRUE(found.empty()) << "more than one record";
				found = folder + "/httpfs2-versions-v1/" + shard + "/" + name;
			}
		}
		return found;
	}
	std::string folder;
};

} // namespace

TEST_F(VersionRecordsTest, AVersionIsFoundWithinItsWindowOnlyAndByAnotherProcess) {
	VersionRecords records(folder);
	ASSERT_TRUE(records.Record("s3://bucket/a.parquet", "123\n456\n\"etag\"", NOW));
	VersionRecords other(folder);
	std::string version;
	EXPECT_TRUE(other.Find("s3://bucket/a.parquet", NOW - 10 * SECOND, NOW, version));
	EXPECT_EQ(version, "123\n456\n\"etag\"");
	EXPECT_FALSE(other.Find("s3://bucket/a.parquet", NOW + SECOND, NOW + 10 * SECOND, version)) << "older than asked";
	EXPECT_FALSE(other.Find("s3://bucket/a.parquet", NOW - 10 * SECOND, NOW - 5 * SECOND, version))
	    << "a record from the future (a clock set back) is not believed";
	EXPECT_FALSE(other.Find("s3://bucket/b.parquet", 0, NOW, version));
}

TEST_F(VersionRecordsTest, TheLastRecordWins) {
	VersionRecords records(folder);
	ASSERT_TRUE(records.Record("s3://bucket/a", "1\n0\n\"old\"", NOW - 100 * SECOND));
	ASSERT_TRUE(records.Record("s3://bucket/a", "1\n0\n\"new\"", NOW));
	std::string version;
	ASSERT_TRUE(records.Find("s3://bucket/a", NOW - SECOND, NOW, version));
	EXPECT_EQ(version, "1\n0\n\"new\"");
}

TEST_F(VersionRecordsTest, ATornOrCorruptRecordIsNoRecordAndIsRemoved) {
	VersionRecords records(folder);
	std::string version;
	for (int damage = 0; damage < 3; damage++) {
		ASSERT_TRUE(records.Record("s3://bucket/a", "1\n0\n\"etag\"", NOW));
		auto file = OnlyRecordFile();
		ASSERT_FALSE(file.empty());
		std::string bytes;
		ASSERT_TRUE(ReadSmallFile(file, 1 << 16, bytes));
		if (damage == 0) {
			bytes.resize(bytes.size() - 3); // torn
		} else if (damage == 1) {
			bytes[bytes.size() - 2] ^= 1; // a flipped byte of the version
		} else {
			bytes[26] ^= 1; // a flipped byte of the time
		}
		std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
		EXPECT_FALSE(records.Find("s3://bucket/a", 0, NOW, version)) << "damage " << damage;
		EXPECT_NE(access(file.c_str(), F_OK), 0) << "damage " << damage << ": the record is removed";
	}
}

TEST_F(VersionRecordsTest, ForgetsOnePathOrAPrefix) {
	VersionRecords records(folder);
	for (auto path : {"s3://bucket/x/1", "s3://bucket/x/2", "s3://bucket/y/1"}) {
		ASSERT_TRUE(records.Record(path, "1\n0\n\"e\"", NOW));
	}
	std::string version;
	records.Forget("s3://bucket/x/1");
	EXPECT_FALSE(records.Find("s3://bucket/x/1", 0, NOW, version));
	EXPECT_TRUE(records.Find("s3://bucket/x/2", 0, NOW, version));
	records.ForgetPrefix("s3://bucket/x/");
	EXPECT_FALSE(records.Find("s3://bucket/x/2", 0, NOW, version));
	EXPECT_TRUE(records.Find("s3://bucket/y/1", 0, NOW, version));
	records.ForgetPrefix("");
	EXPECT_FALSE(records.Find("s3://bucket/y/1", 0, NOW, version));
}

TEST_F(VersionRecordsTest, ClearingTheCacheForgetsTheVersionsOfWhatItClears) {
	std::string error;
	auto cache = BlockCache::Open(folder, 64 * BlockCache::BLOCK_SIZE, error);
	ASSERT_TRUE(cache) << error;
	ASSERT_TRUE(cache->Versions().Record("s3://bucket/x/1", "1\n0\n\"e\"", NOW));
	ASSERT_TRUE(cache->Versions().Record("s3://bucket/y/1", "1\n0\n\"e\"", NOW));
	cache->Clear("s3://bucket/x/");
	std::string version;
	EXPECT_FALSE(cache->Versions().Find("s3://bucket/x/1", 0, NOW, version));
	EXPECT_TRUE(cache->Versions().Find("s3://bucket/y/1", 0, NOW, version));
}
