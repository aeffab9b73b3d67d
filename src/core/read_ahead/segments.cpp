#include "core/read_ahead/segments.hpp"

#include <algorithm>

namespace httpfs2 {

Segment::Segment(MemoryBudget &budget_p, const ByteRange &range_p, uint64_t useful_bytes_p)
    : budget(budget_p), range(range_p), useful_bytes(useful_bytes_p) {
}

Segment::~Segment() {
	ReleaseCharge();
}

void Segment::ReleaseCharge() {
	if (charged) {
		charged = false;
		budget.Release(range.length);
	}
}

Segments::Segments(MemoryBudget &budget_p, IoStats &stats_p) : budget(budget_p), stats(stats_p) {
}

std::shared_ptr<Segment> Segments::Add(const ByteRange &range, uint64_t useful_bytes) {
	auto segment = std::make_shared<Segment>(budget, range, useful_bytes);
	by_offset.emplace(range.offset, segment);
	return segment;
}

std::vector<ByteRange> Segments::Missing(uint64_t offset, uint64_t end) const {
	std::vector<ByteRange> missing;
	uint64_t cursor = offset;
	auto position = by_offset.upper_bound(cursor);
	if (position != by_offset.begin() && std::prev(position)->second->range.End() > cursor) {
		--position;
	}
	for (; cursor < end; ++position) {
		uint64_t gap_end = end;
		if (position != by_offset.end() && position->second->range.offset < end) {
			gap_end = std::max(cursor, position->second->range.offset);
		}
		if (gap_end > cursor) {
			missing.push_back(ByteRange {cursor, gap_end - cursor});
		}
		if (position == by_offset.end() || position->second->range.offset >= end) {
			break;
		}
		cursor = std::max(cursor, position->second->range.End());
	}
	return missing;
}

bool Segments::Overlaps(const ByteRange &range) const {
	auto next = by_offset.lower_bound(range.offset);
	return (next != by_offset.end() && next->second->range.offset < range.End()) ||
	       (next != by_offset.begin() && std::prev(next)->second->range.End() > range.offset);
}

std::vector<std::shared_ptr<Segment>> Segments::Overlapping(const ByteRange &read) const {
	std::vector<std::shared_ptr<Segment>> overlapping;
	auto position = by_offset.upper_bound(read.offset);
	if (position != by_offset.begin()) {
		--position;
	}
	for (; position != by_offset.end() && position->second->range.offset < read.End(); ++position) {
		if (position->second->range.End() > read.offset) {
			overlapping.push_back(position->second);
		}
	}
	return overlapping;
}

std::shared_ptr<Segment> Segments::Last() const {
	return by_offset.empty() ? nullptr : std::prev(by_offset.end())->second;
}

void Segments::Consume(const std::shared_ptr<Segment> &segment, uint64_t bytes) {
	segment->consumed += bytes;
	stats.Add(segment->remembered ? Counter::FOOTER_BYTES_REUSED : Counter::READ_AHEAD_BYTES_USED, bytes);
	if (segment->held && segment->consumed >= segment->useful_bytes) {
		Remove(segment);
	}
}

void Segments::Remove(const std::shared_ptr<Segment> &segment) {
	auto position = by_offset.find(segment->range.offset);
	if (position != by_offset.end() && position->second == segment) {
		Drop(position, false);
	}
}

void Segments::DropPassed(uint64_t drop_before) {
	for (auto position = by_offset.begin(); position != by_offset.end();) {
		bool passed = position->second->range.End() <= drop_before;
		bool idle = position->second->state != Segment::State::FETCHING;
		position = passed && idle ? Drop(position, true) : std::next(position);
	}
}

void Segments::DropAll() {
	for (auto position = by_offset.begin(); position != by_offset.end();) {
		position = Drop(position, false);
	}
}

uint64_t Segments::HeldBytes() const {
	uint64_t total = 0;
	for (auto &entry : by_offset) {
		total += entry.second->range.length;
	}
	return total;
}

Segments::Map::iterator Segments::Drop(Map::iterator position, bool evicted) {
	auto &segment = *position->second;
	segment.held = false;
	if (segment.state == Segment::State::QUEUED) {
		// Its task may sit in the pool's queue for a while yet; it will find the segment dropped and do nothing.
		segment.ReleaseCharge();
	}
	// Remembered bytes were not fetched: none of them is wasted.
	if (segment.state == Segment::State::READY && !segment.remembered && segment.consumed < segment.range.length) {
		uint64_t unused = segment.range.length - std::min(segment.consumed, segment.range.length);
		// Bytes merged in across gaps were never meant to be read: count only what falls short of the useful part.
		uint64_t wasted = segment.consumed >= segment.useful_bytes ? 0 : unused;
		stats.Add(Counter::READ_AHEAD_BYTES_WASTED, wasted);
		if (evicted) {
			stats.Add(Counter::READ_AHEAD_BYTES_EVICTED, wasted);
		}
	}
	return by_offset.erase(position);
}

} // namespace httpfs2
