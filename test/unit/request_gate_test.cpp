#include "core/requests/request_gate.hpp"

#include "core/common/io_stats.hpp"
#include "core/common/stream_controller.hpp"
#include "core/requests/retry_policy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <queue>
#include <vector>

using namespace httpfs2;

namespace {
//! Sends `count` requests through `gate` one after another from `now`, each when the gate says; returns the time
//! after the last. A request answered passes.
double SendInTurn(RequestGate &gate, double now, int count) {
	for (int i = 0; i < count; i++) {
		now += gate.Admit(now);
		gate.Passed(now);
	}
	return now;
}
} // namespace

//! A prefix never throttled: every request is admitted at once, however many and however fast.
TEST(RequestGate, AdmitsEverythingWhileNothingIsThrottled) {
	RequestGate gate;
	for (int i = 0; i < 10000; i++) {
		ASSERT_EQ(gate.Admit(100 + i * 1e-5), 0) << i;
		gate.Passed(100 + i * 1e-5);
	}
	EXPECT_FALSE(gate.Limited());
	EXPECT_EQ(gate.Rate(), 0);
}

//! After throttled answers the prefix is held to a share of the rate admitted before them; the rate grows back while
//! answers pass, throttling cuts it again, and the gate opens once the store has not throttled for a while.
TEST(RequestGate, AThrottleHoldsThePrefixToARateThatGrowsBack) {
	RequestGate gate;
	double now = 100;
	for (int i = 0; i < 100; i++) { // 100 requests in the second before the throttle, no answer back yet
		ASSERT_EQ(gate.Admit(now + i * 0.01), 0);
	}
	now = 101;
	for (int i = 0; i < 33; i++) {
		gate.Throttled(now, now);
	}
	EXPECT_FALSE(gate.Limited()) << "a third of the requests not yet refused";
	for (int i = 0; i < 20; i++) {
		gate.Throttled(now, now);
	}
	ASSERT_TRUE(gate.Limited());
	EXPECT_NEAR(gate.Rate(), RequestGate::DEEPEST_CUT * 100, 1e-9)
	    << "nothing passed: the deepest cut of the rate admitted in the last second";
	// Requests at once now wait their turn: the tenth waits nine of the rate's intervals.
	std::vector<double> waits;
	for (int i = 0; i < 10; i++) {
		waits.push_back(gate.Admit(now));
	}
	EXPECT_EQ(waits[0], 0);
	EXPECT_NEAR(waits[9], 9 / gate.Rate(), 1e-9);
	auto cut = gate.Rate();
	gate.Throttled(now + 0.5, now + 0.5);
	EXPECT_EQ(gate.Rate(), cut) << "a throttle within a second of the cut answers the pace before it";
	// Answers pass: the rate grows by FIRST_GROWTH_PER_PASS for each (no cut of the closed gate has shown the rate
	// the store takes yet).
	now = SendInTurn(gate, now + 0.5, 40);
	EXPECT_NEAR(gate.Rate(), cut + 40 * RequestGate::FIRST_GROWTH_PER_PASS, 1e-9);
	// Throttled again, a second after the cut: cut again, to a share of the rate the store let pass.
	auto grown = gate.Rate();
	for (int i = 0; i < 20; i++) {
		gate.Throttled(now, now);
	}
	EXPECT_LT(gate.Rate(), grown);
	EXPECT_GE(gate.Rate(), RequestGate::DEEPEST_CUT * grown);
	// No throttle for OPEN_AFTER_SECONDS: open again, nothing waits.
	now += RequestGate::OPEN_AFTER_SECONDS;
	EXPECT_EQ(gate.Admit(now), 0);
	EXPECT_FALSE(gate.Limited());
	EXPECT_EQ(gate.Admit(now), 0);
}

