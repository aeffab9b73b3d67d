// The block cache in a temporary folder: every hit is checked byte for byte against what was put, damaged files
// are made by hand where a crash or a bad disk would leave them, and other processes are stood in for by a second
// BlockCache on the same folder and by a forked child.
#include "core/cache/block_cache.hpp"
#include "core/cache/crc32c.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <functional>
#include <set>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace httpfs2;

namespace {

constexpr uint64_t BLOCK = BlockCache::BLOCK_SIZE;

std::set<std::string> NamesIn(const std::string &folder) {
	std::set<std::string> names;
	DIR *listing = opendir(folder.c_str());
	while (auto entry = listing ? readdir(listing) : nullptr) {
		names.insert(entry->d_name);
	}
	if (listing) {
		closedir(listing);
	}
	names.erase(".");
	names.erase("..");
	return names;
}

bool IsFolder(const std::string &path) {
	struct stat status;
	return lstat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
}

void RemoveAll(const std::string &path) {
	if (IsFolder(path)) {
		// Tests take write permission away; it is given back so that what is inside can be removed.
		chmod(path.c_str(), 0700);
		for (auto &name : NamesIn(path)) {
			RemoveAll(path + "/" + name);
		}
	}
	remove(path.c_str());
}

//! The sizes of the files below `path` whose names end in `suffix` ("": all of them, version records included),
//! counted apart from the cache's own accounting.
uint64_t FileBytes(const std::string &path, const std::string &suffix) {
	uint64_t bytes = 0;
	for (auto &name : NamesIn(path)) {
		auto inside = path + "/" + name;
		struct stat status;
		if (IsFolder(inside)) {
			bytes += FileBytes(inside, suffix);
		} else if (name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix &&
		           stat(inside.c_str(), &status) == 0) {
			bytes += uint64_t(status.st_size);
		}
	}
	return bytes;
}

uint64_t BlockFileBytes(const std::string &path) {
	return FileBytes(path, ".blk");
}

uint64_t AllFileBytes(const std::string &path) {
	return FileBytes(path, "");
}

//! A folder under /tmp made for one test and removed, with all it holds, after it.
class TempFolder {
public:
	TempFolder() {
		char pattern[] = "/tmp/httpfs2-block-cache-XXXXXX";
		path = mkdtemp(pattern);
	}
	~TempFolder() {
		RemoveAll(path);
	}
	std::string path;
};

//! The bytes of block `index` of an object named by `seed`: different for every block and object.
std::string BlockBytes(const std::string &seed, uint64_t index, uint64_t length) {
	uint64_t state = std::hash<std::string>()(seed) ^ (index * 0x9e3779b97f4a7c15ULL);
	std::string bytes(length, '\0');
	for (auto &byte : bytes) {
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		byte = static_cast<char>(state >> 56);
	}
	return bytes;
}

bool FileExists(const std::string &file) {
	return access(file.c_str(), F_OK) == 0;
}

std::string FolderOf(const std::string &file) {
	return file.substr(0, file.rfind('/'));
}

void SleepForNewerTime() {
	// File times come from a coarse clock (a few milliseconds): blocks stamped apart must be this far apart.
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

class BlockCacheTest : public ::testing::Test {
protected:
	std::unique_ptr<BlockCache> OpenCache(uint64_t max_bytes) {
		std::string error;
		auto cache = BlockCache::Open(folder.path, max_bytes, error);
		EXPECT_TRUE(cache) << error;
		return cache;
	}

	//! Puts block `index` of `key` with its BlockBytes.
	void PutBlock(BlockCache &cache, const CacheKey &key, uint64_t index, uint64_t length = BLOCK) {
		auto bytes = BlockBytes(key.path + key.version, index, length);
		ASSERT_TRUE(cache.Put(key, index, bytes.data(), length)) << key.path << " block " << index;
	}

	//! Whether block `index` of `key` is a hit; a hit must hold exactly its BlockBytes.
	bool HitsExactly(BlockCache &cache, const CacheKey &key, uint64_t index, uint64_t length = BLOCK) {
		std::string out(length, '\0');
		if (!cache.Get(key, index, length, &out[0])) {
			return false;
		}
		EXPECT_TRUE(out == BlockBytes(key.path + key.version, index, length)) << key.path << " block " << index;
		return true;
	}

	//! In a forked child: puts blocks 0 to `blocks` - 1 of `key`, `rounds` times over, through a cache of its own,
	//! and exits: 0 when every Put stored its block.
	void FillInChild(uint64_t blocks, uint64_t rounds) {
		std::string error;
		auto writer = BlockCache::Open(folder.path, 64 * BLOCK, error);
		bool stored = writer != nullptr;
		for (uint64_t put = 0; stored && put / blocks < rounds; put++) {
			auto bytes = BlockBytes(key.path + key.version, put % blocks, BLOCK);
			stored = writer->Put(key, put % blocks, bytes.data(), BLOCK);
		}
		_exit(stored ? 0 : 1);
	}

	TempFolder folder;
	const CacheKey key {"s3://bucket/table/part-0.parquet", "etag=\"abc\";size=1049810"};
};

} // namespace

TEST(BlockCacheCrc32c, MatchesTheStandardCheckValueInAnyPieces) {
	std::string text = "123456789";
	EXPECT_EQ(Crc32c(text.data(), text.size()), 0xE3069283u);
	auto bytes = BlockBytes("crc", 0, 1000);
	auto whole = Crc32c(bytes.data(), bytes.size());
	for (uint64_t cut : {1, 7, 8, 9, 500, 999}) {
		EXPECT_EQ(Crc32c(bytes.data() + cut, bytes.size() - cut, Crc32c(bytes.data(), cut)), whole) << cut;
	}
	bytes[321] ^= 1;
	EXPECT_NE(Crc32c(bytes.data(), bytes.size()), whole);
}

TEST(BlockCacheCrc32c, TheInstructionAndTheTablesAgreeAtEveryLengthAndAlignment) {
	std::string text = "123456789";
	EXPECT_EQ(Crc32cTables(text.data(), text.size()), 0xE3069283u);
	auto bytes = BlockBytes("crc both ways", 0, 1 << 20);
	EXPECT_EQ(Crc32c(bytes.data(), bytes.size()), Crc32cTables(bytes.data(), bytes.size()));
	for (uint64_t start : {0, 1, 3, 7}) {
		for (uint64_t length : {0, 1, 7, 8, 9, 63, 64, 65, 4097}) {
			EXPECT_EQ(Crc32c(bytes.data() + start, length, 0x1234u),
			          Crc32cTables(bytes.data() + start, length, 0x1234u))
			    << start << " " << length;
		}
	}
}

TEST_F(BlockCacheTest, RoundTripsFullAndLastBlocks) {
	auto cache = OpenCache(64 * BLOCK);
	PutBlock(*cache, key, 0);
	PutBlock(*cache, key, 1, 1234);
	EXPECT_TRUE(HitsExactly(*cache, key, 0));
	EXPECT_TRUE(HitsExactly(*cache, key, 1, 1234));
	auto counters = cache->Counters();
	EXPECT_EQ(counters.hits, 2u);
	EXPECT_EQ(counters.misses, 0u);
	EXPECT_EQ(counters.bytes_served, BLOCK + 1234);
	EXPECT_EQ(counters.bytes_written, BLOCK + 1234);
	EXPECT_EQ(cache->HeldBytes(), BlockFileSize(key, BLOCK) + BlockFileSize(key, 1234));
	EXPECT_EQ(cache->MaxBytes(), 64 * BLOCK);
}

TEST_F(BlockCacheTest, AnotherVersionPathOrIndexIsAMiss) {
	auto cache = OpenCache(64 * BLOCK);
	PutBlock(*cache, key, 0);
	CacheKey replaced {key.path, "etag=\"def\";size=1049810"};
	CacheKey other_path {key.path + ".bak", key.version};
	std::string out(BLOCK, 'x');
	EXPECT_FALSE(cache->Get(replaced, 0, BLOCK, &out[0]));
	EXPECT_FALSE(cache->Get(other_path, 0, BLOCK, &out[0]));
	EXPECT_FALSE(cache->Get(key, 1, BLOCK, &out[0]));
	EXPECT_EQ(cache->Counters().misses, 3u);
	EXPECT_EQ(cache->Counters().corrupt_blocks_removed, 0u);
	EXPECT_TRUE(HitsExactly(*cache, key, 0));
}

//! A block file damaged by `damage`, which Get must find a miss and remove; then the block can be put again.
class BlockCacheDamagedBlockTest : public BlockCacheTest {
protected:
	void ExpectMissAndRemoved(const std::function<void(const std::string &file)> &damage, uint64_t asked = BLOCK) {
		auto cache = OpenCache(64 * BLOCK);
		PutBlock(*cache, key, 3);
		auto file = cache->BlockFile(key, 3);
		ASSERT_TRUE(FileExists(file));
		damage(file);
		std::string out(asked, '\0');
		EXPECT_FALSE(cache->Get(key, 3, asked, &out[0]));
		EXPECT_FALSE(FileExists(file));
		EXPECT_EQ(cache->Counters().corrupt_blocks_removed, 1u);
		PutBlock(*cache, key, 3);
		EXPECT_TRUE(HitsExactly(*cache, key, 3));
	}

