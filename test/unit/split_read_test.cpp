#include "core/common/io_pool.hpp"
#include "core/split/range_planner.hpp"
#include "core/common/io_settings.hpp"
#include "core/split/split_read.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>

using namespace httpfs2;

static char ByteAt(uint64_t offset) {
	return static_cast<char>((offset * 131 + 7) % 251);
}

static void FillPiece(const ByteRange &piece, char *destination) {
	for (uint64_t i = 0; i < piece.length; i++) {
		destination[i] = ByteAt(piece.offset + i);
	}
}

TEST(SplitRead, FillsEveryByteAtItsOffset) {
	IoPool pool(4);
	uint64_t base = 12345;
	std::vector<char> buffer(1000003);
	auto pieces = RangePlanner(64 * KiB, 64 * KiB).Plan(base, buffer.size(), 4);
	SplitRead::Run(pool, buffer.data(), base, pieces, 4, FillPiece, nullptr);
	for (uint64_t i = 0; i < buffer.size(); i++) {
		ASSERT_EQ(buffer[i], ByteAt(base + i)) << i;
	}
}

TEST(SplitRead, NeverMoreThanFanoutInFlight) {
	IoPool pool(16);
	std::atomic<int> in_flight {0};
	std::atomic<int> peak {0};
	std::vector<char> buffer(64 * 1024);
	auto pieces = RangePlanner(1024, 64 * KiB).Plan(0, buffer.size(), 3);
	SplitRead::Run(
	    pool, buffer.data(), 0, pieces, 3,
	    [&](const ByteRange &, char *) {
		    int now = ++in_flight;
		    int seen = peak.load();
		    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
		    }
		    std::this_thread::sleep_for(std::chrono::milliseconds(2));
		    --in_flight;
	    },
	    nullptr);
	EXPECT_LE(peak.load(), 3);
	EXPECT_GE(peak.load(), 2);
}

TEST(SplitRead, MoreStreamsJoinARunningReadAsTheyAreAllowed) {
	IoPool pool(16);
	std::atomic<int> in_flight {0};
	std::atomic<int> peak {0};
	std::atomic<int> done {0};
	std::vector<char> buffer(64 * 1024);
	auto pieces = RangePlanner(1024, 64 * KiB).Plan(0, buffer.size(), 2);
	ASSERT_EQ(pieces.size(), 64u);
	// Two streams at first, eight once a quarter of the pieces are read.
	SplitRead::Run(
	    pool, buffer.data(), 0, pieces, 2,
	    [&](const ByteRange &piece, char *destination) {
		    int now = ++in_flight;
		    int seen = peak.load();
		    while (now > seen && !peak.compare_exchange_weak(seen, now)) {
		    }
		    std::this_thread::sleep_for(std::chrono::milliseconds(2));
		    FillPiece(piece, destination);
		    --in_flight;
		    ++done;
	    },
	    nullptr, [&]() -> uint64_t { return done.load() < 16 ? 2 : 8; });
	EXPECT_GT(peak.load(), 2) << "streams added while the read ran";
	EXPECT_LE(peak.load(), 8);
	for (uint64_t i = 0; i < buffer.size(); i++) {
		ASSERT_EQ(buffer[i], ByteAt(i)) << i;
	}
}

TEST(SplitRead, ManyCallersOnOneWorkerDoNotDeadlock) {
	IoPool pool(1);
	std::vector<std::thread> callers;
	std::atomic<int> correct {0};
	for (int c = 0; c < 8; c++) {
		callers.emplace_back([&, c] {
			std::vector<char> buffer(256 * 1024);
			uint64_t base = static_cast<uint64_t>(c) * 1000;
			auto pieces = RangePlanner(16 * KiB, 64 * KiB).Plan(base, buffer.size(), 8);
			SplitRead::Run(pool, buffer.data(), base, pieces, 8, FillPiece, nullptr);
			for (uint64_t i = 0; i < buffer.size(); i++) {
				if (buffer[i] != ByteAt(base + i)) {
					return;
				}
			}
			correct++;
		});
	}
	for (auto &caller : callers) {
		caller.join();
	}
	EXPECT_EQ(correct.load(), 8);
}

TEST(SplitRead, FailureIsRethrownAndNoPieceWritesAfterReturn) {
	IoPool pool(4);
	std::atomic<int> started {0};
	std::atomic<bool> returned {false};
	std::atomic<int> wrote_after_return {0};
	std::vector<char> buffer(64 * 1024);
	auto pieces = RangePlanner(1024, 64 * KiB).Plan(0, buffer.size(), 4);
	EXPECT_THROW(SplitRead::Run(
	                 pool, buffer.data(), 0, pieces, 4,
	                 [&](const ByteRange &piece, char *destination) {
		                 started++;
		                 if (piece.offset == 5 * 1024) {
			                 throw std::runtime_error("sub-read failed");
		                 }
		                 std::this_thread::sleep_for(std::chrono::milliseconds(5));
		                 if (returned) {
			                 wrote_after_return++;
		                 }
		                 std::memset(destination, 1, piece.length);
	                 },
	                 nullptr),
	             std::runtime_error);
	returned = true;
	std::this_thread::sleep_for(std::chrono::milliseconds(50));
	EXPECT_EQ(wrote_after_return.load(), 0);
	// pieces already running may finish, but the read stops early: most of the 64 pieces never start
	EXPECT_LT(started.load(), 32);
}

