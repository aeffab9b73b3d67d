#include "core/requests/retry_policy.hpp"

#include "core/common/io_stats.hpp"
#include "core/common/stream_controller.hpp"
#include "core/requests/hedge_policy.hpp"
#include "core/requests/request_gate.hpp"
#include "core/requests/request_race.hpp"

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
	auto base = *this;
	base.wait_ms = std::max(wait_ms, throttled_wait_ms);
	if (base.max_wait_ms == 0 || base.max_wait_ms > MAX_THROTTLED_WAIT_MS) {
		base.max_wait_ms = MAX_THROTTLED_WAIT_MS;
	}
	auto full = static_cast<double>(base.After(failed + 1).count());
	return std::chrono::milliseconds(static_cast<uint64_t>(full * (0.5 + 0.5 * jitter)));
}

bool RefusesCredentials(int status, const std::string &code) {
	if (status != 400 && status != 403) {
		return false;
	}
	return code == "ExpiredToken" || code == "TokenRefreshRequired" || code == "InvalidToken" ||
	       code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch";
}

AttemptOutcome OutcomeOfStatus(int status, const std::string &error_code, bool retried_by_httpfs) {
	if (RefusesCredentials(status, error_code)) {
		return AttemptOutcome::CREDENTIALS_REFUSED;
	}
	if (IsThrottling(status)) {
		return AttemptOutcome::THROTTLED;
	}
	return retried_by_httpfs ? AttemptOutcome::FAILED : AttemptOutcome::REFUSED;
}

double RetryJitter() {
	thread_local std::minstd_rand generator(std::random_device {}());
	return std::uniform_real_distribution<double>(0, 1)(generator);
}

constexpr std::chrono::milliseconds RequestAttempts::CANCEL_SLICE;
constexpr int RequestAttempts::OPEN_GATE_WAIT_DIVISOR;

RequestAttempts::RequestAttempts(RetryBackoff backoff_p, uint64_t max_attempts_p, ThrottleListeners listeners_p)
    : sleep([](std::chrono::milliseconds wait) { std::this_thread::sleep_for(wait); }), backoff(backoff_p),
      max_attempts(std::max<uint64_t>(max_attempts_p, 1)), listeners(listeners_p) {
}

bool RequestAttempts::Again(AttemptOutcome outcome, const std::function<bool()> &refresh) {
	if (outcome == AttemptOutcome::DONE || outcome == AttemptOutcome::REFUSED) {
		return false;
	}
	if (outcome == AttemptOutcome::THROTTLED) {
		Throttled();
		throttled++;
	}
	if (RequestRace::SenderLost()) {
		return false; // another request of its race answered: nobody waits for this one
	}
	if (outcome == AttemptOutcome::CREDENTIALS_REFUSED) {
		if (refreshed || !refresh || !refresh()) {
			return false;
		}
		// Signed again with what the secret holds now and sent at once: not a retry of the same request.
		refreshed = true;
		return true;
	}
	in_doubt = true; // FAILED or THROTTLED: it may have reached the store
	if (doubt_reported_to) {
		*doubt_reported_to = true;
	}
	auto allowed = max_attempts > 1 ? max_attempts + std::min(throttled, THROTTLED_EXTRA_ATTEMPTS) : max_attempts;
	if (number >= allowed) {
		return false;
	}
	auto wait = outcome == AttemptOutcome::THROTTLED ? ThrottledWait() : backoff.After(number);
	if (!Wait(wait)) {
		return false;
	}
	number++;
	return true;
}

bool RequestAttempts::Admit() {
	sent_at = StreamController::Now();
	if (!listeners.gate || !paced) {
		return true;
	}
	bool again = false;
	for (;;) {
		uint64_t booking = 0;
		auto wait = listeners.gate->Admit(sent_at, &booking, again);
		if (wait <= 0) {
			return true;
		}
		auto micros = static_cast<uint64_t>(std::ceil(wait * 1e6));
		if (listeners.stats) {
			if (!again) {
				listeners.stats->Add(Counter::GATE_WAITS);
			}
			listeners.stats->Add(Counter::GATE_WAIT_MICROS, micros);
		}
		if (!Wait(std::chrono::milliseconds((micros + 999) / 1000))) {
			return false;
		}
		sent_at = StreamController::Now();
		if (listeners.gate->Booked(booking)) {
			return true;
		}
		again = true; // the gate cut its rate meanwhile: the turn was booked at the pace before
	}
}

std::chrono::milliseconds RequestAttempts::ThrottledWait() const {
	auto wait = backoff.Throttled(number, RetryJitter());
	bool store_paces_prefix = !listeners.gate || listeners.gate->Limited() || backoff.throttled_wait_ms > 0;
	if (!store_paces_prefix) {
		wait /= OPEN_GATE_WAIT_DIVISOR;
	}
	if (listeners.stats) {
		listeners.stats->Add(Counter::THROTTLED_WAIT_MICROS, static_cast<uint64_t>(wait.count()) * 1000);
	}
	return wait;
}

void RequestAttempts::Passed() const {
	if (listeners.gate) {
		listeners.gate->Passed(StreamController::Now());
	}
}

bool RequestAttempts::Wait(std::chrono::milliseconds wait) {
	if (!cancel_check) {
		if (wait.count() > 0) {
			sleep(wait);
		}
		return true;
	}
	for (;;) {
		if (cancel_check()) {
			cancelled = true;
			return false;
		}
		if (wait.count() <= 0) {
			return true;
		}
		auto slice = std::min(wait, CANCEL_SLICE);
		sleep(slice);
		wait -= slice;
	}
}

void RequestAttempts::Throttled() const {
	if (listeners.stats) {
		listeners.stats->Add(Counter::THROTTLED_ANSWERS);
	}
	if (listeners.hedges) {
		listeners.hedges->Throttled(StreamController::Now());
	}
	// Fewer streams where the prefix is past its pace (its gate cut its rate), not for each throttled answer: a store
	// refusing a share of requests whatever their pace refuses no fewer of fewer streams.
	bool past_pace = listeners.gate ? listeners.gate->Throttled(StreamController::Now(), sent_at) : true;
	if (listeners.streams && past_pace) {
		listeners.streams->Throttled();
	}
}

} // namespace httpfs2
