#include "core/read_stats.hpp"

#include <algorithm>

namespace httpfs2 {

static constexpr auto RELAXED = std::memory_order_relaxed;

void ReadStats::RecordOpen() {
	files_opened.fetch_add(1, RELAXED);
}

void ReadStats::RecordPassThrough(uint64_t bytes) {
	reads.fetch_add(1, RELAXED);
	bytes_read.fetch_add(bytes, RELAXED);
	reads_passed_through.fetch_add(1, RELAXED);
}

void ReadStats::RecordSplit(uint64_t bytes, uint64_t fanout) {
	reads.fetch_add(1, RELAXED);
	bytes_read.fetch_add(bytes, RELAXED);
	reads_split.fetch_add(1, RELAXED);
	fanout_histogram[std::min<uint64_t>(fanout, MAX_FANOUT_LIMIT)].fetch_add(1, RELAXED);
}

void ReadStats::RecordWrite(uint64_t bytes) {
	writes.fetch_add(1, RELAXED);
	bytes_written.fetch_add(bytes, RELAXED);
}

void ReadStats::RecordError() {
	errors.fetch_add(1, RELAXED);
}

void ReadStats::SubReadStarted() {
	uint64_t now = in_flight.fetch_add(1, RELAXED) + 1;
	uint64_t peak = in_flight_peak.load(RELAXED);
	while (now > peak && !in_flight_peak.compare_exchange_weak(peak, now, RELAXED)) {
	}
}

void ReadStats::SubReadFinished(uint64_t bytes, uint64_t micros) {
	in_flight.fetch_sub(1, RELAXED);
	sub_reads.fetch_add(1, RELAXED);
	sub_read_bytes.fetch_add(bytes, RELAXED);
	sub_read_micros.fetch_add(micros, RELAXED);
}

ReadStatsSnapshot ReadStats::Snapshot() const {
	ReadStatsSnapshot result;
	result.files_opened = files_opened.load(RELAXED);
	result.reads = reads.load(RELAXED);
	result.bytes_read = bytes_read.load(RELAXED);
	result.reads_passed_through = reads_passed_through.load(RELAXED);
	result.reads_split = reads_split.load(RELAXED);
	result.sub_reads = sub_reads.load(RELAXED);
	result.sub_read_bytes = sub_read_bytes.load(RELAXED);
	result.sub_read_micros = sub_read_micros.load(RELAXED);
	result.in_flight_peak = in_flight_peak.load(RELAXED);
	result.errors = errors.load(RELAXED);
	result.writes = writes.load(RELAXED);
	result.bytes_written = bytes_written.load(RELAXED);
	for (size_t i = 0; i < fanout_histogram.size(); i++) {
		result.fanout_histogram[i] = fanout_histogram[i].load(RELAXED);
	}
	return result;
}

void ReadStats::Reset() {
	for (auto *counter : {&files_opened, &reads, &bytes_read, &reads_passed_through, &reads_split, &sub_reads,
	                      &sub_read_bytes, &sub_read_micros, &in_flight_peak, &errors, &writes, &bytes_written}) {
		counter->store(0, RELAXED);
	}
	for (auto &bucket : fanout_histogram) {
		bucket.store(0, RELAXED);
	}
}

} // namespace httpfs2
