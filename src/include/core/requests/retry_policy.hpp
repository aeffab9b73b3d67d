//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/retry_policy.hpp
//
// How long the requests httpfs2 sends itself wait between attempts: httpfs's policy (http_retry_wait_ms,
// http_retry_backoff), written once for the range GETs and the uploads' requests; and what an answer that asks the
// client to slow down (throttling) makes them wait.
//===----------------------------------------------------------------------===//

#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace httpfs2 {

struct RetryBackoff {
	uint64_t wait_ms = 0;
	double backoff = 1;
	//! No wait is longer than this (0: no bound).
	uint64_t max_wait_ms = 0;

	//! The wait after attempt `failed` (1 = the first) failed, before the next: as httpfs waits, none before the first
	//! retry, then wait_ms times backoff^(failed - 2).
	std::chrono::milliseconds After(uint64_t failed) const;
	//! Sleeps for After(failed).
	void Sleep(uint64_t failed) const;
	//! The wait after attempt `failed` was throttled: the store asked to slow down, so even the first retry waits,
	//! wait_ms x backoff^(failed - 1) (bounded by max_wait_ms), of which a random share between half and all of it
	//! (`jitter` in [0, 1)): streams throttled at once do not all come back at once.
	std::chrono::milliseconds Throttled(uint64_t failed, double jitter) const;
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

} // namespace httpfs2
