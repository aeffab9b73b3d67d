//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/retry_policy.hpp
//
// The one retry policy of every request httpfs2 sends itself (range GETs, tails, listings, upload parts, an upload's
// begin, completion and abort): how long attempts wait between them (httpfs's http_retry_wait_ms and
// http_retry_backoff; DuckDB 2.0's http_retry_throttled_wait_ms), which failures are sent again, what an answer that
// asks the client to slow down (throttling) makes them wait and whom it tells, and the one new attempt after the
// credentials were refused and changed.
//===----------------------------------------------------------------------===//

#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace httpfs2 {

struct RetryBackoff {
	uint64_t wait_ms = 0;
	double backoff = 1;
	//! No wait is longer than this (0: no bound).
	uint64_t max_wait_ms = 0;
	//! The smallest base wait of throttled retries (DuckDB 2.0's http_retry_throttled_wait_ms; 0 on 1.5): they back
	//! off from the larger of it and wait_ms.
	uint64_t throttled_wait_ms = 0;

	//! The wait after attempt `failed` (1 = the first) failed, before the next: as httpfs waits, none before the first
	//! retry, then wait_ms times backoff^(failed - 2).
	std::chrono::milliseconds After(uint64_t failed) const;
	//! The wait after attempt `failed` was throttled: the store asked to slow down, so even the first retry waits,
	//! max(wait_ms, throttled_wait_ms) x backoff^(failed - 1) (bounded by max_wait_ms), of which a random share between
	//! half and all of it
	//! (`jitter` in [0, 1)): streams throttled at once do not all come back at once. Never longer than
	//! MAX_THROTTLED_WAIT_MS, as a client of S3 waits at most.
	std::chrono::milliseconds Throttled(uint64_t failed, double jitter) const;

	static constexpr uint64_t MAX_THROTTLED_WAIT_MS = 20000;
};

//! Whether an answer's status asks the client to slow down: 503 (S3's SlowDown, Azure's ServerBusy, GCS's) or 429.
inline bool IsThrottling(int status) {
	return status == 503 || status == 429;
}

//! Whether an answer refuses the request's credentials rather than the request (400 or 403 with S3's code for an
//! expired session token, an unknown key or a signature made with another secret): the same request signed with
//! the credentials the secret holds now may pass.
bool RefusesCredentials(int status, const std::string &code);

//! A random number in [0, 1) for Throttled's jitter (a generator per thread).
double RetryJitter();

class IoStats;
class StreamController;
class HedgePolicy;
class RequestGate;

//! What one attempt of a request came to, as its sender judged the answer.
enum class AttemptOutcome : uint8_t {
	//! Answered as asked: no other attempt.
	DONE,
	//! Refused in a way another attempt would not change (403, 404, an answer of another version), or a failure the
	//! sender does not retry (a request that stands in for another, which the open then makes).
	REFUSED,
	//! Failed on the way (no answer, a cut connection, a 5xx or another status httpfs retries): it may have reached
	//! the store, and another attempt may pass.
	FAILED,
	//! The store asked the client to slow down (IsThrottling).
	THROTTLED,
	//! The store refused the credentials it was signed with (RefusesCredentials).
	CREDENTIALS_REFUSED
};

//! What an answer that is not the one asked for comes to, by its status and the store's error code (the Code of S3's
//! error document): CREDENTIALS_REFUSED (RefusesCredentials), THROTTLED (IsThrottling), FAILED when httpfs would send
//! it again (`retried_by_httpfs`: HTTPResponse::ShouldRetry, a request error or a status such as 500), else REFUSED.
//! Each sender tells first which answers are the one asked for.
AttemptOutcome OutcomeOfStatus(int status, const std::string &error_code, bool retried_by_httpfs);

//! Who hears of throttled answers; any may be null. The stats count them and the time waited, the hedging policy sends
//! no hedge for a while (a hedge is one more request to a store that asked for fewer), the admission gate of the
//! request's prefix holds the prefix's requests to a rate once they are past its pace (RequestGate), which every
//! attempt passes first, and then the streams of the database's reads or of its uploads are halved
//! (StreamController::Throttled; for every throttled answer where there is no gate).
struct ThrottleListeners {
	IoStats *stats = nullptr;
	StreamController *streams = nullptr;
	HedgePolicy *hedges = nullptr;
	std::shared_ptr<RequestGate> gate;
};