	static void FlipByte(const std::string &file, off_t offset) {
		int fd = open(file.c_str(), O_RDWR);
		ASSERT_GE(fd, 0);
		char byte;
		ASSERT_EQ(pread(fd, &byte, 1, offset), 1);
		byte ^= 0x10;
		ASSERT_EQ(pwrite(fd, &byte, 1, offset), 1);
		close(fd);
	}
};

// Offsets per the layout in block_file.hpp: the header is 56 bytes, the key follows, then the block's bytes.
TEST_F(BlockCacheDamagedBlockTest, AFlippedDataByte) {
	ExpectMissAndRemoved([](const std::string &file) { FlipByte(file, 56 + 100 + 12345); });
}

TEST_F(BlockCacheDamagedBlockTest, AFlippedHeaderByte) {
	ExpectMissAndRemoved([](const std::string &file) { FlipByte(file, 33); });
}

TEST_F(BlockCacheDamagedBlockTest, AFlippedKeyByte) {
	ExpectMissAndRemoved([](const std::string &file) { FlipByte(file, 56 + 10); });
}

TEST_F(BlockCacheDamagedBlockTest, ATruncatedFile) {
	ExpectMissAndRemoved([](const std::string &file) { ASSERT_EQ(truncate(file.c_str(), 4000), 0); });
}

TEST_F(BlockCacheDamagedBlockTest, AnEmptyFile) {
	ExpectMissAndRemoved([](const std::string &file) { ASSERT_EQ(truncate(file.c_str(), 0), 0); });
}

TEST_F(BlockCacheDamagedBlockTest, AskedWithAnotherLength) {
	ExpectMissAndRemoved([](const std::string &) {}, BLOCK - 1);
}

TEST_F(BlockCacheDamagedBlockTest, BytesAppended) {
	ExpectMissAndRemoved([](const std::string &file) {
		int fd = open(file.c_str(), O_WRONLY | O_APPEND);
		ASSERT_EQ(write(fd, "tail", 4), 4);
		close(fd);
	});
}

TEST_F(BlockCacheDamagedBlockTest, ABlockOfAnotherKeyWithTheSameHash) {
	// What a collision of two keys' hashes would leave: a block, valid in all else, whose header names another key
	// (one byte of the path changed and the header's checksum made again, per the layout in block_file.hpp).
	ExpectMissAndRemoved([](const std::string &file) {
		constexpr off_t HEADER = 56, HEADER_CRC = 48, KEY = 56;
		int fd = open(file.c_str(), O_RDWR);
		ASSERT_GE(fd, 0);
		uint32_t path_length, version_length;
		ASSERT_EQ(pread(fd, &path_length, 4, 12), 4);
		ASSERT_EQ(pread(fd, &version_length, 4, 16), 4);
		std::string header(HEADER + path_length + version_length, '\0');
		ASSERT_EQ(pread(fd, &header[0], header.size(), 0), ssize_t(header.size()));
		header[KEY + 5] ^= 1;
		std::memset(&header[HEADER_CRC], 0, 4);
		uint32_t crc = Crc32c(header.data(), header.size());
		std::memcpy(&header[HEADER_CRC], &crc, 4);
		ASSERT_EQ(pwrite(fd, header.data(), header.size(), 0), ssize_t(header.size()));
		close(fd);
	});
}

TEST_F(BlockCacheTest, ALeftoverTemporaryFileIsIgnoredAndLaterRemoved) {
	auto cache = OpenCache(64 * BLOCK);
	PutBlock(*cache, key, 0);
	// What a process killed mid-write leaves: part of a block under a temporary name, a minute old or fresh.
	auto object_folder = FolderOf(cache->BlockFile(key, 0));
	auto stale = object_folder + "/tmp-999999-0";
	auto fresh = object_folder + "/tmp-999999-1";
	auto partial = BlockBytes("partial", 0, 5000);
	for (auto &file : {stale, fresh}) {
		int fd = open(file.c_str(), O_WRONLY | O_CREAT, 0644);
		ASSERT_EQ(write(fd, partial.data(), partial.size()), ssize_t(partial.size()));
		close(fd);
	}
	timespec two_minutes_ago[2];
	clock_gettime(CLOCK_REALTIME, &two_minutes_ago[0]);
	two_minutes_ago[0].tv_sec -= 120;
	two_minutes_ago[1] = two_minutes_ago[0];
	ASSERT_EQ(utimensat(AT_FDCWD, stale.c_str(), two_minutes_ago, 0), 0);

	EXPECT_TRUE(HitsExactly(*cache, key, 0));
	PutBlock(*cache, key, 1);
	EXPECT_TRUE(HitsExactly(*cache, key, 1));
	EXPECT_EQ(cache->HeldBytes(), 2 * BlockFileSize(key, BLOCK));
	EXPECT_FALSE(FileExists(stale));
	EXPECT_TRUE(FileExists(fresh));
	EXPECT_EQ(cache->Info().size(), 1u);
}

TEST_F(BlockCacheTest, TheBoundHoldsAndTheLeastRecentlyUsedGoFirst) {
	auto file_size = BlockFileSize(key, BLOCK);
	auto cache = OpenCache(4 * file_size + file_size / 2);
	for (uint64_t index = 0; index < 4; index++) {
		PutBlock(*cache, key, index);
		SleepForNewerTime();
	}
	EXPECT_TRUE(HitsExactly(*cache, key, 0));
	SleepForNewerTime();
	PutBlock(*cache, key, 4);
	EXPECT_LE(BlockFileBytes(folder.path), cache->MaxBytes());
	EXPECT_TRUE(HitsExactly(*cache, key, 0)) << "read recently, so it stays";
	EXPECT_FALSE(HitsExactly(*cache, key, 1)) << "the least recently used";
	for (uint64_t index = 2; index <= 4; index++) {
		EXPECT_TRUE(HitsExactly(*cache, key, index)) << index;
	}
	EXPECT_EQ(cache->Counters().bytes_evicted, file_size);

	for (uint64_t index = 5; index < 30; index++) {
		PutBlock(*cache, key, index);
		ASSERT_LE(BlockFileBytes(folder.path), cache->MaxBytes()) << "after block " << index;
	}
	EXPECT_TRUE(HitsExactly(*cache, key, 29));
	EXPECT_LE(cache->HeldBytes(), cache->MaxBytes());
}

TEST_F(BlockCacheTest, VersionRecordsCountAgainstTheBoundAndTheOldestGoFirst) {
	// Records of ~4 KiB, so that a few hundred of them cross a bound of one block and 64 records.
	auto version = std::string(4000, 'v');
	auto PathOf = [](int n) {
		return "s3://bucket/lake/file-" + std::to_string(1000 + n) + ".parquet";
	};
	auto record_bytes = VersionRecords::RecordBytes(PathOf(0), version);
	auto cache = OpenCache(BlockFileSize(key, BLOCK) + 64 * record_bytes);
	PutBlock(*cache, key, 0);
	SleepForNewerTime();
	// Batches apart in time (file times are coarse): least recently written means the earlier batches.
	constexpr int BATCH = 20, BATCHES = 20;
	for (int n = 0; n < BATCH * BATCHES; n++) {
		ASSERT_TRUE(cache->RecordVersion(PathOf(n), version, 1000 + n));
		ASSERT_LE(AllFileBytes(folder.path), cache->MaxBytes()) << "after record " << n;
		if (n % BATCH == BATCH - 1) {
			SleepForNewerTime();
		}
	}
	EXPECT_FALSE(HitsExactly(*cache, key, 0)) << "older than every record: evicted first";
	std::string found;
	for (int n = 0; n < BATCH; n++) {
		EXPECT_FALSE(cache->Versions().Find(PathOf(n), 0, 1000000, found)) << "the first batch is evicted: " << n;
	}
	for (int n = BATCH * (BATCHES - 1); n < BATCH * BATCHES; n++) {
		ASSERT_TRUE(cache->Versions().Find(PathOf(n), 0, 1000000, found)) << "the last batch stays: " << n;
		EXPECT_EQ(found, version);
	}
	EXPECT_GT(cache->Counters().bytes_evicted, BlockFileSize(key, BLOCK));
	// A process opening the directory counts the records another wrote.
	auto other = OpenCache(cache->MaxBytes());
	EXPECT_EQ(other->HeldBytes(), AllFileBytes(folder.path));
	EXPECT_GE(other->HeldBytes(), uint64_t(BATCH) * record_bytes);
	cache->Clear("");
	EXPECT_EQ(AllFileBytes(folder.path), 0u);
}

TEST_F(BlockCacheTest, OpeningWithASmallerBoundEvicts) {
	auto cache = OpenCache(64 * BLOCK);
	for (uint64_t index = 0; index < 8; index++) {
		PutBlock(*cache, key, index);
	}
	auto smaller = OpenCache(3 * BLOCK);
	EXPECT_LE(BlockFileBytes(folder.path), 3 * BLOCK);
	EXPECT_LE(smaller->HeldBytes(), 3 * BLOCK);
}

TEST_F(BlockCacheTest, ClearsEveryVersionOfOnePathAndNoOther) {
	auto cache = OpenCache(64 * BLOCK);
	CacheKey v1 {"s3://a/x", "v1"}, v2 {"s3://a/x", "v2"}, longer {"s3://a/x2", "v1"};
	PutBlock(*cache, v1, 0);
	PutBlock(*cache, v2, 0);
	PutBlock(*cache, longer, 0);
	SleepForNewerTime();
	timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	auto rewritten_ns = int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
	SleepForNewerTime();
	CacheKey v3 {"s3://a/x", "v3"};
	PutBlock(*cache, v3, 0); // the new version, read after the write: kept
	EXPECT_EQ(cache->ClearPath("s3://a/x", rewritten_ns), BlockFileSize(v1, BLOCK) + BlockFileSize(v2, BLOCK));
	EXPECT_FALSE(HitsExactly(*cache, v1, 0));
	EXPECT_FALSE(HitsExactly(*cache, v2, 0));
	EXPECT_TRUE(HitsExactly(*cache, v3, 0));
	EXPECT_TRUE(HitsExactly(*cache, longer, 0));
}

TEST_F(BlockCacheTest, ClearsByPathPrefixAndAll) {
	auto cache = OpenCache(64 * BLOCK);
	CacheKey a_x {"s3://a/x.parquet", "v1"}, a_y {"s3://a/y.parquet", "v1"}, b_z {"s3://b/z.parquet", "v1"};
	PutBlock(*cache, a_x, 0);
	PutBlock(*cache, a_x, 1, 10);
	PutBlock(*cache, a_y, 0);
	PutBlock(*cache, b_z, 0);
	auto a_bytes = BlockFileSize(a_x, BLOCK) + BlockFileSize(a_x, 10) + BlockFileSize(a_y, BLOCK);
	EXPECT_EQ(cache->Clear("s3://a/"), a_bytes);
	EXPECT_FALSE(HitsExactly(*cache, a_x, 0));
	EXPECT_FALSE(HitsExactly(*cache, a_y, 0));
	EXPECT_TRUE(HitsExactly(*cache, b_z, 0));
	EXPECT_EQ(cache->Clear("s3://c/"), 0u);
	EXPECT_EQ(cache->Clear(""), BlockFileSize(b_z, BLOCK));
	EXPECT_FALSE(HitsExactly(*cache, b_z, 0));
	EXPECT_EQ(cache->HeldBytes(), 0u);
	EXPECT_TRUE(cache->Info().empty());
}

TEST_F(BlockCacheTest, InfoListsEachObjectVersion) {
	auto cache = OpenCache(64 * BLOCK);
	CacheKey newer {key.path, "etag=\"def\";size=10"};
	CacheKey other {"az://container/blob", "etag=\"0x8D\";size=2097162"};
	PutBlock(*cache, key, 0);
	PutBlock(*cache, key, 1, 100);
	PutBlock(*cache, newer, 0, 10);
	PutBlock(*cache, other, 0);
	PutBlock(*cache, other, 2, 10);
	auto held = cache->Info();
	ASSERT_EQ(held.size(), 3u);
	EXPECT_EQ(held[0].path, other.path);
	EXPECT_EQ(held[0].blocks, 2u);
	EXPECT_EQ(held[0].bytes, BLOCK + 10);
	EXPECT_EQ(held[1].path, key.path);
	EXPECT_EQ(held[1].version, key.version);
	EXPECT_EQ(held[1].blocks, 2u);
	EXPECT_EQ(held[1].bytes, BLOCK + 100);
	EXPECT_EQ(held[2].version, newer.version);
	EXPECT_EQ(held[2].blocks, 1u);
	EXPECT_EQ(held[2].bytes, 10u);
}

TEST_F(BlockCacheTest, AnUnwritableDirectoryIsRefusedWithoutThrowing) {
	if (geteuid() == 0) {
		GTEST_SKIP() << "root ignores permissions";
	}
	ASSERT_EQ(chmod(folder.path.c_str(), 0500), 0);
	std::string error;
	EXPECT_EQ(BlockCache::Open(folder.path + "/cache", 64 * BLOCK, error), nullptr);
	EXPECT_NE(error.find(folder.path + "/cache"), std::string::npos) << error;
	ASSERT_EQ(chmod(folder.path.c_str(), 0700), 0);

	auto cache = OpenCache(64 * BLOCK);
	ASSERT_EQ(chmod((folder.path + "/httpfs2-blocks-v1").c_str(), 0500), 0);
	auto bytes = BlockBytes("unwritable", 0, BLOCK);
	EXPECT_FALSE(cache->Put(key, 0, bytes.data(), BLOCK));
	EXPECT_FALSE(HitsExactly(*cache, key, 0));
}

TEST_F(BlockCacheTest, ADirectoryThatIsAFileIsRefusedWithoutThrowing) {
	auto file = folder.path + "/a-file";
	close(open(file.c_str(), O_WRONLY | O_CREAT, 0644));
	std::string error;
	EXPECT_EQ(BlockCache::Open(file + "/cache", 64 * BLOCK, error), nullptr);
	EXPECT_NE(error.find(file + "/cache"), std::string::npos) << error;

	// The cache's folder replaced under an open cache (removed by hand, a disk unmounted).
	auto cache = OpenCache(64 * BLOCK);
	auto root = folder.path + "/httpfs2-blocks-v1";
	ASSERT_EQ(rmdir(root.c_str()), 0);
	close(open(root.c_str(), O_WRONLY | O_CREAT, 0644));
	auto bytes = BlockBytes("replaced", 0, BLOCK);
	EXPECT_FALSE(cache->Put(key, 0, bytes.data(), BLOCK));
	EXPECT_FALSE(HitsExactly(*cache, key, 0));
	EXPECT_EQ(cache->HeldBytes(), 0u);
	EXPECT_TRUE(cache->Info().empty());
}

TEST_F(BlockCacheTest, AFullDiskIsAFailedPutThatLeavesNoTemporaryFile) {
	auto cache = OpenCache(64 * BLOCK);
	PutBlock(*cache, key, 0);
	// A file size limit stands in for a full disk (root can fill no tmpfs of its own here); in a child, since
	// the limit is the process's.
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		signal(SIGXFSZ, SIG_IGN);
		rlimit limit {64 * 1024, 64 * 1024};
		setrlimit(RLIMIT_FSIZE, &limit);
		auto bytes = BlockBytes("full", 1, BLOCK);
		bool stored = cache->Put(key, 1, bytes.data(), BLOCK);
		_exit(stored ? 1 : 0);
	}
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0) << "a Put beyond the file size limit must fail";
	EXPECT_FALSE(HitsExactly(*cache, key, 1));
	EXPECT_TRUE(HitsExactly(*cache, key, 0));
	EXPECT_EQ(NamesIn(FolderOf(cache->BlockFile(key, 0))), std::set<std::string> {"0.blk"});
}

