#include "core/requests/hedge_policy.hpp"
#include "core/requests/request_race.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <chrono>

using namespace httpfs2;

static void Learn(HedgePolicy &policy, double seconds, size_t count) {
	for (size_t i = 0; i < count; i++) {
		policy.ObserveFirstByte(seconds);
	}
}

TEST(HedgePolicy, DeadlineIsColdUntilTheWindowHoldsEnough) {
	HedgePolicy policy;
	EXPECT_DOUBLE_EQ(policy.DeadlineSeconds(), HedgePolicy::COLD_SECONDS);
	Learn(policy, 0.2, HedgePolicy::MIN_SAMPLES - 1);
	EXPECT_DOUBLE_EQ(policy.DeadlineSeconds(), HedgePolicy::COLD_SECONDS);
	Learn(policy, 0.2, 1);
	EXPECT_DOUBLE_EQ(policy.DeadlineSeconds(), HedgePolicy::MARGIN * 0.2);
}

TEST(HedgePolicy, DeadlineIsAHighPercentileOfTheLatestWindowNeverBelowTheFloor) {
	HedgePolicy policy;
	Learn(policy, 0.001, HedgePolicy::WINDOW);
	EXPECT_DOUBLE_EQ(policy.DeadlineSeconds(), HedgePolicy::FLOOR_SECONDS);
	// A few slow answers in a hundred (under the percentile's tail) do not move it; a slower store does.
	Learn(policy, 0.3, HedgePolicy::WINDOW - 5);
	Learn(policy, 5.0, 5);
	EXPECT_DOUBLE_EQ(policy.DeadlineSeconds(), HedgePolicy::MARGIN * 0.3);
	// The window forgets: only the latest WINDOW latencies count.
	Learn(policy, 0.5, HedgePolicy::WINDOW);
	EXPECT_DOUBLE_EQ(policy.DeadlineSeconds(), HedgePolicy::MARGIN * 0.5);
}

TEST(HedgePolicy, TheRigsCleanAnswersGiveADeadlineAStallCostsLittleOfAndNoneOfThemPasses) {
	// Whole GETs' times (curl: the answer begins with its body) of the lineitem projection at region through the
	// misbehaving proxy: p50 0.08 s, p95 0.11 s, the slowest 0.15 s. A stall costs the query this deadline and the
	// hedge's answer; 0.5 s (the floor before) made it 1.6-1.7x a run of 0.5 s.
	HedgePolicy policy;
	Learn(policy, 0.08, 110);
	Learn(policy, 0.11, 12);
	Learn(policy, 0.15, 6);
	EXPECT_DOUBLE_EQ(policy.DeadlineSeconds(), 0.22);
	EXPECT_GT(policy.DeadlineSeconds(), 0.15) << "no clean answer is hedged";
}

TEST(HedgePolicy, ANearStoresDeadlineIsTheFloorOf150Milliseconds) {
	HedgePolicy policy;
	Learn(policy, 0.03, HedgePolicy::WINDOW);
	EXPECT_DOUBLE_EQ(policy.DeadlineSeconds(), 0.15);
}

TEST(HedgePolicy, AFewAnswersTeachTheDeadlineTheirSlowest) {
	HedgePolicy policy;
	Learn(policy, 0.05, 3);
	Learn(policy, 0.3, 1);
	EXPECT_DOUBLE_EQ(policy.DeadlineSeconds(), 2 * 0.3) << "four answers are enough, the slowest of them counts";
	Learn(policy, 0.05, 4);
	EXPECT_DOUBLE_EQ(policy.DeadlineSeconds(), 2 * 0.3) << "one slow answer in eight is still the 95th percentile";
}

TEST(HedgePolicy, AnUploadPartsDeadlineKeepsItsWiderMargin) {
	HedgePolicy uploads(HedgeLimits::Uploads());
	Learn(uploads, 4.0, HedgePolicy::WINDOW);
	EXPECT_DOUBLE_EQ(uploads.DeadlineSeconds(), 3 * 4.0);
}