TEST(SplitRead, CancellationStopsNewPiecesAndThrows) {
	IoPool pool(2);
	std::atomic<int> pieces_read {0};
	std::vector<char> buffer(1024 * 1024);
	auto pieces = RangePlanner(1024, 64 * KiB).Plan(0, buffer.size(), 2);
	// The interrupt arrives once 10 pieces are read; each of the 2 streams may already be past its check.
	EXPECT_THROW(SplitRead::Run(
	                 pool, buffer.data(), 0, pieces, 2, [&](const ByteRange &, char *) { pieces_read++; },
	                 [&] { return pieces_read.load() >= 10; }),
	             SplitReadCancelled);
	EXPECT_LE(pieces_read.load(), 11);
}

TEST(IoPool, ResizeGrowsAndShrinks) {
	IoPool pool(2);
	EXPECT_EQ(pool.RunningThreads(), 0u); // lazily started
	std::atomic<int> done {0};
	std::atomic<bool> release {false};
	for (int i = 0; i < 100; i++) {
		pool.Submit([&] {
			while (!release.load()) {
				std::this_thread::yield();
			}
			done++;
		});
	}
	EXPECT_EQ(pool.RunningThreads(), 2u);
	pool.Resize(8);
	EXPECT_EQ(pool.RunningThreads(), 8u) << "tasks queued: workers for them now";
	release = true;
	pool.Resize(1);
	EXPECT_EQ(pool.RunningThreads(), 1u);
	for (int i = 0; i < 100; i++) {
		pool.Submit([&] { done++; });
	}
	while (done.load() < 200) {
		std::this_thread::yield();
	}
	EXPECT_EQ(pool.TargetSize(), 1u);
}

TEST(IoPool, WorkersStartAsTasksFindNoneIdle) {
	IoPool pool(8);
	for (int i = 0; i < 20; i++) {
		auto ran = std::make_shared<std::promise<void>>();
		pool.Submit([ran] { ran->set_value(); });
		ran->get_future().get();
		while (pool.IdleThreads() < pool.RunningThreads()) {
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
	}
	EXPECT_EQ(pool.RunningThreads(), 1u) << "one task at a time: one worker";
	std::atomic<bool> release {false};
	std::atomic<int> running {0};
	for (int i = 0; i < 3; i++) {
		pool.Submit([&] {
			running++;
			while (!release.load()) {
				std::this_thread::yield();
			}
		});
	}
	while (running.load() < 3) {
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	EXPECT_EQ(pool.RunningThreads(), 3u) << "three at once: three workers";
	release = true;
}

TEST(IoPool, ALightLoadRunsOnTheWorkerThatWentIdleLast) {
	IoPool pool(8);
	auto wait_all_idle = [&] {
		while (pool.RunningThreads() == 0 || pool.IdleThreads() < pool.RunningThreads()) {
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
	};
	pool.Submit([] {});
	std::set<std::thread::id> ran_on;
	for (int i = 0; i < 20; i++) {
		wait_all_idle();
		auto ran = std::make_shared<std::promise<std::thread::id>>();
		pool.Submit([ran] { ran->set_value(std::this_thread::get_id()); });
		ran_on.insert(ran->get_future().get());
	}
	// One task at a time: the worker that ran the last one is the one woken for the next (a FIFO wake-up would
	// rotate through all eight, each faulting in buffers of its own).
	EXPECT_EQ(ran_on.size(), 1u);
}

TEST(IoPool, RunAllRunsEachTaskOnceAndReturnsWhenAllHaveRun) {
	IoPool pool(2);
	// A busy pool does not hold RunAll up: the calling thread runs tasks too.
	std::atomic<bool> release {false};
	pool.Submit([&] {
		while (!release.load()) {
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
	});
	std::vector<std::atomic<int>> runs(20);
	std::vector<std::function<void()>> tasks;
	for (size_t i = 0; i < runs.size(); i++) {
		tasks.push_back([&runs, i] {
			std::this_thread::sleep_for(std::chrono::milliseconds(2));
			runs[i]++;
		});
	}
	pool.RunAll(std::move(tasks), 4);
	for (auto &count : runs) {
		EXPECT_EQ(count.load(), 1);
	}
	release = true;
	pool.RunAll({}, 4);
}