//! Two caches on one folder stand in for two processes: threads of both put and get the same blocks and blocks of
//! their own, past the bound, so blocks are replaced, evicted and removed under readers.
TEST_F(BlockCacheTest, ConcurrentCachesOnOneFolderServeOnlyTheBytesPut) {
	constexpr uint64_t LENGTH = 64 * 1024;
	constexpr uint64_t SHARED_BLOCKS = 24;
	constexpr int THREADS_EACH = 4;
	constexpr int OPERATIONS = 150;
	auto max_bytes = 12 * BlockFileSize(key, LENGTH);
	auto first = OpenCache(max_bytes);
	auto second = OpenCache(max_bytes);
	std::atomic<uint64_t> hits {0};
	std::atomic<uint64_t> wrong {0};
	auto work = [&](BlockCache &cache, int thread) {
		CacheKey own {"s3://bucket/own-" + std::to_string(thread), "v1"};
		uint64_t state = thread + 1;
		for (int operation = 0; operation < OPERATIONS; operation++) {
			state = state * 6364136223846793005ULL + 1442695040888963407ULL;
			auto &which = (state >> 40) % 3 == 0 ? own : key;
			auto index = (state >> 20) % SHARED_BLOCKS;
			auto expected = BlockBytes(which.path + which.version, index, LENGTH);
			if ((state >> 50) % 2 == 0) {
				cache.Put(which, index, expected.data(), LENGTH);
				continue;
			}
			std::string out(LENGTH, '\0');
			if (cache.Get(which, index, LENGTH, &out[0])) {
				hits++;
				wrong += out != expected;
			}
		}
	};
	std::vector<std::thread> threads;
	for (int thread = 0; thread < 2 * THREADS_EACH; thread++) {
		threads.emplace_back(work, std::ref(thread % 2 ? *first : *second), thread);
	}
	for (auto &thread : threads) {
		thread.join();
	}
	EXPECT_EQ(wrong, 0u);
	EXPECT_GT(hits, 0u);
	EXPECT_GT(first->Counters().bytes_evicted + second->Counters().bytes_evicted, 0u);
	EXPECT_EQ(first->Counters().corrupt_blocks_removed + second->Counters().corrupt_blocks_removed, 0u);
	EXPECT_LE(first->HeldBytes(), max_bytes);
}

