// BlockCache's fetch claims across processes: when a claim is live, and that a dead process's claim is none, however
// it died (killed and not yet reaped, its pid alive again in another process, killed while making the claim).
#include "core/cache/block_cache.hpp"
#include "block_cache_folder.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

using namespace httpfs2;

namespace {

constexpr uint64_t BLOCK = BlockCache::BLOCK_SIZE;

class CacheClaimsTest : public BlockCacheFolderTest {
protected:
	std::string ClaimFileOf(uint64_t index) {
		auto file = cache->BlockFile(key, index);
		return file.substr(0, file.size() - std::strlen(".blk")) + ".fetch";
	}

	const CacheKey key {"s3://bucket/table/part-0.parquet", "etag=\"abc\";size=1049810"};
};

} // namespace

TEST_F(CacheClaimsTest, AClaimOfAKilledProcessIsStaleBeforeItsParentReapsIt) {
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
	// Dead, not reaped: a zombie, as a killed child is until its parent waits for it, whose pid answers kill(pid, 0).
	siginfo_t ended {};
	ASSERT_EQ(waitid(P_PID, id_t(child), &ended, WEXITED | WNOWAIT), 0);
	EXPECT_EQ(kill(child, 0), 0);
	EXPECT_FALSE(cache->FetchedElsewhere(key, 1)) << "a zombie's claim was taken for a live one";
	EXPECT_TRUE(cache->ClaimFetch(key, 1)) << "the dead claim was not replaced";
	ASSERT_EQ(waitpid(child, nullptr, 0), child);
}

TEST_F(CacheClaimsTest, AClaimIsALinkToItsCachesLivenessFileAndGoesWithTheCache) {
	// The claimer's pid, this process's, runs on after its cache went: as a pid taken again by another process.
	auto other = Open();
	ASSERT_TRUE(other->ClaimFetch(key, 0));
	EXPECT_TRUE(cache->FetchedElsewhere(key, 0));
	// No file of its own: another name of the claimer's liveness file, whose lock says it lives.
	struct stat claim, liveness;
	ASSERT_EQ(stat(ClaimFileOf(0).c_str(), &claim), 0);
	EXPECT_EQ(claim.st_nlink, 2u);
	bool found = false;
	auto processes = folder + "/httpfs2-processes-v1";
	auto listing = opendir(processes.c_str());
	ASSERT_NE(listing, nullptr);
	while (auto entry = readdir(listing)) {
		found = found || (stat((processes + "/" + entry->d_name).c_str(), &liveness) == 0 &&
		                  S_ISREG(liveness.st_mode) && liveness.st_ino == claim.st_ino);
	}
	closedir(listing);
	EXPECT_TRUE(found) << "the claim is a file of its own";
	other.reset();
	EXPECT_NE(access(ClaimFileOf(0).c_str(), F_OK), 0) << "a closed cache left its claim";
	EXPECT_FALSE(cache->FetchedElsewhere(key, 0));
	EXPECT_TRUE(cache->ClaimFetch(key, 0));
}

TEST_F(CacheClaimsTest, AClaimOfAProcessThatDiedIsStaleBeforeAndAfterItsLivenessFileGoes) {
	// What a process killed while it fetched leaves: a link to its liveness file, which no one locks now; then, once
	// another process's start removed that file, the claim alone, an empty file as old as the liveness file was.
	auto other = Open();
	ASSERT_TRUE(other->ClaimFetch(key, 0)); // makes the object's folder
	auto claim = ClaimFileOf(1);
	auto liveness = folder + "/httpfs2-processes-v1/1-dead00";
	auto out = std::fopen(liveness.c_str(), "w");
	ASSERT_NE(out, nullptr);
	std::fclose(out);
	timespec times[2];
	clock_gettime(CLOCK_REALTIME, &times[0]);
	times[0].tv_sec -= 2; // made after the cache opened: under FETCH_CLAIM_NS, over CLAIM_WRITE_NS
	times[1] = times[0];
	ASSERT_EQ(utimensat(AT_FDCWD, liveness.c_str(), times, 0), 0);
	ASSERT_EQ(link(liveness.c_str(), claim.c_str()), 0);
	EXPECT_FALSE(cache->FetchedElsewhere(key, 1)) << "a dead process's claim, its liveness file still there";
	ASSERT_EQ(unlink(liveness.c_str()), 0);
	EXPECT_FALSE(cache->FetchedElsewhere(key, 1)) << "a dead process's claim, its liveness file gone";
	EXPECT_TRUE(cache->ClaimFetch(key, 1));
	EXPECT_TRUE(other->FetchedElsewhere(key, 1)) << "the stale claim was not replaced by a live one";
}

