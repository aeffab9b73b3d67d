//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/split/range_planner.hpp
//
// Decides whether a read is split and cuts it into sub-read ranges.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>
#include <vector>

namespace httpfs2 {

struct ByteRange {
	uint64_t offset;
	uint64_t length;

	uint64_t End() const {
		return offset + length;
	}
};

//! Moves the cuts between consecutive `pieces` to the nearest multiple of `alignment` (a block cache's blocks, so that
//! no two pieces fetch the same block), dropping pieces left empty; the pieces still cover the same bytes.
void AlignCuts(std::vector<ByteRange> &pieces, uint64_t alignment);

class RangePlanner {
public:
	//! Pieces are never cut smaller than this fraction of min_bytes, so a read just above min_bytes splits in two.
	static constexpr uint64_t MIN_PIECE_DIVISOR = 2;

	RangePlanner(uint64_t chunk_size_bytes, uint64_t min_bytes);

	//! Whether a read of `length` bytes is large enough to split.
	bool ShouldSplit(uint64_t length) const;

	//! Cuts [offset, offset + length) into contiguous pieces of near-equal size: at most chunk_size bytes each, and,
	//! when that gives fewer pieces than `fanout`, cut further (down to min_bytes / 2) so that `fanout` streams have
	//! work, and round the count up to whole waves of `fanout` pieces. Pieces are returned in file order and cover
	//! the range exactly.
	std::vector<ByteRange> Plan(uint64_t offset, uint64_t length, uint64_t fanout) const;

private:
	uint64_t chunk_size_bytes;
	uint64_t min_bytes;
};

} // namespace httpfs2