TEST_F(BlockCacheTest, AForkedProcessFillsWhileThisOneReads) {
	constexpr uint64_t BLOCKS = 24;
	auto reader = OpenCache(64 * BLOCK);
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		FillInChild(BLOCKS, 1);
	}
	int status = 0;
	uint64_t hits_while_filling = 0;
	while (waitpid(child, &status, WNOHANG) == 0) {
		for (uint64_t index = 0; index < BLOCKS; index++) {
			hits_while_filling += HitsExactly(*reader, key, index);
		}
	}
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0) << "the child could not store its blocks";
	for (uint64_t index = 0; index < BLOCKS; index++) {
		EXPECT_TRUE(HitsExactly(*reader, key, index)) << index;
	}
	EXPECT_EQ(reader->Counters().corrupt_blocks_removed, 0u);
	RecordProperty("hits_while_filling", std::to_string(hits_while_filling));
}

TEST_F(BlockCacheTest, AProcessKilledWhileFillingLeavesACacheTheNextOneReadsRight) {
	constexpr uint64_t BLOCKS = 16;
	auto cache = OpenCache(64 * BLOCK);
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		FillInChild(BLOCKS, UINT64_MAX);
	}
	// Killed at some point of some write (before, during or after a rename), once it has stored a block.
	auto first_block = cache->BlockFile(key, 0);
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
	while (!FileExists(first_block) && std::chrono::steady_clock::now() < deadline) {
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	}
	std::this_thread::sleep_for(std::chrono::milliseconds(30));
	ASSERT_EQ(kill(child, SIGKILL), 0);
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFSIGNALED(status));

	cache = OpenCache(64 * BLOCK);
	uint64_t hits = 0;
	for (uint64_t index = 0; index < BLOCKS; index++) {
		hits += HitsExactly(*cache, key, index);
	}
	EXPECT_GT(hits, 0u);
	EXPECT_EQ(cache->Counters().corrupt_blocks_removed, 0u) << "a rename is whole: no torn block is ever seen";
	for (uint64_t index = 0; index < BLOCKS; index++) {
		PutBlock(*cache, key, index);
		EXPECT_TRUE(HitsExactly(*cache, key, index)) << index;
	}
	EXPECT_EQ(cache->Info().size(), 1u);
}