//! A store that refuses a share of all requests whatever their pace (a fifth here, as the pressure bench's throttled
//! condition does): a lower rate would refuse no fewer, so the gate stays open and costs the reads nothing.
TEST(RequestGate, AShareOfRequestsThrottledWhateverThePaceLeavesTheGateOpen) {
	RequestGate gate;
	double now = 100;
	for (int i = 0; i < 1000; i++) {
		ASSERT_EQ(gate.Admit(now), 0) << i;
		if (i % 5 == 0) {
			gate.Throttled(now, now);
		} else {
			gate.Passed(now);
		}
		now += 0.01;
	}
	EXPECT_FALSE(gate.Limited());
}

//! The first second of a scan: few answers, and the throttled ones first (a 503 has no body to wait for). Three of
//! nine refused is a store refusing a share (the pressure bench's one in five), not a prefix past its pace: the gate
//! stays open (it closed at 4.5 a second for the rest of a 0.4 s scan, which then took 15 s).
TEST(RequestGate, AFewThrottledAnswersOfAFirstSecondLeaveTheGateOpen) {
	RequestGate gate;
	double now = 100;
	for (int i = 0; i < 9; i++) {
		ASSERT_EQ(gate.Admit(now + i * 0.05), 0);
	}
	for (int i = 0; i < 3; i++) {
		EXPECT_FALSE(gate.Throttled(now + 0.2, now));
	}
	for (int i = 0; i < 6; i++) {
		gate.Passed(now + 0.5);
	}
	EXPECT_FALSE(gate.Limited());
}

//! A store that refuses past a rate of 8 a second (counting what it refuses, as S3 and the hostile proxy do): a client
//! that would send 100 a second, sending as the gate admits, is refused a few times a cut, and passes at most of 8 a
//! second.
TEST(RequestGate, APrefixPastItsRateSettlesNearIt) {
	RequestGate gate;
	std::vector<double> recent; // the store's last second of requests, refused ones too
	int refused = 0, sent = 0;
	double now = 100;
	for (int i = 0; i < 400; i++) {
		now += gate.Admit(now);
		recent.erase(recent.begin(),
		             std::find_if(recent.begin(), recent.end(), [&](double at) { return now - at < 1; }));
		recent.push_back(now);
		sent++;
		if (recent.size() > 8) {
			refused++;
			gate.Throttled(now, now);
		} else {
			gate.Passed(now);
		}
		now += 0.01; // a client that would send 100 a second
	}
	EXPECT_TRUE(gate.Limited());
	EXPECT_LT(refused, sent / 5) << refused << " of " << sent << " (without the gate, 92 of 100)";
	EXPECT_LT(gate.Rate(), 12);
	EXPECT_GT((sent - refused) / (now - 100), 5) << "most of the store's rate used, not a crawl below it";
}

//! Many requests at once (32 clients, each sending its next request when the last was answered, 50 ms later) to a
//! store that refuses every request past 25 a second to the prefix, counting what it refuses: most of the store's
//! rate is used and few requests are refused. Before a cut voided the turns booked at the rate before it, and before
//! a cut went by what the store let pass, the queue of turns booked at a rate the store refused kept it refusing:
//! the gate cut to the lowest rates (2.5 a second) with seconds of turns booked ahead (the pressure bench's
//! throttled-rate glob: 8 requests a second passed).
TEST(RequestGate, ManyRequestsAtOnceSettleNearTheStoresRate) {
	RequestGate gate;
	constexpr double LIMIT = 25, ANSWER_SECONDS = 0.05, RETRY_SECONDS = 0.1, START = 100, END = 130;
	struct Client {
		double at;
		int index;
		bool operator>(const Client &other) const {
			return at > other.at;
		}
	};
	struct Waiting {
		uint64_t booking = 0;
		bool waiting = false;
	};
	std::vector<Waiting> waiting(32);
	std::priority_queue<Client, std::vector<Client>, std::greater<Client>> due;
	for (int i = 0; i < 32; i++) {
		due.push({START, i});
	}
	std::deque<double> recent; // the store's last second of requests, refused ones too
	int passed_late = 0, refused_late = 0;
	while (!due.empty() && due.top().at < END) {
		auto client = due.top();
		due.pop();
		auto &state = waiting[client.index];
		if (!state.waiting || !gate.Booked(state.booking)) {
			auto wait = gate.Admit(client.at, &state.booking, state.waiting);
			if (wait > 0) {
				state.waiting = true;
				due.push({client.at + wait, client.index});
				continue;
			}
		}
		state.waiting = false;
		auto now = client.at;
		while (!recent.empty() && now - recent.front() >= 1) {
			recent.pop_front();
		}
		recent.push_back(now);
		bool refused = recent.size() > LIMIT;
		auto answered = now + ANSWER_SECONDS;
		if (refused) {
			gate.Throttled(answered, now);
		} else {
			gate.Passed(answered);
		}
		if (now >= START + 10) {
			(refused ? refused_late : passed_late)++;
		}
		due.push({answered + (refused ? RETRY_SECONDS : 0), client.index});
	}
	auto seconds = END - START - 10;
	EXPECT_GT(passed_late / seconds, 0.6 * LIMIT) << "passed a second, the store taking " << LIMIT;
	EXPECT_LT(refused_late, (passed_late + refused_late) / 5)
	    << refused_late << " refused of " << passed_late + refused_late;
}

