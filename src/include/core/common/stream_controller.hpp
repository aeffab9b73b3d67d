//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/common/stream_controller.hpp
//
// How many streams (requests in flight at once) the reads of a database use. A store caps each stream (S3 gives
// about 90 MiB/s to one GET), the instance caps the link, and only the first cap is known: so streams start at
// START_STREAMS and grow while the aggregate rate grows with them, like a congestion window probing for capacity.
// The aggregate rate of a window is the rate its transfers moved bytes at, times the streams that were in flight on
// average. Each window in which most of the streams were busy is judged: from the settled count, twice as many streams
// are tried until a try first fails to pay, then half as many again; a window at them whose rate beats the settled
// one's by GAIN settles there and tries more, one that does not goes back to the settled count and holds it for
// HOLD_WINDOWS before trying again; a store that throttles (503 Slow Down) halves them. The peers fix the number
// instead (the CRT client from a target throughput, obstore a constant concurrency). Callers cap what Streams() gives
// with their settings (max_fanout).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"

#include <cstdint>

namespace httpfs2 {

struct StreamSnapshot {
	uint64_t streams = 0;
	//! The streams that paid so far (a probe above them must beat their rate), and the rate a window at them showed
	//! last, bytes per second.
	uint64_t settled_streams = 0;
	double settled_rate_bps = 0;
	//! Windows judged, and throttles heard.
	uint64_t windows = 0;
	uint64_t throttles = 0;
};

class StreamController {
public:
	static constexpr uint64_t START_STREAMS = 4;
	static constexpr uint64_t MAX_STREAMS = 64;
	//! A window lasts at least this long and until at least one transfer a stream ended in it.
	static constexpr double WINDOW_SECONDS = 0.25;
	//! Windows with fewer than this share of the streams in flight on average say nothing of the link: the reads
	//! did not ask for more.
	static constexpr double SATURATED = 0.6;
	//! The rate must beat the settled one by this much for more streams to be worth their requests.
	static constexpr double GAIN = 0.1;
	static constexpr uint64_t HOLD_WINDOWS = 40;

	//! Starts at `start_streams` (reads: START_STREAMS; uploads, whose parts wait for a stream, more).
	explicit StreamController(uint64_t start_streams = START_STREAMS);

	//! The streams reads may use now.
	uint64_t Streams() const;
	//! A transfer (a sub-read, a read-ahead fetch) starts at `now`, a steady clock in seconds.
	void Started(double now);
	//! A transfer that started at `now - seconds` ended, having moved `bytes` (0 for a failure).
	void Finished(uint64_t bytes, double seconds, double now);
	//! The store answered "slow down" (a 503): half the streams, held.
	void Throttled();
	StreamSnapshot Snapshot() const;
	void Reset();
	//! The steady clock Started and Finished take, in seconds.
	static double Now();

	//! Started now, Finished when it goes (with the bytes given to Done, else 0).
	class Transfer {
	public:
		explicit Transfer(StreamController &controller);
		~Transfer();
		Transfer(const Transfer &) = delete;
		Transfer &operator=(const Transfer &) = delete;
		void Done(uint64_t bytes);

	private:
		StreamController &controller;
		const double start;
		uint64_t bytes = 0;
	};

private:
	//! Adds the time since the last event at the streams in flight; requires `lock`.
	void AdvanceLocked(double now) HTTPFS2_REQUIRES(lock);
	//! Judges the window that ended at `now`; requires `lock`.
	void CloseWindowLocked(double now) HTTPFS2_REQUIRES(lock);
	static uint64_t More(uint64_t streams, bool starting);

	const uint64_t start;
	mutable Mutex lock;
	StreamSnapshot state HTTPFS2_GUARDED_BY(lock);
	uint64_t hold HTTPFS2_GUARDED_BY(lock) = 0;
	//! No probe failed yet: streams double (a slow start, as TCP's), then grow by half.
	bool starting HTTPFS2_GUARDED_BY(lock) = true;
	uint64_t in_flight HTTPFS2_GUARDED_BY(lock) = 0;
	double last_event HTTPFS2_GUARDED_BY(lock) = -1;
	double window_start HTTPFS2_GUARDED_BY(lock) = -1;
	//! Stream-seconds in flight during the window, and the bytes and seconds of the transfers that ended in it.
	double window_stream_seconds HTTPFS2_GUARDED_BY(lock) = 0;
	uint64_t window_bytes HTTPFS2_GUARDED_BY(lock) = 0;
	double window_transfer_seconds HTTPFS2_GUARDED_BY(lock) = 0;
	uint64_t window_transfers HTTPFS2_GUARDED_BY(lock) = 0;
};

} // namespace httpfs2
