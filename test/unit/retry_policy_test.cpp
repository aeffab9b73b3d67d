#include "core/requests/retry_policy.hpp"

#include "core/common/io_stats.hpp"
#include "core/common/stream_controller.hpp"
#include "core/requests/hedge_policy.hpp"
#include "core/requests/request_gate.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

using namespace httpfs2;

//! httpfs's defaults (100 ms, backoff 4): no wait before the first retry, then 100, 400, 1600 ms.
TEST(RetryBackoff, WaitsAsHttpfsWaits) {
	RetryBackoff policy {100, 4, 0};
	EXPECT_EQ(policy.After(1).count(), 0);
	EXPECT_EQ(policy.After(2).count(), 100);
	EXPECT_EQ(policy.After(3).count(), 400);
	EXPECT_EQ(policy.After(4).count(), 1600);
}

TEST(RetryBackoff, NoWaitIsLongerThanTheBound) {
	RetryBackoff policy {100, 4, 1000};
	EXPECT_EQ(policy.After(4).count(), 1000);
	EXPECT_EQ(policy.After(30).count(), 1000);
}

//! A throttled answer waits even before the first retry, between half and all of the backoff's next step.
TEST(RetryBackoff, AThrottledAttemptWaitsWithJitter) {
	RetryBackoff policy {100, 4, 1000};
	EXPECT_EQ(policy.Throttled(1, 0).count(), 50);
	EXPECT_EQ(policy.Throttled(1, 0.999).count(), 99);
	EXPECT_EQ(policy.Throttled(2, 0.5).count(), 300);
	EXPECT_EQ(policy.Throttled(10, 0.999).count(), 999) << "within the bound";
	for (int i = 0; i < 1000; i++) {
		auto jitter = RetryJitter();
		ASSERT_GE(jitter, 0);
		ASSERT_LT(jitter, 1);
	}
	EXPECT_TRUE(IsThrottling(503) && IsThrottling(429));
	EXPECT_FALSE(IsThrottling(500) || IsThrottling(404));
}

//! A refusal of the credentials, not of the request: the same request signed with the secret's credentials now.
TEST(RetryBackoff, RefusedCredentialsAreToldApartFromOtherRefusals) {
	EXPECT_TRUE(RefusesCredentials(400, "ExpiredToken"));
	EXPECT_TRUE(RefusesCredentials(403, "InvalidAccessKeyId"));
	EXPECT_TRUE(RefusesCredentials(403, "SignatureDoesNotMatch"));
	EXPECT_FALSE(RefusesCredentials(403, "AccessDenied")) << "a key without the right: another key is not the fix";
	EXPECT_FALSE(RefusesCredentials(404, "NoSuchKey"));
	EXPECT_FALSE(RefusesCredentials(503, "ExpiredToken"));
}

//! An answer that is not the one asked for: its credentials refused, throttled, sent again as httpfs would, or refused.
TEST(RetryBackoff, AnAnswersStatusTellsWhatTheAttemptCameTo) {
	EXPECT_EQ(OutcomeOfStatus(403, "ExpiredToken", false), AttemptOutcome::CREDENTIALS_REFUSED);
	EXPECT_EQ(OutcomeOfStatus(400, "InvalidToken", true), AttemptOutcome::CREDENTIALS_REFUSED);
	EXPECT_EQ(OutcomeOfStatus(503, "SlowDown", true), AttemptOutcome::THROTTLED);
	EXPECT_EQ(OutcomeOfStatus(429, "", false), AttemptOutcome::THROTTLED) << "throttled whether httpfs retries or not";
	EXPECT_EQ(OutcomeOfStatus(500, "InternalError", true), AttemptOutcome::FAILED);
	EXPECT_EQ(OutcomeOfStatus(206, "", true), AttemptOutcome::FAILED) << "a request error after the status";
	EXPECT_EQ(OutcomeOfStatus(500, "InternalError", false), AttemptOutcome::REFUSED)
	    << "a sender whose client gave the answer rather than retrying it";
	EXPECT_EQ(OutcomeOfStatus(403, "AccessDenied", false), AttemptOutcome::REFUSED);
	EXPECT_EQ(OutcomeOfStatus(404, "NoSuchKey", false), AttemptOutcome::REFUSED);
	EXPECT_EQ(OutcomeOfStatus(0, "", true), AttemptOutcome::FAILED) << "no answer at all";
}

