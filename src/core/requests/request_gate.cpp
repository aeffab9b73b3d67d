#include "core/requests/request_gate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace httpfs2 {

constexpr double RequestGate::WINDOW_SECONDS;
constexpr double RequestGate::DEEPEST_CUT;
constexpr double RequestGate::PASSED_SHARE;
constexpr double RequestGate::GROWTH_PER_PASS;
constexpr double RequestGate::FIRST_GROWTH_PER_PASS;
constexpr double RequestGate::THROTTLED_SHARE_TO_CUT;
constexpr double RequestGate::LIMITED_SHARE_TO_CUT;
constexpr double RequestGate::MIN_THROTTLES_TO_LIMIT;
constexpr double RequestGate::MIN_THROTTLES_TO_CUT;
constexpr double RequestGate::MIN_RATE;
constexpr double RequestGate::OPEN_AFTER_SECONDS;
constexpr size_t RequestGates::KEPT_GATES;
constexpr double RequestGates::IDLE_SECONDS;

double RequestGate::Admit(double now, uint64_t *booking, bool again) {
	if (!again) {
		Record(now, Count::ADMITTED);
	}
	if (booking) {
		*booking = cuts.load(std::memory_order_relaxed);
	}
	if (!limited.load(std::memory_order_relaxed)) {
		return 0;
	}
	MutexLock guard(lock);
	if (!limited.load(std::memory_order_relaxed)) {
		return 0;
	}
	if (now - last_throttle >= OPEN_AFTER_SECONDS) {
		limited.store(false, std::memory_order_relaxed);
		shown = 0;
		return 0;
	}
	if (booking) {
		*booking = cuts.load(std::memory_order_relaxed);
	}
	auto slot = std::max(now, next_slot);
	next_slot = slot + 1 / rate;
	return slot - now;
}

bool RequestGate::Booked(uint64_t booking) const {
	return cuts.load(std::memory_order_relaxed) == booking;
}

void RequestGate::Passed(double now) {
	Record(now, Count::PASSED);
	if (!limited.load(std::memory_order_relaxed)) {
		return;
	}
	MutexLock guard(lock);
	rate += shown == 0 ? FIRST_GROWTH_PER_PASS : GROWTH_PER_PASS;
}

bool RequestGate::Throttled(double now, double sent) {
	Record(now, Count::THROTTLED);
	MutexLock guard(lock);
	last_throttle = now;
	bool was_limited = limited.load(std::memory_order_relaxed);
	if (sent < last_cut || (was_limited && now - last_cut < WINDOW_SECONDS)) {
		return false; // an answer to the pace before the last cut
	}
	auto throttled = RateOf(now, Count::THROTTLED);
	auto passed = RateOf(now, Count::PASSED);
	double base;
	if (was_limited) {
		if (throttled < MIN_THROTTLES_TO_CUT || throttled < LIMITED_SHARE_TO_CUT * (throttled + passed)) {
			return false;
		}
		base = rate;
	} else {
		base = RateOf(now, Count::ADMITTED);
		if (throttled < MIN_THROTTLES_TO_LIMIT || throttled < THROTTLED_SHARE_TO_CUT * base) {
			return false;
		}
	}
	// The store takes about the pace its passed answers show (in the last second, or at a cut of the closed gate
	// before, while it refused what came past it): the gate holds to not much less, so that it does not stall far
	// below a prefix's limit; and to no less than DEEPEST_CUT of the rate before (the answers of large GETs pass long
	// after they were sent, a refusal at once).
	if (was_limited) {
		shown = std::max(shown, passed);
	}
	rate = std::max({MIN_RATE, DEEPEST_CUT * base, PASSED_SHARE * std::min(std::max(shown, passed), base)});
	next_slot = now;
	cuts.fetch_add(1, std::memory_order_relaxed);
	last_cut = now;
	limited.store(true, std::memory_order_relaxed);
	return true;
}

bool RequestGate::Limited() const {
	return limited.load(std::memory_order_relaxed);
}

double RequestGate::Rate() const {
	MutexLock guard(lock);
	return limited.load(std::memory_order_relaxed) ? rate : 0;
}

double RequestGate::LastUsed() const {
	auto second =
	    std::max(seconds[0].second.load(std::memory_order_relaxed), seconds[1].second.load(std::memory_order_relaxed));
	return second < 0 ? -std::numeric_limits<double>::infinity() : static_cast<double>(second + 1) * WINDOW_SECONDS;
}

void RequestGate::Record(double now, Count what) {
	auto second = static_cast<int64_t>(std::floor(now / WINDOW_SECONDS));
	auto &slot = seconds[second & 1];
	auto seen = slot.second.load(std::memory_order_relaxed);
	if (seen != second && slot.second.compare_exchange_strong(seen, second, std::memory_order_relaxed)) {
		for (auto &count : slot.counts) {
			count.store(0, std::memory_order_relaxed);
		}
	}
	slot.counts[static_cast<size_t>(what)].fetch_add(1, std::memory_order_relaxed);
}

double RequestGate::RateOf(double now, Count what) const {
	auto second = static_cast<int64_t>(std::floor(now / WINDOW_SECONDS));
	auto count = [&](int64_t which) -> double {
		auto &slot = seconds[which & 1];
		if (slot.second.load(std::memory_order_relaxed) != which) {
			return 0;
		}
		return static_cast<double>(slot.counts[static_cast<size_t>(what)].load(std::memory_order_relaxed));
	};
	// The current second's count, and the part of the last one the window still covers.
	auto into = now / WINDOW_SECONDS - static_cast<double>(second);
	return (count(second) + count(second - 1) * (1 - into)) / WINDOW_SECONDS;
}

std::shared_ptr<RequestGate> RequestGates::For(const std::string &path, double now) {
	auto prefix = PrefixOf(path);
	MutexLock guard(lock);
	auto &kept = gates[prefix];
	if (!kept.gate) {
		kept.gate = std::make_shared<RequestGate>();
	}
	kept.lent = now;
	auto gate = kept.gate;
	if (gates.size() > sweep_above) {
		DropIdleLocked(now);
	}
	return gate;
}

size_t RequestGates::Size() {
	MutexLock guard(lock);
	return gates.size();
}

void RequestGates::DropIdleLocked(double now) {
	for (auto position = gates.begin(); position != gates.end();) {
		auto &kept = position->second;
		// Held by the map alone (use_count is exact here: only a lookup, under this lock, hands out a first copy).
		if (kept.gate.use_count() == 1 && now - std::max(kept.lent, kept.gate->LastUsed()) >= IDLE_SECONDS) {
			position = gates.erase(position);
		} else {
			++position;
		}
	}
	sweep_above = std::max(KEPT_GATES, 2 * gates.size());
}

std::string RequestGates::PrefixOf(const std::string &path) {
	auto end = path.find_first_of("?#");
	auto folder = path.rfind('/', end == std::string::npos ? std::string::npos : end);
	return path.substr(0, folder == std::string::npos ? end : folder);
}

} // namespace httpfs2
