#include "core/common/buffer_allocator.hpp"

namespace httpfs2 {

namespace {
class SystemAllocator : public BufferAllocator {
public:
	char *Allocate(uint64_t size) override {
		return new char[size];
	}
	void Free(char *data, uint64_t) override {
		delete[] data;
	}
};
} // namespace

std::shared_ptr<BufferAllocator> BufferAllocator::System() {
	static auto system = std::make_shared<SystemAllocator>();
	return system;
}

AllocatedBuffer::~AllocatedBuffer() {
	Reset();
}

void AllocatedBuffer::Allocate(BufferAllocator &allocator_p, uint64_t size_p) {
	Reset();
	data = allocator_p.Allocate(size_p);
	allocator = &allocator_p;
	size = size_p;
}

void AllocatedBuffer::Reset() {
	if (data) {
		allocator->Free(data, size);
		data = nullptr;
	}
}

} // namespace httpfs2