TEST(HedgePolicy, BudgetIsAShareOfTheRequestsWithABurst) {
	HedgePolicy policy;
	for (int i = 0; i < static_cast<int>(HedgePolicy::BURST); i++) {
		EXPECT_TRUE(policy.TryHedge(100));
	}
	EXPECT_FALSE(policy.TryHedge(100)) << "the burst is spent";
	for (int i = 0; i < 19; i++) {
		policy.RequestSent();
	}
	EXPECT_FALSE(policy.TryHedge(100)) << "19 requests earn less than a hedge";
	policy.RequestSent();
	EXPECT_TRUE(policy.TryHedge(100)) << "20 requests earn one (5%)";
	for (int i = 0; i < 10000; i++) {
		policy.RequestSent();
	}
	EXPECT_DOUBLE_EQ(policy.Snapshot().budget, HedgePolicy::BURST) << "the budget holds at most the burst";
}

TEST(HedgePolicy, NoHedgeWhileTheStoreThrottles) {
	HedgePolicy policy;
	policy.Throttled(100);
	EXPECT_FALSE(policy.TryHedge(100));
	EXPECT_FALSE(policy.TryHedge(100 + HedgePolicy::QUIET_SECONDS - 0.1));
	EXPECT_TRUE(policy.TryHedge(100 + HedgePolicy::QUIET_SECONDS));
	EXPECT_DOUBLE_EQ(policy.Snapshot().budget, HedgePolicy::BURST - 1) << "refusals took nothing";
	policy.Reset();
	EXPECT_TRUE(policy.TryHedge(100));
	EXPECT_EQ(policy.Snapshot().samples, 0u);
}

namespace {

//! httpfs's default http_timeout.
constexpr double TIMEOUT = 30;

//! A gate a stalled sender waits at until the test opens it.
struct Gate {
	std::mutex lock;
	std::condition_variable opened_changed;
	bool opened = false;
	void Wait() {
		std::unique_lock<std::mutex> guard(lock);
		opened_changed.wait(guard, [&] { return opened; });
	}
	void Open() {
		std::lock_guard<std::mutex> guard(lock);
		opened = true;
		opened_changed.notify_all();
	}
};

//! A sender that writes `text` into `destination` after claiming it; the request (slot 0) waits at `stall` first
//! when given one, and reports whether its claim was refused.
struct FakeRequest {
	std::shared_ptr<Gate> stall;
	std::shared_ptr<std::atomic<int>> refused = std::make_shared<std::atomic<int>>(0);
	std::shared_ptr<std::atomic<int>> done = std::make_shared<std::atomic<int>>(0);

	RequestRace::Sender Sender(char *destination) const {
		auto stall_p = stall;
		auto refused_p = refused;
		auto done_p = done;
		return [stall_p, refused_p, done_p, destination](RequestRace::Entry &entry) {
			if (entry.slot == 0 && stall_p) {
				stall_p->Wait();
			}
			entry.FirstByte();
			if (entry.Claim()) {
				std::memcpy(destination, entry.slot == 0 ? "request" : "hedge!!", 7);
			} else {
				(*refused_p)++;
			}
			(*done_p)++;
		};
	}
};

} // namespace

TEST(RequestRace, AnAnswerInTimeIsNotHedged) {
	IoPool threads(4);
	HedgePolicy policy;
	char buffer[8] = {};
	FakeRequest request;
	auto outcome = RequestRace::Run(threads, policy, TIMEOUT, request.Sender(buffer));
	EXPECT_EQ(outcome.winner, 0u);
	EXPECT_FALSE(outcome.hedged);
	EXPECT_EQ(std::string(buffer, 7), "request");
	EXPECT_EQ(policy.Snapshot().samples, 1u) << "its first byte was learnt";
}

