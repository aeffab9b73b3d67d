//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/split/split_read.hpp
//
// Runs the pieces of one split read on the IO pool and the calling thread together.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/io_pool.hpp"
#include "core/split/range_planner.hpp"

#include <exception>
#include <functional>
#include <vector>

namespace httpfs2 {

class SplitRead {
public:
	//! Reads one piece into `destination` (exactly piece.length bytes) or throws.
	using PieceReader = std::function<void(const ByteRange &piece, char *destination)>;
	//! Asked before each piece starts; true stops the read (e.g. the query was interrupted).
	using CancelCheck = std::function<bool()>;
	//! Asked before each piece starts: how many pieces may be in flight now (StreamController); none keeps `fanout`.
	using StreamCount = std::function<uint64_t()>;

	//! Reads `pieces` (which cover [base_offset, ...) of `buffer`) with `fanout` in flight, or, given `streams`, as
	//! many as it allows as the read goes. The calling
	//! thread reads pieces too, so the read completes even when every pool worker is busy. Returns only when no
	//! piece is running any more: no piece writes into `buffer` after Run returns, whether it succeeded or threw.
	//! After a failure no new piece starts, and the first error is rethrown. After a cancellation no new piece
	//! starts either, and SplitReadCancelled is thrown once the running ones are done.
	static void Run(IoPool &pool, char *buffer, uint64_t base_offset, const std::vector<ByteRange> &pieces,
	                uint64_t fanout, const PieceReader &reader, const CancelCheck &cancelled,
	                const StreamCount &streams = nullptr);
};

class SplitReadCancelled : public std::exception {
public:
	const char *what() const noexcept override {
		return "split read cancelled";
	}
};

} // namespace httpfs2