TEST_F(CacheClaimsTest, AnEmptyClaimIsBeingWrittenForASecondThenIsStale) {
	auto other = Open();
	ASSERT_TRUE(other->ClaimFetch(key, 0)); // makes the object's folder
	auto claim = ClaimFileOf(2);
	auto out = std::fopen(claim.c_str(), "w");
	ASSERT_NE(out, nullptr);
	std::fclose(out);
	EXPECT_TRUE(cache->FetchedElsewhere(key, 2));
	timespec times[2];
	clock_gettime(CLOCK_REALTIME, &times[0]);
	times[0].tv_sec -= 2;
	times[1] = times[0];
	ASSERT_EQ(utimensat(AT_FDCWD, claim.c_str(), times, 0), 0);
	EXPECT_FALSE(cache->FetchedElsewhere(key, 2)) << "its process died between making the claim and writing it";
}

TEST_F(CacheClaimsTest, TheLivenessFilesOfProcessesThatDiedGoAndTheLiveOnesStay) {
	auto processes = folder + "/httpfs2-processes-v1";
	auto other = Open();
	auto dead = processes + "/1-dead00"; // no process holds its lock
	auto out = std::fopen(dead.c_str(), "w");
	ASSERT_NE(out, nullptr);
	std::fclose(out);
	// Every liveness file made over a minute ago: only the unlocked one goes.
	std::system(("touch -d '2 minutes ago' '" + processes + "'/*").c_str());
	auto third = Open();
	EXPECT_NE(access(dead.c_str(), F_OK), 0);
	ASSERT_TRUE(other->ClaimFetch(key, 3));
	EXPECT_TRUE(cache->FetchedElsewhere(key, 3)) << "a live process's liveness file was removed";
}

TEST_F(CacheClaimsTest, AClaimOfAProcessThatDiedIsStaleThoughAChildItForkedLivesOn) {
	// A process forks a child without exec (a worker pool) while its cache is open, and is killed: the child, alive,
	// has copies of the process's descriptors, so without more the lock that says the process lives would be held.
	int ready[2];
	ASSERT_EQ(pipe(ready), 0);
	pid_t claimer = fork();
	ASSERT_GE(claimer, 0);
	if (claimer == 0) {
		auto claims = Open();
		if (!claims || !claims->ClaimFetch(key, 4)) {
			_exit(1);
		}
		pid_t child = fork();
		if (child == 0) {
			pid_t self = getpid(); // told once it runs: its copies of the descriptors are closed by then
			if (write(ready[1], &self, sizeof(self)) != sizeof(self)) {
				_exit(1);
			}
			pause();
			_exit(0);
		}
		_exit(child > 0 ? 0 : 1); // dies with its claim held, its cache not closed
	}
	close(ready[1]);
	pid_t child = -1;
	ASSERT_EQ(read(ready[0], &child, sizeof(child)), ssize_t(sizeof(child)));
	close(ready[0]);
	int status = -1;
	ASSERT_EQ(waitpid(claimer, &status, 0), claimer);
	EXPECT_EQ(WEXITSTATUS(status), 0);
	ASSERT_EQ(access(ClaimFileOf(4).c_str(), F_OK), 0) << "the test wants the claim left behind";
	ASSERT_EQ(kill(child, 0), 0) << "the child lives on";
	EXPECT_FALSE(cache->FetchedElsewhere(key, 4)) << "the dead process's claim lived on in the child it forked";
	EXPECT_TRUE(cache->ClaimFetch(key, 4));
	kill(child, SIGKILL);
}
