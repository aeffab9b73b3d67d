#include "core/split/range_planner.hpp"

#include <algorithm>

namespace httpfs2 {

RangePlanner::RangePlanner(uint64_t chunk_size_bytes_p, uint64_t min_bytes_p)
    : chunk_size_bytes(std::max<uint64_t>(chunk_size_bytes_p, 1)), min_bytes(min_bytes_p) {
}

bool RangePlanner::ShouldSplit(uint64_t length) const {
	return length >= min_bytes && length >= 2;
}

void AlignCuts(std::vector<ByteRange> &pieces, uint64_t alignment) {
	if (pieces.size() < 2 || alignment == 0) {
		return;
	}
	auto start = pieces.front().offset;
	auto end = pieces.back().End();
	std::vector<ByteRange> aligned;
	auto position = start;
	for (size_t i = 0; i + 1 < pieces.size(); i++) {
		auto cut = (pieces[i].End() + alignment / 2) / alignment * alignment;
		if (cut > position && cut < end) {
			aligned.push_back(ByteRange {position, cut - position});
			position = cut;
		}
	}
	aligned.push_back(ByteRange {position, end - position});
	pieces = std::move(aligned);
}

std::vector<ByteRange> RangePlanner::Plan(uint64_t offset, uint64_t length, uint64_t fanout) const {
	std::vector<ByteRange> pieces;
	if (length == 0) {
		return pieces;
	}
	uint64_t by_chunk = (length + chunk_size_bytes - 1) / chunk_size_bytes;
	uint64_t min_piece = std::max<uint64_t>(min_bytes / MIN_PIECE_DIVISOR, 1);
	uint64_t by_fanout = std::min<uint64_t>(std::max<uint64_t>(fanout, 1), std::max<uint64_t>(length / min_piece, 1));
	uint64_t count = std::max(by_chunk, by_fanout);
	// Whole waves: every stream gets the same number of pieces, so no stream pays one more first-byte latency
	// than the others while they sit idle (a 9th piece on 4 streams would cost a whole extra round trip).
	uint64_t streams = std::max<uint64_t>(fanout, 1);
	uint64_t balanced = (count + streams - 1) / streams * streams;
	if (balanced * min_piece <= length) {
		count = balanced;
	}

	uint64_t base = length / count;
	uint64_t remainder = length % count;
	pieces.reserve(count);
	uint64_t position = offset;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t piece_length = base + (i < remainder ? 1 : 0);
		pieces.push_back(ByteRange {position, piece_length});
		position += piece_length;
	}
	return pieces;
}

} // namespace httpfs2
