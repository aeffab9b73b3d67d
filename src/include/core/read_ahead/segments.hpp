//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_ahead/segments.hpp
//
// Read-ahead's mechanism, apart from its policy: the ranges of one object fetched or being fetched ahead (Segment),
// each with a buffer of its own charged to the database's memory budget, kept by offset (Segments) with the
// accounting of their bytes (used by readers, wasted, evicted). ObjectReadAhead decides what to fetch and runs the
// fetches; Segments is used under its lock.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/buffer_allocator.hpp"
#include "core/common/io_stats.hpp"
#include "core/common/memory_budget.hpp"
#include "core/split/range_planner.hpp"

#include <exception>
#include <map>
#include <memory>
#include <vector>

namespace httpfs2 {

//! One range read ahead. The budget is charged when it is created; it is credited when the buffer is gone, or as soon
//! as a segment that never started fetching is dropped.
struct Segment {
	Segment(MemoryBudget &budget, const ByteRange &range, uint64_t useful_bytes);
	~Segment();
	void ReleaseCharge();

	enum class State { QUEUED, FETCHING, READY, FAILED };

	MemoryBudget &budget;
	const ByteRange range;
	//! Freed once readers got this many of its bytes.
	const uint64_t useful_bytes;
	uint64_t consumed = 0;
	State state = State::QUEUED;
	//! Still in its object's Segments; a dropped segment lives on only while a fetch or a reader holds it.
	bool held = true;
	bool charged = true;
	//! Its bytes came from a remembered footer (ObjectReadAhead::Hold), not from a fetch.
	bool remembered = false;
	//! Why a FAILED fetch failed: the request's error, for the readers that waited for it.
	std::exception_ptr error;
	AllocatedBuffer data;
};

class Segments {
public:
	Segments(MemoryBudget &budget, IoStats &stats);

	//! A new segment of `range`, whose charge the caller reserved already.
	std::shared_ptr<Segment> Add(const ByteRange &range, uint64_t useful_bytes);
	//! The parts of [offset, end) that no segment covers, in order.
	std::vector<ByteRange> Missing(uint64_t offset, uint64_t end) const;
	bool Overlaps(const ByteRange &range) const;
	//! The segments overlapping `read`, by offset.
	std::vector<std::shared_ptr<Segment>> Overlapping(const ByteRange &read) const;
	//! The segment reaching furthest into the object, or null.
	std::shared_ptr<Segment> Last() const;

	//! Counts `bytes` of `segment` a reader got; a segment whose useful bytes were all read is dropped.
	void Consume(const std::shared_ptr<Segment> &segment, uint64_t bytes);
	//! Drops `segment` if it is still held (a fetch that failed).
	void Remove(const std::shared_ptr<Segment> &segment);
	//! Drops the idle segments that end at or before `drop_before` (every reader moved past them).
	void DropPassed(uint64_t drop_before);
	void DropAll();
	//! Bytes held in segments (queued, in flight or arrived).
	uint64_t HeldBytes() const;

private:
	using Map = std::map<uint64_t, std::shared_ptr<Segment>>;
	//! Removes a segment; what no reader got of its fetched bytes is counted as wasted (and `evicted`).
	Map::iterator Drop(Map::iterator position, bool evicted);

	MemoryBudget &budget;
	IoStats &stats;
	Map by_offset;
};

} // namespace httpfs2