TEST_F(BlockCacheTest, AVersionProvenAgainSoonAfterItsRecordLeavesTheRecordAsItIs) {
	constexpr int64_t SECOND = 1000LL * 1000 * 1000;
	constexpr int64_t FRESH = 60 * SECOND;
	const int64_t start = 1000 * SECOND;
	const std::string path = "s3://bucket/lake/a.parquet";
	auto cache = OpenCache(64 * BLOCK);
	std::string found;
	ASSERT_TRUE(cache->RecordVersion(path, "v1", start, FRESH));
	auto bytes = cache->HeldBytes();
	// Proven again 30 s later: the record stands, learnt at the start (a window opening at it ends sooner).
	ASSERT_TRUE(cache->RecordVersion(path, "v1", start + 30 * SECOND, FRESH));
	EXPECT_FALSE(cache->Versions().Find(path, start + 20 * SECOND, start + 30 * SECOND, found));
	ASSERT_TRUE(cache->Versions().Find(path, start, start + 30 * SECOND, found));
	EXPECT_EQ(found, "v1");
	EXPECT_EQ(cache->HeldBytes(), bytes) << "a record left as it is counts once";
	// Past the refresh it is written anew.
	ASSERT_TRUE(cache->RecordVersion(path, "v1", start + 70 * SECOND, FRESH));
	EXPECT_TRUE(cache->Versions().Find(path, start + 65 * SECOND, start + 70 * SECOND, found));
	// Another version is recorded at once, however recent the record.
	ASSERT_TRUE(cache->RecordVersion(path, "v2", start + 71 * SECOND, FRESH));
	ASSERT_TRUE(cache->Versions().Find(path, start + 71 * SECOND, start + 71 * SECOND, found));
	EXPECT_EQ(found, "v2");
	// Without a freshness every proof is written (as before).
	ASSERT_TRUE(cache->RecordVersion(path, "v2", start + 72 * SECOND));
	EXPECT_TRUE(cache->Versions().Find(path, start + 72 * SECOND, start + 72 * SECOND, found));
}