namespace {
//! RequestAttempts whose waits are recorded, not slept.
struct RecordedAttempts {
	RecordedAttempts(uint64_t max_attempts, ThrottleListeners listeners = ThrottleListeners())
	    : attempts(RetryBackoff {100, 4, 1000}, max_attempts, listeners) {
		attempts.sleep = [this](std::chrono::milliseconds wait) {
			waits.push_back(wait.count());
		};
	}
	RequestAttempts attempts;
	std::vector<int64_t> waits;
};
} // namespace

//! httpfs's retry settings: http_retries = 3 is four attempts, the first retry at once, then 100 and 400 ms.
TEST(RequestAttempts, FailuresAreRetriedAsHttpfsRetries) {
	RecordedAttempts recorded(4);
	auto &attempts = recorded.attempts;
	EXPECT_FALSE(attempts.InDoubt());
	EXPECT_TRUE(attempts.Again(AttemptOutcome::FAILED));
	EXPECT_TRUE(attempts.Again(AttemptOutcome::FAILED));
	EXPECT_TRUE(attempts.Again(AttemptOutcome::FAILED));
	EXPECT_EQ(attempts.Number(), 4u);
	EXPECT_FALSE(attempts.Again(AttemptOutcome::FAILED)) << "the fourth attempt is the last";
	EXPECT_EQ(recorded.waits, (std::vector<int64_t> {100, 400})) << "no wait before the first retry";
	EXPECT_TRUE(attempts.InDoubt()) << "a failure may have reached the store";
}

//! A cancelled query stops its request's retries: within a slice of the wait it is in (a throttled wait may last
//! 20 s), and before sending another.
TEST(RequestAttempts, ACancelledRequestStopsWithinASliceOfItsWait) {
	RecordedAttempts recorded(9);
	auto &attempts = recorded.attempts;
	int checks = 0;
	attempts.CancelWith([&]() { return ++checks > 2; });
	EXPECT_TRUE(attempts.Again(AttemptOutcome::FAILED)); // no wait before the first retry: asked once
	EXPECT_FALSE(attempts.Again(AttemptOutcome::FAILED)) << "cancelled during the 100 ms wait";
	EXPECT_TRUE(attempts.Cancelled());
	EXPECT_EQ(recorded.waits, (std::vector<int64_t> {50})) << "slept in slices, and no further once cancelled";
	EXPECT_EQ(attempts.Number(), 2u);
	RecordedAttempts uncancelled(4);
	uncancelled.attempts.CancelWith([]() { return false; });
	while (uncancelled.attempts.Again(AttemptOutcome::FAILED)) {
	}
	EXPECT_FALSE(uncancelled.attempts.Cancelled());
	int64_t slept = 0;
	for (auto wait : uncancelled.waits) {
		EXPECT_LE(wait, RequestAttempts::CANCEL_SLICE.count());
		slept += wait;
	}
	EXPECT_EQ(slept, 100 + 400) << "the same waits as without a check, in slices";
}

TEST(RequestAttempts, AnAnswerOrARefusalEndsTheRequest) {
	RecordedAttempts done(4);
	EXPECT_FALSE(done.attempts.Again(AttemptOutcome::DONE));
	RecordedAttempts refused(4);
	EXPECT_FALSE(refused.attempts.Again(AttemptOutcome::REFUSED));
	EXPECT_FALSE(refused.attempts.InDoubt()) << "a refusal is an answer: nothing was done";
	EXPECT_TRUE(done.waits.empty() && refused.waits.empty());
}

//! A throttled answer halves the streams, holds hedges back, is counted with its wait, and waits even before the
//! first retry.
TEST(RequestAttempts, AThrottledAnswerIsToldAndWaitedOut) {
	IoStats stats;
	StreamController streams;
	HedgePolicy hedges;
	RecordedAttempts recorded(4, ThrottleListeners {&stats, &streams, &hedges});
	EXPECT_TRUE(recorded.attempts.Again(AttemptOutcome::THROTTLED));
	ASSERT_EQ(recorded.waits.size(), 1u);
	EXPECT_GE(recorded.waits[0], 50);
	EXPECT_LT(recorded.waits[0], 100);
	EXPECT_EQ(stats.Snapshot().Get(Counter::THROTTLED_ANSWERS), 1u);
	EXPECT_EQ(stats.Snapshot().Get(Counter::THROTTLED_WAIT_MICROS), static_cast<uint64_t>(recorded.waits[0]) * 1000);
	EXPECT_EQ(streams.Snapshot().throttles, 1u) << "the streams are halved";
	EXPECT_FALSE(hedges.TryHedge(StreamController::Now())) << "no hedge while the store throttles";
	for (uint64_t attempt = 2; attempt < 4 + RequestAttempts::THROTTLED_EXTRA_ATTEMPTS; attempt++) {
		EXPECT_TRUE(recorded.attempts.Again(AttemptOutcome::THROTTLED)) << attempt;
	}
	EXPECT_EQ(recorded.attempts.Number(), 9u);
	EXPECT_FALSE(recorded.attempts.Again(AttemptOutcome::THROTTLED)) << "httpfs's four attempts and five more";
	EXPECT_EQ(stats.Snapshot().Get(Counter::THROTTLED_ANSWERS), 9u) << "the last one is counted too";
}

