//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/memory_budget.hpp
//
// One byte budget for all read-ahead of a database. A reservation either fits under the limit or is refused, so
// the limit is never exceeded; lowering the limit refuses new reservations until use drops below it.
//===----------------------------------------------------------------------===//

#pragma once

#include <atomic>
#include <cstdint>

namespace httpfs2 {

class MemoryBudget {
public:
	explicit MemoryBudget(uint64_t limit_bytes);

	void SetLimit(uint64_t limit_bytes);
	uint64_t Limit() const;
	//! Reserves `bytes` when they fit under the limit; false (nothing reserved) otherwise.
	bool TryReserve(uint64_t bytes);
	void Release(uint64_t bytes);
	uint64_t InUse() const;
	//! Highest InUse() since construction or the last ResetPeak().
	uint64_t Peak() const;
	void ResetPeak();

private:
	std::atomic<uint64_t> limit;
	std::atomic<uint64_t> in_use {0};
	std::atomic<uint64_t> peak {0};
};

} // namespace httpfs2
