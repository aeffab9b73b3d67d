#include "core/split/split_policy.hpp"

#include <algorithm>

namespace httpfs2 {

uint64_t SplitPolicy::Fanout(const IoSettings &settings, const CostModel &model, uint64_t nr_bytes) {
	if (!settings.auto_fanout_enabled) {
		return std::min<uint64_t>(settings.max_fanout, model.streams.Streams());
	}
	double configured_s = static_cast<double>(settings.auto_fanout_overhead_ms) / 1000.0;
	double overhead_s = model.OverheadSeconds(settings.auto_fanout_overhead_adaptive_enabled, configured_s);
	return model.ChooseFanout(nr_bytes, settings.max_fanout, overhead_s);
}

bool SplitPolicy::HostReadsAsWide(const IoSettings &settings, uint64_t nr_bytes, uint64_t fanout) {
	return settings.host_reads.InFlightAround(nr_bytes) >= fanout * nr_bytes;
}

SplitPlan SplitPolicy::Plan(const IoSettings &settings, const CostModel &model, uint64_t nr_bytes, uint64_t location) {
	SplitPlan plan;
	if (nr_bytes < settings.chunk_size_bytes && model.Snapshot().IsNear(settings.min_latency_ms)) {
		return plan;
	}
	uint64_t fanout = Fanout(settings, model, nr_bytes);
	if (fanout < 2 || HostReadsAsWide(settings, nr_bytes, fanout)) {
		return plan;
	}
	plan.follow_link = !settings.auto_fanout_enabled;
	uint64_t planned = fanout;
	if (plan.follow_link) {
		uint64_t half_chunks = nr_bytes / std::max<uint64_t>(settings.chunk_size_bytes / 2, 1);
		planned = std::min<uint64_t>(settings.max_fanout, std::max<uint64_t>(2 * fanout, half_chunks));
	}
	plan.pieces = RangePlanner(settings.chunk_size_bytes, settings.min_bytes).Plan(location, nr_bytes, planned);
	if (plan.pieces.size() < 2) {
		plan.pieces.clear();
		return plan;
	}
	plan.fanout = std::min<uint64_t>(fanout, plan.pieces.size());
	return plan;
}

} // namespace httpfs2