TEST(RequestRace, AStalledRequestIsHedgedAndTheLoserWritesNothing) {
	IoPool threads(4);
	HedgePolicy policy;
	Learn(policy, 0.001, HedgePolicy::MIN_SAMPLES); // the floor: a short wait
	char buffer[8] = {};
	FakeRequest request;
	request.stall = std::make_shared<Gate>();
	auto outcome = RequestRace::Run(threads, policy, TIMEOUT, request.Sender(buffer));
	EXPECT_EQ(outcome.winner, 1u);
	EXPECT_TRUE(outcome.hedged);
	EXPECT_EQ(std::string(buffer, 7), "hedge!!");
	EXPECT_EQ(request.done->load(), 1) << "the caller did not wait for the stalled request";
	// The stalled request's answer comes after the caller left: refused, nothing written.
	request.stall->Open();
	threads.WaitIdle();
	EXPECT_EQ(request.done->load(), 2);
	EXPECT_EQ(request.refused->load(), 1);
	EXPECT_EQ(std::string(buffer, 7), "hedge!!");
	EXPECT_EQ(policy.Snapshot().samples, HedgePolicy::MIN_SAMPLES + 1) << "the loser's latency is not learnt";
}

TEST(RequestRace, ABodyThatTakesItsTimeIsNoStraggler) {
	// A client that tells of an answer only once its body is in (curl in httpfs): a GET of a large body on a slow
	// link answers long after the first bytes learnt, and is not hedged for that; what is learnt is its first byte.
	IoPool threads(4);
	HedgePolicy policy;
	Learn(policy, 0.001, HedgePolicy::MIN_SAMPLES); // the floor: 0.15 s
	char buffer[8] = {};
	FakeRequest request;
	request.stall = std::make_shared<Gate>();
	auto stall = request.stall;
	std::thread body([stall] {
		std::this_thread::sleep_for(std::chrono::milliseconds(400)); // its body: 0.4 s of the 0.5 s expected
		stall->Open();
	});
	auto outcome = RequestRace::Run(threads, policy, TIMEOUT, request.Sender(buffer), 0.5);
	body.join();
	EXPECT_FALSE(outcome.hedged) << "hedged at the floor, as if its body were a stall";
	EXPECT_EQ(std::string(buffer, 7), "request");
	EXPECT_LT(policy.DeadlineSeconds(), 0.2) << "its body's time was learnt as a first byte's";
}

TEST(RequestRace, ARequestInFlightIsJudgedByTheDeadlineLearntMeanwhile) {
	IoPool threads(4);
	HedgePolicy policy;
	Learn(policy, 0.2, HedgePolicy::MIN_SAMPLES); // 0.4 s when the request goes out
	char buffer[8] = {};
	FakeRequest request;
	request.stall = std::make_shared<Gate>();
	auto stall = request.stall;
	std::thread peers([&policy, stall] {
		// The requests sent beside it answer slower: 1.2 s now. It answers at 0.8 s, within that.
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		Learn(policy, 0.6, HedgePolicy::WINDOW);
		std::this_thread::sleep_for(std::chrono::milliseconds(780));
		stall->Open();
	});
	auto outcome = RequestRace::Run(threads, policy, TIMEOUT, request.Sender(buffer));
	peers.join();
	threads.WaitIdle();
	EXPECT_FALSE(outcome.hedged) << "not hedged at the deadline it was sent with";
	EXPECT_EQ(outcome.winner, 0u);
	EXPECT_EQ(std::string(buffer, 7), "request");
}

TEST(RequestRace, WithoutBudgetTheRequestIsAwaited) {
	IoPool threads(4);
	HedgePolicy policy;
	Learn(policy, 0.001, HedgePolicy::MIN_SAMPLES);
	while (policy.TryHedge(0)) {
	}
	char buffer[8] = {};
	FakeRequest request;
	request.stall = std::make_shared<Gate>();
	auto stall = request.stall;
	std::thread opener([stall] {
		// Opened at any time: the race waits for the request however long it takes.
		stall->Open();
	});
	auto outcome = RequestRace::Run(threads, policy, TIMEOUT, request.Sender(buffer));
	opener.join();
	EXPECT_EQ(outcome.winner, 0u);
	EXPECT_FALSE(outcome.hedged);
	EXPECT_EQ(std::string(buffer, 7), "request");
}