//! Throttled answers while the prefix's gate is open (the store refuses some, not the prefix's pace): a quarter of the
//! throttled wait, and the streams are left as they are. Once the gate finds the prefix past its pace
//! (MIN_THROTTLES_TO_LIMIT throttled answers in a second, nothing passing) the streams are halved and the retries wait
//! the whole of it.
TEST(RequestAttempts, ThrottledAnswersOfAnOpenGateWaitLessAndLeaveTheStreams) {
	auto gate = std::make_shared<RequestGate>();
	StreamController streams;
	ThrottleListeners listeners;
	listeners.streams = &streams;
	listeners.gate = gate;
	RecordedAttempts recorded(4, listeners);
	for (int i = 0; i < 2; i++) {
		EXPECT_TRUE(recorded.attempts.Again(AttemptOutcome::THROTTLED));
	}
	ASSERT_EQ(recorded.waits.size(), 2u);
	EXPECT_GE(recorded.waits[0], 12); // 50-100 ms, a quarter
	EXPECT_LE(recorded.waits[0], 25);
	EXPECT_GE(recorded.waits[1], 50); // 200-400 ms, a quarter
	EXPECT_LE(recorded.waits[1], 100);
	EXPECT_EQ(streams.Snapshot().throttles, 0u) << "streams halved for a store that refuses a share";
	EXPECT_FALSE(gate->Limited());
	while (!gate->Limited()) {
		ASSERT_TRUE(recorded.attempts.Again(AttemptOutcome::THROTTLED));
	}
	EXPECT_EQ(recorded.attempts.Throttles(), static_cast<uint64_t>(RequestGate::MIN_THROTTLES_TO_LIMIT));
	EXPECT_EQ(streams.Snapshot().throttles, 1u) << "the prefix past its pace: streams halved once";
	EXPECT_GE(recorded.waits.back(), 500) << "the whole wait, bounded by 1 s";
}

//! A throttled answer earns an attempt beyond httpfs's retries, up to THROTTLED_EXTRA_ATTEMPTS in all, whatever failed
//! before it; other failures earn none, and with retries off (one attempt) a throttled answer ends the request too.
TEST(RequestAttempts, ThrottledAnswersEarnAttemptsBeyondHttpfsRetries) {
	RecordedAttempts failed(4);
	EXPECT_TRUE(failed.attempts.Again(AttemptOutcome::FAILED));
	EXPECT_TRUE(failed.attempts.Again(AttemptOutcome::FAILED));
	EXPECT_TRUE(failed.attempts.Again(AttemptOutcome::THROTTLED));
	EXPECT_TRUE(failed.attempts.Again(AttemptOutcome::FAILED)) << "the throttled answer's extra attempt";
	EXPECT_FALSE(failed.attempts.Again(AttemptOutcome::FAILED));

	RecordedAttempts single(1);
	EXPECT_FALSE(single.attempts.Again(AttemptOutcome::THROTTLED)) << "http_retries = 0: no retry at all";

	RetryBackoff unbounded {100, 4, 0};
	EXPECT_EQ(unbounded.Throttled(12, 0.999).count(), 19990) << "a throttled wait stays under 20 s";
	RetryBackoff bounded {100, 4, 1000};
	EXPECT_EQ(bounded.Throttled(12, 0.999).count(), 999) << "or under the caller's bound";
}

//! DuckDB 2.0's http_retry_throttled_wait_ms raises the base of throttled waits, not of other retries.
TEST(RequestAttempts, ThrottledRetriesBackOffFromTheirOwnBase) {
	RetryBackoff backoff {100, 4, 0, 1000};
	EXPECT_EQ(backoff.Throttled(1, 0).count(), 500);
	EXPECT_EQ(backoff.After(2).count(), 100);
}

