//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/hedge_policy.hpp
//
// When a range GET whose answer has not begun is sent again on another connection (a hedge): at object storage's
// tail a few GETs take many times the median, and one stalled sub-read holds its whole read. The deadline is learnt
// from the first-byte latencies of the GETs just answered (MARGIN times a high percentile of a recent window, the
// slowest while the window holds few; never below FLOOR_SECONDS; COLD_SECONDS until the window holds MIN_SAMPLES). A
// stall costs its read the deadline plus the hedge's own answer, so the deadline is what a straggler adds to a query
// of a second or less: a read's is as short as its store's answers allow. Hedges are capped: each GET sent adds SHARE
// of a hedge to a budget of at most BURST, a hedge takes a whole one; and none is sent for QUIET_SECONDS after the
// store asked to slow down (a hedge is one more request to a store that is refusing them). Those are a read's limits;
// an upload part's (HedgeLimits::Uploads) learn from whole parts' times and are looser: a hedge sends a part's bytes
// again on a link that uploads are bound by.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace httpfs2 {

struct HedgeSnapshot {
	//! The deadline now, seconds.
	double deadline_seconds = 0;
	//! First-byte latencies in the window.
	uint64_t samples = 0;
	//! Hedges the budget holds.
	double budget = 0;
};

//! A policy's numbers (HedgePolicy's constants say what each is).
struct HedgeLimits {
	double floor_seconds;
	double cold_seconds;
	double margin;
	double share;
	double burst;
	double quiet_seconds;

	//! A range GET's: the latency learnt is its answer's first byte.
	static HedgeLimits Reads();
	//! An upload part's: the latency learnt is the whole part's (a PUT's answer comes once its body is stored). Never
	//! sooner than 5 s (10 s until parts were seen), 3x the percentile, at most 2 at once: a part trickling its answer
	//! for tens of seconds is worth a second one, a part slower than the rest is not.
	static HedgeLimits Uploads();
};

class HedgePolicy {
public:
	//! The first-byte latencies the deadline is learnt from: the latest WINDOW.
	static constexpr size_t WINDOW = 128;
	//! Learnt from the first few: a query of a second or less makes a few dozen GETs. The percentile's rank is rounded
	//! up, so that a window of a few takes its slowest.
	static constexpr size_t MIN_SAMPLES = 4;
	static constexpr double PERCENTILE = 0.95;
	//! Over the percentile: answers of one store vary by less (on the rig, region through the misbehaving proxy, with
	//! curl, whose answers begin with their whole body: p95 0.09-0.12 s, the slowest 0.15 s; 3x and a floor of 0.5 s
	//! left the lineitem projection with one stall 1.7-1.8x its clean time).
	static constexpr double MARGIN = 2.0;
	//! A GET is never hedged sooner: a request costs more than waiting for a near store (ClickHouse waits about 0.2 s
	//! for a GET's first byte; on the rig the glob's small GETs learn 0.16-0.23 s, and a floor of 0.2 s left three
	//! stalls 1.28-1.41x its clean time).
	static constexpr double FLOOR_SECONDS = 0.15;
	//! The deadline before MIN_SAMPLES latencies are known.
	static constexpr double COLD_SECONDS = 1.0;
	//! The share of GETs that may be hedged in the long run, and the hedges the budget holds at most (and at start).
	static constexpr double SHARE = 0.05;
	static constexpr double BURST = 4.0;
	static constexpr double QUIET_SECONDS = 5.0;

	explicit HedgePolicy(HedgeLimits limits = HedgeLimits::Reads());

	//! A GET's answer began `seconds` after it was sent.
	void ObserveFirstByte(double seconds);
	//! A GET was sent (not a hedge): the budget grows by SHARE.
	void RequestSent();
	//! The store answered "slow down" at `now` (a steady clock, seconds).
	void Throttled(double now);
	//! How long a GET waits for its answer to begin before it is hedged.
	double DeadlineSeconds() const;
	//! Whether a GET past its deadline at `now` is hedged: takes one hedge from the budget when it is.
	bool TryHedge(double now);

	HedgeSnapshot Snapshot() const;
	void Reset();

private:
	double DeadlineLocked() const HTTPFS2_REQUIRES(lock);

	const HedgeLimits limits;
	mutable Mutex lock;
	//! A ring of the latest latencies; `next` is where the next one goes.
	std::vector<double> samples HTTPFS2_GUARDED_BY(lock);
	size_t next HTTPFS2_GUARDED_BY(lock) = 0;
	double budget HTTPFS2_GUARDED_BY(lock);
	//! When the store last asked to slow down; none yet when negative.
	double throttled_at HTTPFS2_GUARDED_BY(lock) = -1;
};

} // namespace httpfs2