//! The attempts of one request: after each, whether another is sent and how long it waits first. Attempts follow
//! httpfs's retry settings (at most `max_attempts`, RetryBackoff's waits); a throttled answer is told to the
//! listeners and earns one more attempt (up to THROTTLED_EXTRA_ATTEMPTS) where the settings retry at all: the store
//! said it is busy, not that the request failed. It waits RetryBackoff::Throttled where the prefix's gate holds the
//! prefix to a rate (the store refuses its pace), where there is no gate, or where DuckDB 2.0's
//! http_retry_throttled_wait_ms is set; else (a store refusing a share of requests whatever their pace, or a prefix
//! not yet found past it) a quarter of that (OPEN_GATE_WAIT_DIVISOR). A refusal of the credentials is sent again
//! once, at once and not counted as an attempt, when the credentials changed since (`refresh` says so, having looked
//! them up again). A request of a race another request won (RequestRace::SenderLost) is not sent again.
class RequestAttempts {
public:
	//! A store throttling a share of all requests throttles each attempt with that share: with httpfs's four attempts
	//! a scan of a few hundred requests at 20% fails one in a few runs; with nine, one in thousands. DuckDB 2.0 gives
	//! throttled requests as many more retries.
	static constexpr uint64_t THROTTLED_EXTRA_ATTEMPTS = 5;
	//! A throttled wait while the prefix's gate is open is this much shorter: the gate finds a prefix past its pace
	//! within a second and then paces it, and a store refusing a share of requests whatever their pace refuses no
	//! fewer after a longer wait. The pressure bench's one in five refused took a 0.4 s scan to 2.5 s with the whole
	//! wait (3.4 s in all) and streams halved at each, where native 1.5.5, whose httpfs sends a first retry at once,
	//! took 1.3x its time; 0.6 s with a quarter of it and the streams left.
	static constexpr int OPEN_GATE_WAIT_DIVISOR = 4;

	RequestAttempts(RetryBackoff backoff, uint64_t max_attempts, ThrottleListeners listeners = ThrottleListeners());

	//! After the current attempt came to `outcome`: true when another is to be sent, after the wait (slept here).
	//! `refresh` is asked after a refusal of the credentials, at most once per request.
	bool Again(AttemptOutcome outcome, const std::function<bool()> &refresh = nullptr);
	//! The attempts of the request: `send` makes one into a fresh `attempt` and says what it came to, until one is
	//! DONE or Again says no other is sent; `refresh(attempt)` looks the credentials up again after a refusal of those
	//! `attempt` was signed with. Returns the last attempt's outcome, which `attempt` holds.
	//! Each attempt waits at the prefix's gate first (Admit); one cancelled there is not sent and comes to FAILED.
	template <class ATTEMPT, class SEND, class REFRESH>
	AttemptOutcome Run(ATTEMPT &attempt, SEND send, REFRESH refresh) {
		for (;;) {
			attempt = ATTEMPT();
			if (!Admit()) {
				return AttemptOutcome::FAILED;
			}
			auto outcome = send(attempt);
			if (outcome == AttemptOutcome::DONE) {
				Passed();
				return outcome;
			}
			if (!Again(outcome, [&]() { return refresh(attempt); })) {
				return outcome;
			}
		}
	}
	//! The attempt being made: 1 for the first.
	uint64_t Number() const {
		return number;
	}
	//! The throttled answers so far.
	uint64_t Throttles() const {
		return throttled;
	}
	//! Whether an attempt failed in a way that may have reached the store (FAILED or THROTTLED): a request that must
	//! not arrive twice (an upload's begin) is then in doubt.
	bool InDoubt() const {
		return in_doubt;
	}
	//! Sets `flag` too when the request becomes in doubt (InDoubt), as it does: the caller knows it even when a later
	//! attempt ends in an exception that leaves Run.
	void ReportDoubtTo(bool &flag) {
		doubt_reported_to = &flag;
	}

	//! How waits are slept (tests record them instead).
	std::function<void(std::chrono::milliseconds)> sleep;

	//! A wait is slept in slices of at most this while a cancel check is set, so a cancelled request stops within one.
	static constexpr std::chrono::milliseconds CANCEL_SLICE {50};
	//! `check` is asked before each retry and during its wait (a throttled wait may last 20 s): once it says so, no
	//! other attempt is sent and Cancelled() is true.
	void CancelWith(std::function<bool()> check) {
		cancel_check = std::move(check);
	}
	//! Whether the attempts ended because the cancel check said so.
	bool Cancelled() const {
		return cancelled;
	}
	//! The attempts do not wait at the gate for a turn (it still hears of their answers): for a request that ends work
	//! (UploadRequests::SendCleanup).
	void Unpaced() {
		paced = false;
	}

private:
	//! Waits at the gate of the request's prefix, if any, until it admits the attempt (counted in the stats; a turn
	//! voided by a cut of the gate's rate meanwhile is asked for again); false when cancelled meanwhile.
	bool Admit();
	//! Tells the gate an answer passed.
	void Passed() const;
	//! The wait after a throttled answer (RetryBackoff::Throttled, or a quarter of it: see the class), counted in the
	//! stats.
	std::chrono::milliseconds ThrottledWait() const;
	//! Sleeps `wait` (in slices while a cancel check is set); false, sleeping no more, once the check says so.
	bool Wait(std::chrono::milliseconds wait);
	//! Tells the listeners of a throttled answer (the streams only where the gate found the prefix past its pace).
	void Throttled() const;

	const RetryBackoff backoff;
	const uint64_t max_attempts;
	const ThrottleListeners listeners;
	uint64_t number = 1;
	bool in_doubt = false;
	bool *doubt_reported_to = nullptr;
	bool refreshed = false;
	uint64_t throttled = 0;
	std::function<bool()> cancel_check;
	bool cancelled = false;
	bool paced = true;
	//! When the current attempt was admitted.
	double sent_at = 0;
};

} // namespace httpfs2
