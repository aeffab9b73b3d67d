//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_stats.hpp
//
// Counters of one wrapped filesystem. Lock-free on the read path.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/read_settings.hpp"

#include <array>
#include <atomic>
#include <cstdint>

namespace httpfs2 {

struct ReadStatsSnapshot {
	uint64_t files_opened = 0;
	//! Read calls seen by the wrapper, split or not, and the bytes they asked for.
	uint64_t reads = 0;
	uint64_t bytes_read = 0;
	uint64_t reads_passed_through = 0;
	uint64_t reads_split = 0;
	uint64_t sub_reads = 0;
	uint64_t sub_read_bytes = 0;
	//! Sum of the durations of all sub-reads, microseconds.
	uint64_t sub_read_micros = 0;
	uint64_t in_flight_peak = 0;
	//! Reads and sub-reads that failed.
	uint64_t errors = 0;
	uint64_t writes = 0;
	uint64_t bytes_written = 0;
	//! fanout_histogram[n] counts split reads that ran with fan-out n (index 0 unused).
	std::array<uint64_t, MAX_FANOUT_LIMIT + 1> fanout_histogram {};
};

class ReadStats {
public:
	void RecordOpen();
	void RecordPassThrough(uint64_t bytes);
	void RecordSplit(uint64_t bytes, uint64_t fanout);
	void RecordWrite(uint64_t bytes);
	void RecordError();
	//! Marks a sub-read as started; returns nothing, pair with SubReadFinished.
	void SubReadStarted();
	void SubReadFinished(uint64_t bytes, uint64_t micros);

	ReadStatsSnapshot Snapshot() const;
	void Reset();

private:
	std::atomic<uint64_t> files_opened {0};
	std::atomic<uint64_t> reads {0};
	std::atomic<uint64_t> bytes_read {0};
	std::atomic<uint64_t> reads_passed_through {0};
	std::atomic<uint64_t> reads_split {0};
	std::atomic<uint64_t> sub_reads {0};
	std::atomic<uint64_t> sub_read_bytes {0};
	std::atomic<uint64_t> sub_read_micros {0};
	std::atomic<uint64_t> in_flight {0};
	std::atomic<uint64_t> in_flight_peak {0};
	std::atomic<uint64_t> errors {0};
	std::atomic<uint64_t> writes {0};
	std::atomic<uint64_t> bytes_written {0};
	std::array<std::atomic<uint64_t>, MAX_FANOUT_LIMIT + 1> fanout_histogram {};
};

} // namespace httpfs2