TEST(BlockCacheRecords, ARecordStandsAMinuteAtMostAndHalfATrustWindow) {
	EXPECT_EQ(BlockCache::RecordFreshNanoseconds(0), BlockCache::RECORD_REFRESH_NS);
	EXPECT_EQ(BlockCache::RecordFreshNanoseconds(3600), BlockCache::RECORD_REFRESH_NS);
	EXPECT_EQ(BlockCache::RecordFreshNanoseconds(10), 5LL * 1000 * 1000 * 1000);
	EXPECT_EQ(BlockCache::RecordFreshNanoseconds(1), 500LL * 1000 * 1000);
}

TEST_F(BlockCacheTest, AFolderListingIsKeptWhileTheFolderIsUnchangedAndNamesMadeSinceAreListed) {
	auto cache = OpenCache(64 * BLOCK);
	PutBlock(*cache, key, 0);
	auto folder = FolderOf(cache->BlockFile(key, 0));
	// Made right after a change: not kept, so a name made in the same tick of a coarse clock is never missed.
	PutBlock(*cache, key, 1);
	EXPECT_EQ(cache->ListFolder(key).held, (std::vector<uint64_t> {0, 1}));
	PutBlock(*cache, key, 2);
	EXPECT_EQ(cache->ListFolder(key).held, (std::vector<uint64_t> {0, 1, 2}));
	// A folder unchanged for longer than LISTING_SETTLED_NS: its listing is kept.
	timespec earlier[2];
	clock_gettime(CLOCK_REALTIME, &earlier[0]);
	earlier[0].tv_sec -= 2;
	earlier[1] = earlier[0];
	ASSERT_EQ(utimensat(AT_FDCWD, folder.c_str(), earlier, 0), 0);
	EXPECT_EQ(cache->ListFolder(key).held, (std::vector<uint64_t> {0, 1, 2}));
	// A name made behind the folder's back (its time set back as it was): the kept listing is given, no listing made.
	auto renamed = cache->BlockFile(key, 2);
	ASSERT_EQ(rename(renamed.c_str(), cache->BlockFile(key, 7).c_str()), 0);
	ASSERT_EQ(utimensat(AT_FDCWD, folder.c_str(), earlier, 0), 0);
	EXPECT_EQ(cache->ListFolder(key).held, (std::vector<uint64_t> {0, 1, 2})) << "the listing was not kept";
	// Any change of the folder's names changes its time: listed again.
	PutBlock(*cache, key, 3);
	EXPECT_EQ(cache->ListFolder(key).held, (std::vector<uint64_t> {0, 1, 3, 7}));
}
