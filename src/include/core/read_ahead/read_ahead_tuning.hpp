//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_ahead/read_ahead_tuning.hpp
//
// Read-ahead's policy, apart from its mechanism (ObjectReadAhead): how far ahead, in what pieces and whether at all,
// derived per read from the settings and what the cost model measured.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/cost_model.hpp"
#include "core/common/stream_controller.hpp"
#include "core/common/io_settings.hpp"
#include "core/read_ahead/access_predictor.hpp"

#include <cstdint>

namespace httpfs2 {

//! How far and in what pieces read-ahead fetches; derived per read from the settings and the cost model.
struct ReadAheadTuning {
	//! False where read-ahead cannot pay for itself (min_latency_ms): nothing is predicted or fetched ahead;
	//! footers already remembered are still served.
	bool fetch_ahead = true;
	PredictionLimits limits;
	//! Fetches of at least min_bytes are cut as split reads are (RangePlanner), so large ranges stream in parallel;
	//! min_bytes is at least the settings' min_bytes and a `max_fanout`-th of the window ahead.
	uint64_t chunk_size_bytes;
	uint64_t min_bytes;
	uint64_t max_fanout;
	//! The settings' min_bytes and max_fanout alone: a whole file fetched ahead (a CONTENTS prediction) is cut into
	//! pieces as small as a split read's, not as a window ahead of a scan is, nor by the streams the controller allows
	//! at a query's first reads (its start: a few long transfers, whose windows keep it there).
	uint64_t split_min_bytes;
	uint64_t split_max_fanout;
};

//! Tuning from what the cost model measured: enough bytes ahead for every IO thread to stream through a first-byte
//! wait (io_threads x latency x bandwidth, the bandwidth-delay product), within [MIN_AHEAD, half the budget] (half
//! the budget is also the ceiling for readers of large sequential reads), and gaps merged when they cost less than a
//! sixteenth of a round trip's worth of transfer (Arrow's rule, kept small so that projections do not pull in the
//! columns between theirs).
//! Under the settings' min_latency_ms of first-byte latency (a LAN store) nothing is fetched ahead: a
//! request there costs the client more CPU than it waits, and reading it ahead adds a copy, a hand-off to an IO
//! thread and the fetches a scan never uses, on cores the query needs. The gate is the latency alone: bandwidth
//! measured on a busy client is noisy (docs/benchmarks.md, "Figures"), and a slow stream argues for
//! the parallel streams of read-ahead, not against them.
//! How the DuckDB that reads issues a scan's reads: one after another on its scanning thread (1.5.x), or side by side
//! ahead of the scan on its own async pool (2.0: row groups and the next files).
enum class HostReads : uint8_t { IN_TURN, AHEAD };

struct ReadAheadTuner {
	static constexpr uint64_t MIN_AHEAD = 8 * MiB;
	//! Bandwidth-delay product assumed until the model has measured a first-byte latency.
	static constexpr uint64_t COLD_BDP = 2 * MiB;
	//! Stream bandwidth assumed from the first latency sample until the first bandwidth sample (one S3 stream's), so
	//! the window is sized from the first open's round trip.
	static constexpr double ASSUMED_STREAM_BANDWIDTH_BPS = 90.0 * MiB;
	static constexpr uint64_t MIN_MERGE_GAP = 16 * KiB;
	static constexpr uint64_t MAX_MERGE_GAP = MiB;

	//! `streams`: how many the stream controller allows now; the settings' max_fanout caps it. A host that reads
	//! AHEAD itself reads the column chunks of a row group merged across gaps under 16 KiB (DuckDB 2.0's Parquet
	//! reader, as httpfs2 gives it no network throughput) and hides their round trips on its own pool: gaps are
	//! merged only as it merges them, so that no byte between its reads is fetched.
	static ReadAheadTuning Tune(const IoSettings &settings, const CostModelSnapshot &model, uint64_t io_threads,
	                            uint64_t budget_limit, uint64_t streams = StreamController::START_STREAMS,
	                            HostReads host = HostReads::IN_TURN);
};

} // namespace httpfs2
