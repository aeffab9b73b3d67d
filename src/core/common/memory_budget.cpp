#include "core/common/memory_budget.hpp"

#include <utility>

namespace httpfs2 {

MemoryBudget::MemoryBudget(uint64_t limit_bytes, std::shared_ptr<BufferAllocator> allocator_p)
    : allocator(std::move(allocator_p)), limit(limit_bytes) {
}

void MemoryBudget::SetLimit(uint64_t limit_bytes) {
	limit.store(limit_bytes);
}

uint64_t MemoryBudget::Limit() const {
	return limit.load();
}

bool MemoryBudget::TryReserve(uint64_t bytes) {
	uint64_t current = in_use.load();
	do {
		if (bytes > limit.load() || current > limit.load() - bytes) {
			return false;
		}
	} while (!in_use.compare_exchange_weak(current, current + bytes));
	uint64_t now = current + bytes;
	uint64_t seen = peak.load();
	while (now > seen && !peak.compare_exchange_weak(seen, now)) {
	}
	return true;
}

void MemoryBudget::Release(uint64_t bytes) {
	in_use.fetch_sub(bytes);
}

uint64_t MemoryBudget::InUse() const {
	return in_use.load();
}

uint64_t MemoryBudget::Peak() const {
	return peak.load();
}

void MemoryBudget::ResetPeak() {
	peak.store(in_use.load());
}

} // namespace httpfs2