//! A wait at the gate is a wait of the request's attempts: slept in slices while a cancel check is set, ended within
//! one once the query is cancelled, and counted in the stats.
TEST(RequestGate, ACancelledWaitAtTheGateEndsWithinASlice) {
	auto gate = std::make_shared<RequestGate>();
	auto now = StreamController::Now(); // the clock RequestAttempts asks the gate with
	for (int i = 0; i < RequestGate::MIN_THROTTLES_TO_LIMIT; i++) {
		gate->Throttled(now, now); // nothing admitted: held to the lowest rate, a second between requests
	}
	gate->Admit(now); // the next request is admitted a second from now
	IoStats stats;
	ThrottleListeners listeners;
	listeners.stats = &stats;
	listeners.gate = gate;
	RequestAttempts attempts(RetryBackoff {100, 4, 1000}, 4, listeners);
	std::vector<int64_t> slept;
	attempts.sleep = [&](std::chrono::milliseconds wait) {
		slept.push_back(wait.count());
	};
	int checks = 0;
	attempts.CancelWith([&]() { return ++checks > 2; });
	int sends = 0;
	int attempt = 0;
	auto outcome = attempts.Run(
	    attempt,
	    [&](int &) {
		    sends++;
		    return AttemptOutcome::DONE;
	    },
	    [](int &) { return false; });
	EXPECT_NE(outcome, AttemptOutcome::DONE);
	EXPECT_TRUE(attempts.Cancelled());
	EXPECT_EQ(sends, 0) << "cancelled at the gate: never sent";
	EXPECT_EQ(slept, (std::vector<int64_t> {50, 50})) << "slices, and no further once cancelled";
	EXPECT_GT(stats.Snapshot().Get(Counter::GATE_WAIT_MICROS), 0u);
}

//! A request that ends work (an upload's abort) is not held to the prefix's pace: sent at once, and its answer still
//! heard by the gate.
TEST(RequestGate, AnUnpacedRequestGoesWithoutWaitingItsTurn) {
	auto gate = std::make_shared<RequestGate>();
	auto now = StreamController::Now();
	for (int i = 0; i < RequestGate::MIN_THROTTLES_TO_LIMIT; i++) {
		gate->Throttled(now, now);
	}
	gate->Admit(now); // a paced request would wait a second
	auto rate = gate->Rate();
	ThrottleListeners listeners;
	listeners.gate = gate;
	RequestAttempts attempts(RetryBackoff {100, 4, 1000}, 4, listeners);
	attempts.Unpaced();
	std::vector<int64_t> slept;
	attempts.sleep = [&](std::chrono::milliseconds wait) {
		slept.push_back(wait.count());
	};
	int attempt = 0;
	auto outcome = attempts.Run(
	    attempt, [](int &) { return AttemptOutcome::DONE; }, [](int &) { return false; });
	EXPECT_EQ(outcome, AttemptOutcome::DONE);
	EXPECT_TRUE(slept.empty()) << "waited at the gate";
	EXPECT_GT(gate->Rate(), rate) << "its answer was not told to the gate (a pass grows the rate)";
}

