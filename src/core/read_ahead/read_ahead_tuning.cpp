#include "core/read_ahead/read_ahead_tuning.hpp"

#include <algorithm>

namespace httpfs2 {

// Out-of-line definitions of the constants (C++14 needs them when they are bound to references, as std::max does).
constexpr uint64_t ReadAheadTuner::MIN_AHEAD;
constexpr uint64_t ReadAheadTuner::COLD_BDP;
constexpr double ReadAheadTuner::ASSUMED_STREAM_BANDWIDTH_BPS;
constexpr uint64_t ReadAheadTuner::MIN_MERGE_GAP;
constexpr uint64_t ReadAheadTuner::MAX_MERGE_GAP;

ReadAheadTuning ReadAheadTuner::Tune(const IoSettings &settings, const CostModelSnapshot &model, uint64_t io_threads,
                                     uint64_t budget_limit, uint64_t streams, HostReads host) {
	uint64_t bdp = COLD_BDP;
	if (model.latency_samples > 0) {
		double bandwidth = model.bandwidth_samples > 0 ? model.stream_bandwidth_bps : ASSUMED_STREAM_BANDWIDTH_BPS;
		bdp = static_cast<uint64_t>(model.first_byte_latency_s * bandwidth);
	}
	ReadAheadTuning tuning;
	tuning.fetch_ahead = !model.IsNear(settings.min_latency_ms);
	uint64_t ahead = std::max(io_threads * std::max(bdp, MiB), MIN_AHEAD);
	uint64_t ceiling = std::max<uint64_t>(budget_limit / 2, 1);
	tuning.limits.max_ahead_bytes = std::min(ahead, ceiling);
	tuning.limits.ceiling_bytes = ceiling;
	tuning.limits.host_reads = settings.host_reads;
	tuning.limits.merge_gap_bytes =
	    host == HostReads::AHEAD ? MIN_MERGE_GAP : std::min(std::max(bdp / 16, MIN_MERGE_GAP), MAX_MERGE_GAP);
	tuning.chunk_size_bytes = settings.chunk_size_bytes;
	// A window of `max_fanout` or more ranges already streams them in parallel: a range is cut into pieces only when
	// it is larger than that share of the window. Cutting smaller ranges buys nothing but requests, each with its own
	// first-byte wait and server-side cost.
	tuning.max_fanout = std::max<uint64_t>(std::min(settings.max_fanout, streams), 1);
	tuning.min_bytes = std::max(settings.min_bytes, tuning.limits.max_ahead_bytes / tuning.max_fanout);
	tuning.split_min_bytes = settings.min_bytes;
	tuning.split_max_fanout = std::max<uint64_t>(settings.max_fanout, 1);
	return tuning;
}

} // namespace httpfs2
