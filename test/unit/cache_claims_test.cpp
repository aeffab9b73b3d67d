// BlockCache's fetch claims across processes (byte locks on one claims file an object): a claim is held until its
// holder ends it or goes, however it goes (a cache closed, a process killed and not yet reaped); a claim of this
// cache's other reads is refused as another process's is; a piece's claim and its block's are apart; claims make no
// file per block, and a scan removes the claims files no one locks with their empty folder.
#include "core/cache/block_cache.hpp"
#include "block_cache_folder.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace httpfs2;

namespace {

constexpr uint64_t PIECE_BIT = uint64_t(1) << 63; // a piece's index (PieceIndex)

class CacheClaimsTest : public BlockCacheFolderTest {
protected:
	//! The files in the object's folder.
	std::vector<std::string> ObjectFiles() {
		auto file = cache->BlockFile(key, 0);
		return FolderNames(file.substr(0, file.rfind('/')));
	}

	const CacheKey key {"s3://bucket/table/part-0.parquet", "etag=\"abc\";size=1049810"};
};

} // namespace

TEST_F(CacheClaimsTest, AClaimOfAKilledProcessIsGoneBeforeItsParentReapsIt) {
	int ready[2];
	ASSERT_EQ(pipe(ready), 0);
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		auto claimer = Open();
		char claimed = claimer && claimer->ClaimFetch(key, 1) ? 1 : 0;
		if (write(ready[1], &claimed, 1) != 1) {
			_exit(1);
		}
		pause(); // killed here, its claim held
		_exit(0);
	}
	close(ready[1]);
	char claimed = 0;
	ASSERT_EQ(read(ready[0], &claimed, 1), 1);
	close(ready[0]);
	ASSERT_EQ(claimed, 1) << "the child could not claim the block";
	EXPECT_TRUE(cache->FetchedElsewhere(key, 1)) << "a running process's claim";
	EXPECT_FALSE(cache->ClaimFetch(key, 1));
	ASSERT_EQ(kill(child, SIGKILL), 0);
	// Dead, not reaped: a zombie, as a killed child is until its parent waits for it.
	siginfo_t ended {};
	ASSERT_EQ(waitid(P_PID, id_t(child), &ended, WEXITED | WNOWAIT), 0);
	EXPECT_FALSE(cache->FetchedElsewhere(key, 1)) << "a zombie's claim was taken for a live one";
	EXPECT_TRUE(cache->ClaimFetch(key, 1)) << "the dead claim was not released";
	ASSERT_EQ(waitpid(child, nullptr, 0), child);
}

TEST_F(CacheClaimsTest, AClaimIsHeldUntilItsHolderEndsItOrGoes) {
	auto other = Open();
	ASSERT_TRUE(other->ClaimFetch(key, 0));
	EXPECT_TRUE(cache->FetchedElsewhere(key, 0));
	EXPECT_FALSE(cache->ClaimFetch(key, 0));
	EXPECT_FALSE(other->FetchedElsewhere(key, 0)) << "its own claim";
	other->EndFetchClaim(key, 0);
	EXPECT_FALSE(cache->FetchedElsewhere(key, 0));
	ASSERT_TRUE(other->ClaimFetch(key, 0));
	other.reset(); // a cache closed with a claim held (its process ending)
	EXPECT_FALSE(cache->FetchedElsewhere(key, 0));
	EXPECT_TRUE(cache->ClaimFetch(key, 0));
}

TEST_F(CacheClaimsTest, AnotherReadOfThisCacheIsRefusedItsClaimAsAnotherProcessIs) {
	ASSERT_TRUE(cache->ClaimFetch(key, 7));
	EXPECT_FALSE(cache->ClaimFetch(key, 7)) << "another read would fetch the block again";
	cache->EndFetchClaim(key, 7);
	EXPECT_TRUE(cache->ClaimFetch(key, 7));
	cache->EndFetchClaim(key, 7);
}

TEST_F(CacheClaimsTest, APiecesClaimAndItsBlocksAreApart) {
	auto other = Open();
	ASSERT_TRUE(other->ClaimFetch(key, 5));
	// A piece whose index less its top bit is 5 (its offset 0, its length 5 bytes) is another unit.
	EXPECT_FALSE(cache->FetchedElsewhere(key, PIECE_BIT | 5));
	ASSERT_TRUE(cache->ClaimFetch(key, PIECE_BIT | 5));
	EXPECT_TRUE(other->FetchedElsewhere(key, PIECE_BIT | 5));
	EXPECT_FALSE(other->ClaimFetch(key, PIECE_BIT | 5));
}

TEST_F(CacheClaimsTest, ClaimsMakeNoFilePerBlockAndAScanRemovesTheClaimsFilesNoOneLocks) {
	for (uint64_t index = 0; index < 100; index++) {
		ASSERT_TRUE(cache->ClaimFetch(key, index));
	}
	EXPECT_EQ(ObjectFiles(), std::vector<std::string> {"claims"});
	EXPECT_EQ(cache->HeldBytes(), 0u) << "a claims file counted as a block";
	EXPECT_TRUE(cache->Info().empty());
	EXPECT_TRUE(cache->HeldIndices(key, 0, 200).empty());
	EXPECT_EQ(ObjectFiles(), std::vector<std::string> {"claims"}) << "a scan removed a claims file in use";
	for (uint64_t index = 0; index < 100; index++) {
		cache->EndFetchClaim(key, index);
	}
	EXPECT_EQ(cache->HeldBytes(), 0u);
	EXPECT_TRUE(ObjectFiles().empty()) << "the folder of no block and no claim was left";
}
