#include "core/requests/hedge_policy.hpp"

#include <algorithm>
#include <cmath>

namespace httpfs2 {

constexpr size_t HedgePolicy::WINDOW;
constexpr size_t HedgePolicy::MIN_SAMPLES;
constexpr double HedgePolicy::PERCENTILE;
constexpr double HedgePolicy::MARGIN;
constexpr double HedgePolicy::FLOOR_SECONDS;
constexpr double HedgePolicy::COLD_SECONDS;
constexpr double HedgePolicy::SHARE;
constexpr double HedgePolicy::BURST;
constexpr double HedgePolicy::QUIET_SECONDS;

HedgeLimits HedgeLimits::Reads() {
	return HedgeLimits {HedgePolicy::FLOOR_SECONDS, HedgePolicy::COLD_SECONDS, HedgePolicy::MARGIN,
	                    HedgePolicy::SHARE,         HedgePolicy::BURST,        HedgePolicy::QUIET_SECONDS};
}

HedgeLimits HedgeLimits::Uploads() {
	return HedgeLimits {5.0, 10.0, 3.0, HedgePolicy::SHARE, 2.0, HedgePolicy::QUIET_SECONDS};
}

HedgePolicy::HedgePolicy(HedgeLimits limits_p) : limits(limits_p), budget(limits_p.burst) {
	samples.reserve(WINDOW);
}

void HedgePolicy::ObserveFirstByte(double seconds) {
	MutexLock guard(lock);
	seconds = std::max(seconds, 0.0);
	if (samples.size() < WINDOW) {
		samples.push_back(seconds);
	} else {
		samples[next] = seconds;
	}
	next = (next + 1) % WINDOW;
}

void HedgePolicy::RequestSent() {
	MutexLock guard(lock);
	budget = std::min(limits.burst, budget + limits.share);
}

void HedgePolicy::Throttled(double now) {
	MutexLock guard(lock);
	throttled_at = now;
}

double HedgePolicy::DeadlineLocked() const {
	if (samples.size() < MIN_SAMPLES) {
		return limits.cold_seconds;
	}
	auto sorted = samples;
	auto rank = static_cast<size_t>(std::ceil(PERCENTILE * static_cast<double>(sorted.size() - 1)));
	std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), sorted.end());
	return std::max(limits.floor_seconds, limits.margin * sorted[rank]);
}

double HedgePolicy::DeadlineSeconds() const {
	MutexLock guard(lock);
	return DeadlineLocked();
}

bool HedgePolicy::TryHedge(double now) {
	MutexLock guard(lock);
	if (throttled_at >= 0 && now - throttled_at < limits.quiet_seconds) {
		return false;
	}
	if (budget < 1) {
		return false;
	}
	budget -= 1;
	return true;
}

HedgeSnapshot HedgePolicy::Snapshot() const {
	MutexLock guard(lock);
	return HedgeSnapshot {DeadlineLocked(), samples.size(), budget};
}

void HedgePolicy::Reset() {
	MutexLock guard(lock);
	samples.clear();
	next = 0;
	budget = limits.burst;
	throttled_at = -1;
}

} // namespace httpfs2
