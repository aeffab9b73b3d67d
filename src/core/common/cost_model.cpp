#include "core/common/cost_model.hpp"

#include <algorithm>
#include <chrono>

namespace httpfs2 {

double CostModel::Blend(double current, double sample, uint64_t samples_before) {
	// The first sample is taken as is; later ones move the estimate by EWMA_ALPHA.
	return samples_before == 0 ? sample : current + EWMA_ALPHA * (sample - current);
}

constexpr uint64_t CostModel::MIN_BANDWIDTH_SAMPLE_BYTES;

void CostModel::ObserveRoundTrip(double seconds) {
	if (seconds <= 0) {
		return;
	}
	MutexLock guard(lock);
	state.first_byte_latency_s = Blend(state.first_byte_latency_s, seconds, state.latency_samples);
	state.latency_samples++;
}

void CostModel::ObserveSubRead(uint64_t bytes, double seconds) {
	if (bytes < MIN_BANDWIDTH_SAMPLE_BYTES || seconds <= 0) {
		return;
	}
	MutexLock guard(lock);
	// Time spent moving data is what is left after the first byte; never credit more than 90% of the
	// duration to latency, so a latency estimate that is too high cannot make bandwidth infinite.
	double transfer_s = std::max(seconds - state.first_byte_latency_s, seconds * 0.1);
	double sample = static_cast<double>(bytes) / transfer_s;
	state.stream_bandwidth_bps = Blend(state.stream_bandwidth_bps, sample, state.bandwidth_samples);
	state.bandwidth_samples++;
}

void CostModel::ObserveSplitRead(uint64_t bytes, uint64_t fanout, double seconds) {
	if (fanout < 2 || seconds <= 0) {
		return;
	}
	MutexLock guard(lock);
	if (state.latency_samples == 0 || state.bandwidth_samples == 0) {
		return;
	}
	double excess = seconds - PredictLocked(bytes, fanout, 0);
	double sample = std::min(std::max(excess / static_cast<double>(fanout - 1), 0.0), MAX_OVERHEAD_S);
	state.learned_overhead_s = Blend(state.learned_overhead_s, sample, state.overhead_samples);
	state.overhead_samples++;
}

bool CostModel::IsWarm() const {
	MutexLock guard(lock);
	return state.latency_samples > 0 && state.bandwidth_samples > 0;
}

double CostModel::OverheadSeconds(bool adaptive, double configured_s) const {
	MutexLock guard(lock);
	if (adaptive && state.overhead_samples > 0) {
		return state.learned_overhead_s;
	}
	return configured_s;
}

double CostModel::PredictLocked(uint64_t bytes, uint64_t fanout, double overhead_s) const {
	double n = static_cast<double>(std::max<uint64_t>(fanout, 1));
	double bandwidth = std::max(state.stream_bandwidth_bps, 1.0);
	return state.first_byte_latency_s + static_cast<double>(bytes) / (n * bandwidth) + (n - 1) * overhead_s;
}

double CostModel::PredictSeconds(uint64_t bytes, uint64_t fanout, double overhead_s) const {
	MutexLock guard(lock);
	return PredictLocked(bytes, fanout, overhead_s);
}

uint64_t CostModel::ChooseFanout(uint64_t bytes, uint64_t max_fanout, double overhead_s) const {
	max_fanout = std::max<uint64_t>(max_fanout, 1);
	MutexLock guard(lock);
	if (state.latency_samples == 0 || state.bandwidth_samples == 0) {
		return max_fanout;
	}
	uint64_t best = 1;
	double best_seconds = PredictLocked(bytes, 1, overhead_s);
	for (uint64_t n = 2; n <= max_fanout; n++) {
		double seconds = PredictLocked(bytes, n, overhead_s);
		if (seconds < best_seconds) {
			best = n;
			best_seconds = seconds;
		}
	}
	return best;
}

bool CostModel::BodySeconds(uint64_t bytes, double &seconds) const {
	MutexLock guard(lock);
	if (state.stream_bandwidth_bps <= 0) {
		return false;
	}
	seconds = static_cast<double>(bytes) / state.stream_bandwidth_bps;
	return true;
}

CostModelSnapshot CostModel::Snapshot() const {
	MutexLock guard(lock);
	return state;
}

void CostModel::Reset() {
	streams.Reset();
	MutexLock guard(lock);
	state = CostModelSnapshot();
}

} // namespace httpfs2