//! Refused credentials: one more attempt, at once and not counted, when they changed; never a second refresh.
TEST(RequestAttempts, RefusedCredentialsAreSentAgainOnceWhenTheyChanged) {
	RecordedAttempts unchanged(4);
	int asked = 0;
	EXPECT_FALSE(unchanged.attempts.Again(AttemptOutcome::CREDENTIALS_REFUSED, [&]() {
		asked++;
		return false;
	}));
	EXPECT_EQ(asked, 1);
	EXPECT_FALSE(unchanged.attempts.Again(AttemptOutcome::CREDENTIALS_REFUSED)) << "nothing to refresh them with";

	RecordedAttempts changed(1);
	auto refresh = [&]() {
		asked++;
		return true;
	};
	EXPECT_TRUE(changed.attempts.Again(AttemptOutcome::CREDENTIALS_REFUSED, refresh))
	    << "a request of one attempt still gets its re-signed one";
	EXPECT_EQ(changed.attempts.Number(), 1u);
	EXPECT_FALSE(changed.attempts.Again(AttemptOutcome::CREDENTIALS_REFUSED, refresh)) << "once per request";
	EXPECT_EQ(asked, 2);
	EXPECT_TRUE(changed.waits.empty());
}

//! Run: every attempt starts fresh, the outcome and the attempt returned are the last one's, and refresh is asked with
//! the attempt that was refused.
TEST(RequestAttempts, RunSendsFreshAttemptsUntilOneIsDoneOrTheRequestGivesUp) {
	struct Attempt {
		int number = 0;
		uint64_t signed_with = 0;
	};
	std::vector<AttemptOutcome> outcomes {AttemptOutcome::FAILED, AttemptOutcome::CREDENTIALS_REFUSED,
	                                      AttemptOutcome::THROTTLED, AttemptOutcome::DONE, AttemptOutcome::FAILED};
	RecordedAttempts recorded(4);
	int sent = 0;
	std::vector<uint64_t> refreshed_after;
	Attempt attempt;
	auto outcome = recorded.attempts.Run(
	    attempt,
	    [&](Attempt &fresh) {
		    EXPECT_EQ(fresh.number, 0) << "an attempt starts fresh";
		    fresh.number = ++sent;
		    fresh.signed_with = static_cast<uint64_t>(sent * 10);
		    return outcomes[static_cast<size_t>(sent - 1)];
	    },
	    [&](const Attempt &refused) {
		    refreshed_after.push_back(refused.signed_with);
		    return true;
	    });
	EXPECT_EQ(outcome, AttemptOutcome::DONE);
	EXPECT_EQ(sent, 4) << "the refused credentials' attempt is not counted: the fourth of four is the DONE one";
	EXPECT_EQ(attempt.number, 4);
	EXPECT_EQ(refreshed_after, (std::vector<uint64_t> {20}));

	RecordedAttempts refused(4);
	sent = 0;
	outcome = refused.attempts.Run(
	    attempt,
	    [&](Attempt &fresh) {
		    fresh.number = ++sent;
		    return AttemptOutcome::REFUSED;
	    },
	    [](const Attempt &) { return true; });
	EXPECT_EQ(outcome, AttemptOutcome::REFUSED);
	EXPECT_EQ(sent, 1);
	EXPECT_EQ(attempt.number, 1);
}

//! A request in doubt is known to the caller as soon as it is, even when a later attempt throws out of Run.
TEST(RequestAttempts, DoubtIsReportedAsItArises) {
	RecordedAttempts refused(4);
	bool in_doubt = false;
	refused.attempts.ReportDoubtTo(in_doubt);
	EXPECT_TRUE(refused.attempts.Again(AttemptOutcome::CREDENTIALS_REFUSED, []() { return true; }));
	EXPECT_FALSE(refused.attempts.Again(AttemptOutcome::REFUSED));
	EXPECT_FALSE(in_doubt) << "refused answers: nothing took effect";

	RecordedAttempts failing(4);
	failing.attempts.ReportDoubtTo(in_doubt);
	int sent = 0;
	struct Attempt {};
	Attempt attempt;
	auto send = [&](Attempt &) {
		if (++sent == 2) {
			throw std::runtime_error("the client threw");
		}
		return AttemptOutcome::FAILED;
	};
	EXPECT_THROW(failing.attempts.Run(attempt, send, [](const Attempt &) { return false; }), std::runtime_error);
	EXPECT_EQ(sent, 2);
	EXPECT_TRUE(in_doubt) << "the first attempt failed on the way";
}