TEST(RequestRace, AHedgeRefusedAtTheDeadlineIsAskedForAgainAsTheBudgetGrows) {
	IoPool threads(4);
	HedgePolicy policy;
	Learn(policy, 0.001, HedgePolicy::MIN_SAMPLES); // the floor: 0.15 s
	while (policy.TryHedge(0)) {
	}
	char buffer[8] = {};
	FakeRequest request;
	request.stall = std::make_shared<Gate>();
	std::thread others([&policy] {
		// Past the first deadline, other GETs go out: a hedge's worth of budget.
		std::this_thread::sleep_for(std::chrono::duration<double>(1.5 * HedgePolicy::FLOOR_SECONDS));
		for (int sent = 0; sent * HedgePolicy::SHARE < 1.0 + HedgePolicy::SHARE; sent++) {
			policy.RequestSent();
		}
	});
	auto stall = request.stall;
	std::thread straggler([stall] {
		// Long after the hedge (asked for again at the second deadline) won; without it, the request's answer.
		std::this_thread::sleep_for(std::chrono::seconds(3));
		stall->Open();
	});
	auto outcome = RequestRace::Run(threads, policy, TIMEOUT, request.Sender(buffer));
	others.join();
	straggler.join();
	threads.WaitIdle();
	EXPECT_TRUE(outcome.hedged);
	EXPECT_EQ(outcome.winner, 1u);
	EXPECT_EQ(std::string(buffer, 7), "hedge!!");
}

TEST(RequestRace, NoHedgeWhereTheRequestTimesOutSoonAfterTheDeadline) {
	IoPool threads(4);
	HedgePolicy policy; // cold: 1 s
	char buffer[8] = {};
	FakeRequest request;
	request.stall = std::make_shared<Gate>();
	auto stall = request.stall;
	std::thread opener([stall] {
		// Past the deadline: a hedge would have been sent by now.
		std::this_thread::sleep_for(std::chrono::duration<double>(1.5 * HedgePolicy::COLD_SECONDS));
		stall->Open();
	});
	// A timeout of twice the deadline at most: the request's own retry comes about as soon as a hedge would.
	auto outcome = RequestRace::Run(threads, policy, 2 * HedgePolicy::COLD_SECONDS - 0.1, request.Sender(buffer));
	opener.join();
	EXPECT_FALSE(outcome.hedged);
	EXPECT_EQ(std::string(buffer, 7), "request");
	EXPECT_DOUBLE_EQ(policy.Snapshot().budget, HedgePolicy::BURST) << "no hedge taken";
}

TEST(RequestRace, AFailureIsRethrownToTheCaller) {
	IoPool threads(2);
	HedgePolicy policy;
	EXPECT_THROW(
	    RequestRace::Run(threads, policy, TIMEOUT, [](RequestRace::Entry &) { throw std::runtime_error("no answer"); }),
	    std::runtime_error);
}

//! A sender whose race the other won knows it (its request's retries stop there); outside a race nobody has lost.
TEST(RequestRace, TheLoserKnowsItLost) {
	EXPECT_FALSE(RequestRace::SenderLost());
	IoPool threads(4);
	HedgePolicy policy;
	Learn(policy, 0.001, HedgePolicy::MIN_SAMPLES);
	auto stall = std::make_shared<Gate>();
	auto lost = std::make_shared<std::atomic<int>>(-1);
	auto outcome = RequestRace::Run(threads, policy, TIMEOUT, [stall, lost](RequestRace::Entry &entry) {
		if (entry.slot == 0) {
			stall->Wait();
			*lost = RequestRace::SenderLost() ? 1 : 0;
			return;
		}
		EXPECT_FALSE(RequestRace::SenderLost()) << "nobody claimed yet";
		entry.FirstByte();
		EXPECT_TRUE(entry.Claim());
		EXPECT_FALSE(RequestRace::SenderLost()) << "the winner";
	});
	EXPECT_EQ(outcome.winner, 1u);
	stall->Open();
	threads.WaitIdle();
	EXPECT_EQ(lost->load(), 1);
}
