#include "core/common/stream_controller.hpp"

#include <algorithm>
#include <chrono>

namespace httpfs2 {

constexpr uint64_t StreamController::START_STREAMS;
constexpr uint64_t StreamController::MAX_STREAMS;

StreamController::StreamController(uint64_t start_streams)
    : start(std::max<uint64_t>(std::min(start_streams, MAX_STREAMS), 1)), state {start, start, 0, 0, 0} {
}

double StreamController::Now() {
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint64_t StreamController::More(uint64_t streams, bool starting) {
	// Doubling until the link first said no (a slow start), then half as many again.
	uint64_t step = starting ? streams : std::max<uint64_t>(1, streams / 2);
	return std::min(MAX_STREAMS, streams + step);
}

uint64_t StreamController::Streams() const {
	MutexLock guard(lock);
	return state.streams;
}

void StreamController::AdvanceLocked(double now) {
	if (last_event >= 0 && now > last_event) {
		window_stream_seconds += static_cast<double>(in_flight) * (now - last_event);
	}
	last_event = std::max(last_event, now);
	if (window_start < 0) {
		window_start = now;
	}
}

void StreamController::Started(double now) {
	MutexLock guard(lock);
	AdvanceLocked(now);
	in_flight++;
}

void StreamController::Finished(uint64_t bytes, double seconds, double now) {
	MutexLock guard(lock);
	AdvanceLocked(now);
	in_flight = in_flight > 0 ? in_flight - 1 : 0;
	window_bytes += bytes;
	window_transfer_seconds += std::max(seconds, 0.0);
	window_transfers++;
	if (now - window_start >= WINDOW_SECONDS && window_transfers >= state.streams) {
		CloseWindowLocked(now);
	}
}

void StreamController::CloseWindowLocked(double now) {
	double elapsed = now - window_start;
	double average_streams = elapsed > 0 ? window_stream_seconds / elapsed : 0;
	// Each stream's rate while it ran (first-byte waits included), times the streams that ran.
	double stream_rate = window_transfer_seconds > 0 ? static_cast<double>(window_bytes) / window_transfer_seconds : 0;
	double rate = stream_rate * average_streams;
	window_start = now;
	window_stream_seconds = 0;
	window_bytes = 0;
	window_transfer_seconds = 0;
	window_transfers = 0;
	state.windows++;
	if (average_streams < SATURATED * static_cast<double>(state.streams)) {
		return; // the reads did not use the streams they had: nothing learnt of the link
	}
	if (state.streams > state.settled_streams) {
		if (rate > state.settled_rate_bps * (1 + GAIN)) {
			// The streams added paid: settle here and try more.
			state.settled_streams = state.streams;
			state.settled_rate_bps = rate;
			state.streams = More(state.streams, starting);
		} else {
			// They did not: back to the settled count, held before the link is probed again.
			state.streams = state.settled_streams;
			starting = false;
			hold = HOLD_WINDOWS;
		}
		return;
	}
	state.settled_rate_bps = rate;
	if (hold > 0) {
		hold--;
		return;
	}
	state.streams = More(state.streams, starting);
}

void StreamController::Throttled() {
	MutexLock guard(lock);
	state.throttles++;
	state.streams = std::max(START_STREAMS, state.streams / 2);
	state.settled_streams = state.streams;
	state.settled_rate_bps = 0;
	starting = false;
	hold = HOLD_WINDOWS;
}

StreamSnapshot StreamController::Snapshot() const {
	MutexLock guard(lock);
	return state;
}

void StreamController::Reset() {
	MutexLock guard(lock);
	state = StreamSnapshot {start, start, 0, 0, 0};
	starting = true;
	hold = 0;
	// Transfers in flight stay counted: they will finish.
	window_start = -1;
	window_stream_seconds = 0;
	window_bytes = 0;
	window_transfer_seconds = 0;
	window_transfers = 0;
}

StreamController::Transfer::Transfer(StreamController &controller_p) : controller(controller_p), start(Now()) {
	controller.Started(start);
}

StreamController::Transfer::~Transfer() {
	auto now = Now();
	controller.Finished(bytes, now - start, now);
}

void StreamController::Transfer::Done(uint64_t bytes_p) {
	bytes = bytes_p;
}

} // namespace httpfs2
