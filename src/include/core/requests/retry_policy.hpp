//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/retry_policy.hpp
//
// How long the requests httpfs2 sends itself wait between attempts: httpfs's policy (http_retry_wait_ms,
// http_retry_backoff), written once for the range GETs and the uploads' requests.
//===----------------------------------------------------------------------===//

#pragma once

#include <chrono>
#include <cstdint>

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
};

} // namespace httpfs2
