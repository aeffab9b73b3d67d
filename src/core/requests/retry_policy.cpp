#include "core/requests/retry_policy.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

namespace httpfs2 {

std::chrono::milliseconds RetryBackoff::After(uint64_t failed) const {
	if (failed < 2) {
		return std::chrono::milliseconds(0);
	}
	auto wait = static_cast<double>(wait_ms) * std::pow(backoff, static_cast<double>(failed - 2));
	if (max_wait_ms != 0) {
		wait = std::min(wait, static_cast<double>(max_wait_ms));
	}
	return std::chrono::milliseconds(static_cast<uint64_t>(wait));
}

std::chrono::milliseconds RetryBackoff::Throttled(uint64_t failed, double jitter) const {
	auto full = static_cast<double>(After(failed + 1).count());
	return std::chrono::milliseconds(static_cast<uint64_t>(full * (0.5 + 0.5 * jitter)));
}

bool RefusesCredentials(int status, const std::string &code) {
	if (status != 400 && status != 403) {
		return false;
	}
	return code == "ExpiredToken" || code == "TokenRefreshRequired" || code == "InvalidToken" ||
	       code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch";
}

double RetryJitter() {
	thread_local std::minstd_rand generator(std::random_device {}());
	return std::uniform_real_distribution<double>(0, 1)(generator);
}

void RetryBackoff::Sleep(uint64_t failed) const {
	auto wait = After(failed);
	if (wait.count() > 0) {
		std::this_thread::sleep_for(wait);
	}
}

} // namespace httpfs2
