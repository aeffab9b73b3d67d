#include "core/common/io_stats.hpp"

#include <algorithm>

namespace httpfs2 {

static constexpr auto RELAXED = std::memory_order_relaxed;

void IoStats::Add(Counter counter, uint64_t amount) {
	counters[static_cast<size_t>(counter)].fetch_add(amount, RELAXED);
}

void IoStats::RecordRead(uint64_t bytes) {
	Add(Counter::READS);
	Add(Counter::BYTES_READ, bytes);
}

void IoStats::RecordPassThrough() {
	Add(Counter::READS_PASSED_THROUGH);
	Add(Counter::READER_REQUESTS);
}

void IoStats::RecordCheckedGet() {
	Add(Counter::CHECKED_GETS);
	Add(Counter::READER_REQUESTS);
}

void IoStats::RecordSplit(uint64_t fanout) {
	Add(Counter::READS_SPLIT);
	fanout_histogram[std::min<uint64_t>(fanout, MAX_FANOUT_LIMIT)].fetch_add(1, RELAXED);
}

void IoStats::RecordWrite(uint64_t bytes) {
	Add(Counter::WRITES);
	Add(Counter::BYTES_WRITTEN, bytes);
}

void IoStats::SubReadStarted() {
	Add(Counter::READER_REQUESTS);
	uint64_t now = in_flight.fetch_add(1, RELAXED) + 1;
	auto &peak = counters[static_cast<size_t>(Counter::IN_FLIGHT_PEAK)];
	uint64_t seen = peak.load(RELAXED);
	while (now > seen && !peak.compare_exchange_weak(seen, now, RELAXED)) {
	}
}

void IoStats::SubReadFinished(uint64_t bytes, uint64_t micros) {
	in_flight.fetch_sub(1, RELAXED);
	Add(Counter::SUB_READS);
	Add(Counter::SUB_READ_BYTES, bytes);
	Add(Counter::SUB_READ_MICROS, micros);
}

IoStatsSnapshot IoStats::Snapshot() const {
	IoStatsSnapshot result;
	for (size_t i = 0; i < counters.size(); i++) {
		result.counters[i] = counters[i].load(RELAXED);
	}
	for (size_t i = 0; i < fanout_histogram.size(); i++) {
		result.fanout_histogram[i] = fanout_histogram[i].load(RELAXED);
	}
	return result;
}

void IoStats::Reset() {
	for (auto &counter : counters) {
		counter.store(0, RELAXED);
	}
	for (auto &bucket : fanout_histogram) {
		bucket.store(0, RELAXED);
	}
}

} // namespace httpfs2