//! The gate of a prefix: a path's folder, query left out, the store named by its scheme and bucket.
TEST(RequestGate, APrefixIsAPathsFolder) {
	EXPECT_EQ(RequestGates::PrefixOf("s3://bucket/data/part-1.parquet"), "s3://bucket/data");
	EXPECT_EQ(RequestGates::PrefixOf("s3://bucket/data/*.parquet"), "s3://bucket/data");
	EXPECT_EQ(RequestGates::PrefixOf("https://host/a/b.csv?sig=x/y"), "https://host/a");
	EXPECT_EQ(RequestGates::PrefixOf("s3://bucket/file"), "s3://bucket");
	RequestGates gates;
	EXPECT_EQ(gates.For("s3://b/d/one", 0), gates.For("s3://b/d/two", 0));
	EXPECT_NE(gates.For("s3://b/d/one", 0), gates.For("s3://b/e/one", 0));
	EXPECT_NE(gates.For("s3://b/d/one", 0), gates.For("r2://b/d/one", 0));
}

//! Gates are not kept forever: once more than KEPT_GATES are, a lookup drops those no one holds that were idle for a
//! minute. A gate held, one looked up or used lately, and one still holding its prefix to a rate stay, with what
//! they learnt.
TEST(RequestGates, GatesIdleForAMinuteAreDroppedWhenManyAreKept) {
	RequestGates gates;
	auto held = gates.For("s3://b/held/x", 0);
	for (size_t i = 0; i < RequestGates::KEPT_GATES - 3; i++) {
		gates.For("s3://b/idle" + std::to_string(i) + "/x", 0);
	}
	// Looked up at first, used (an answer passed) 30 seconds in.
	gates.For("s3://b/used/x", 0)->Passed(30);
	// Throttled 55 seconds in: held to a rate.
	auto throttled = gates.For("s3://b/throttled/x", 0);
	for (int i = 0; i < RequestGate::MIN_THROTTLES_TO_LIMIT; i++) {
		throttled->Throttled(55, 55);
	}
	ASSERT_TRUE(throttled->Limited());
	throttled.reset();
	ASSERT_EQ(gates.Size(), RequestGates::KEPT_GATES);
	// At the bound nothing is swept, however idle: a lookup of a kept gate 70 seconds in.
	gates.For("s3://b/idle0/x", 70);
	EXPECT_EQ(gates.Size(), RequestGates::KEPT_GATES);

	// One more, 80 seconds in: the gates idle since the start go.
	gates.For("s3://b/new/x", 80);
	EXPECT_EQ(gates.Size(), 5u) << "held, idle0 (looked up at 70), used, throttled and the new one";
	EXPECT_EQ(gates.For("s3://b/held/x", 80), held) << "a held gate is the one its holder has";
	EXPECT_TRUE(gates.For("s3://b/throttled/x", 80)->Limited()) << "a gate used lately keeps its rate";
	EXPECT_EQ(gates.Size(), 5u);

	// Much later, lookups past the bound find all but the held gate idle.
	for (size_t i = 0; i < RequestGates::KEPT_GATES; i++) {
		gates.For("s3://c/later" + std::to_string(i) + "/x", 1000);
	}
	EXPECT_EQ(gates.Size(), 1 + RequestGates::KEPT_GATES) << "the held gate and those looked up at 1000";
	EXPECT_EQ(gates.For("s3://b/held/x", 1000), held);
	EXPECT_FALSE(gates.For("s3://b/throttled/x", 1000)->Limited()) << "dropped: its prefix has a new gate";
}
