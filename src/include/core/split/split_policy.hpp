//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/split/split_policy.hpp
//
// Whether one read is split, how many streams it starts with and where it is cut: the policy beside RangePlanner's
// mechanism, as ReadAheadTuner is read-ahead's. The LAN gate is the cost model's (CostModelSnapshot::IsNear), the
// same read-ahead asks.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/cost_model.hpp"
#include "core/common/io_settings.hpp"
#include "core/split/range_planner.hpp"

#include <cstdint>
#include <vector>

namespace httpfs2 {

//! A read's split: its pieces (none when it is read whole) and the streams it starts with.
struct SplitPlan {
	std::vector<ByteRange> pieces;
	uint64_t fanout = 1;
	//! More streams join while the stream controller allows them (up to max_fanout); false with auto fan-out.
	bool follow_link = false;
};

class SplitPolicy {
public:
	//! The streams a split read starts with: as many as the link rewarded so far (the model's StreamController),
	//! within max_fanout; with auto fan-out, the count the cost model predicts fastest.
	static uint64_t Fanout(const IoSettings &settings, const CostModel &model, uint64_t nr_bytes);
	//! Whether a read is one of the pieces the host cut a larger read into (its length the host's piece size) while
	//! the host keeps at least `fanout` of them in flight: split, each piece would be two requests and a copy for no
	//! stream more (DuckDB 2.0 with async_threads at or above the fan-out: read_blob at region, 257 GETs against 129).
	static bool HostReadsAsWide(const IoSettings &settings, uint64_t nr_bytes, uint64_t fanout);
	//! The split of a read of `nr_bytes` at `location`. Not split under one chunk where the store answers within
	//! min_latency_ms (a LAN store: its pieces would cost more CPU than they save), with one stream, where the host
	//! reads as wide itself (HostReadsAsWide), or where the planner gives one piece. Otherwise cut for twice the
	//! streams it starts with, or, following the link, into pieces of half a chunk for as many streams as it may come
	//! to, so that streams added while it runs find pieces.
	static SplitPlan Plan(const IoSettings &settings, const CostModel &model, uint64_t nr_bytes, uint64_t location);
};

} // namespace httpfs2
