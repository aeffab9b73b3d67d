//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/common/memory_budget.hpp
//
// One byte budget for all read-ahead of a database, and the allocator its bytes come from. A reservation either
// fits under the limit or is refused, so the limit is never exceeded; lowering the limit refuses new reservations
// until use drops below it.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/buffer_allocator.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

namespace httpfs2 {

class MemoryBudget {
public:
	explicit MemoryBudget(uint64_t limit_bytes, std::shared_ptr<BufferAllocator> allocator = BufferAllocator::System());

	void SetLimit(uint64_t limit_bytes);
	uint64_t Limit() const;
	//! Reserves `bytes` when they fit under the limit; false (nothing reserved) otherwise.
	bool TryReserve(uint64_t bytes);
	void Release(uint64_t bytes);
	uint64_t InUse() const;
	//! Highest InUse() since construction or the last ResetPeak().
	uint64_t Peak() const;
	void ResetPeak();
	//! Where the reserved bytes are allocated.
	BufferAllocator &Allocator() const {
		return *allocator;
	}

private:
	const std::shared_ptr<BufferAllocator> allocator;
	std::atomic<uint64_t> limit;
	std::atomic<uint64_t> in_use {0};
	std::atomic<uint64_t> peak {0};
};

} // namespace httpfs2
