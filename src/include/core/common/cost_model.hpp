//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/common/cost_model.hpp
//
// The S3 cost model behind auto fan-out. A read of B bytes split n ways is expected to take
//   first_byte_latency + B / (n * stream_bandwidth) + (n - 1) * overhead
// Latency and per-stream bandwidth are learned from this process's own requests; the overhead is the
// configured penalty, or, when adaptive, an EWMA of the excess that split reads actually showed.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/stream_controller.hpp"
#include "core/common/thread_annotations.hpp"

#include <cstdint>
#include <mutex>

namespace httpfs2 {

struct CostModelSnapshot {
	//! Seconds from request to first byte (EWMA of metadata round trips); 0 until observed.
	double first_byte_latency_s = 0;
	//! Bytes per second one sub-read stream achieves once data flows (EWMA); 0 until observed.
	double stream_bandwidth_bps = 0;
	//! Learned penalty per extra sub-request, seconds; negative until the first split read was observed.
	double learned_overhead_s = -1;
	uint64_t latency_samples = 0;
	uint64_t bandwidth_samples = 0;
	uint64_t overhead_samples = 0;

	//! The store answers within `min_latency_ms` (a LAN store): a request there costs the client more CPU than it
	//! waits, so neither reading ahead nor splitting a read under one chunk pays. False until a latency is measured.
	bool IsNear(uint64_t min_latency_ms) const {
		return latency_samples > 0 && first_byte_latency_s * 1000.0 < static_cast<double>(min_latency_ms);
	}
};

class CostModel {
public:
	//! Weight of a new sample in every EWMA.
	static constexpr double EWMA_ALPHA = 0.2;
	//! Learned overhead is kept within [0, MAX_OVERHEAD_S].
	static constexpr double MAX_OVERHEAD_S = 10.0;
	//! Transfers smaller than this are mostly first byte and scheduling, not bandwidth: a few ms of jitter on a tens of
	//! ms latency halves the rate a small sample shows.
	static constexpr uint64_t MIN_BANDWIDTH_SAMPLE_BYTES = 1024 * 1024;

	//! A request that returned no body (e.g. the HEAD of a file open): its duration is a first-byte latency.
	void ObserveRoundTrip(double seconds);
	//! One sub-read of `bytes` that took `seconds`, latency included; ignored under MIN_BANDWIDTH_SAMPLE_BYTES.
	void ObserveSubRead(uint64_t bytes, double seconds);
	//! A whole split read of `bytes` over `fanout` streams that took `seconds`; feeds the adaptive overhead.
	void ObserveSplitRead(uint64_t bytes, uint64_t fanout, double seconds);

	//! True once latency and bandwidth have both been observed, so predictions are meaningful.
	bool IsWarm() const;
	//! The overhead to use: learned when adaptive and learned, otherwise the configured one.
	double OverheadSeconds(bool adaptive, double configured_s) const;
	//! Expected seconds for `bytes` split `fanout` ways with the given overhead per extra sub-request.
	double PredictSeconds(uint64_t bytes, uint64_t fanout, double overhead_s) const;
	//! The n in [1, max_fanout] with the least predicted time (the smallest on ties); max_fanout when cold.
	uint64_t ChooseFanout(uint64_t bytes, uint64_t max_fanout, double overhead_s) const;

	//! Puts in `seconds` what a body of `bytes` takes to come over one stream once it flows; false until a bandwidth
	//! was observed.
	bool BodySeconds(uint64_t bytes, double &seconds) const;

	CostModelSnapshot Snapshot() const;
	void Reset();

	//! How many streams reads use, from the transfers of sub-reads and read-ahead (StreamController::Transfer).
	StreamController streams;

private:
	static double Blend(double current, double sample, uint64_t samples_before);
	double PredictLocked(uint64_t bytes, uint64_t fanout, double overhead_s) const HTTPFS2_REQUIRES(lock);

	mutable Mutex lock;
	CostModelSnapshot state HTTPFS2_GUARDED_BY(lock);
};

} // namespace httpfs2
