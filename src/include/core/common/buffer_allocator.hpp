//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/common/buffer_allocator.hpp
//
// Where read-ahead bytes live. The core's default is new[]; the extension passes DuckDB's allocator, which keeps
// freed pages for the next buffer. A fresh buffer from the system faults in every page on its first write (several
// microseconds per 4 KiB on a small VM), a cost the scan pays again for each segment fetched ahead.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>
#include <memory>

namespace httpfs2 {

class BufferAllocator {
public:
	virtual ~BufferAllocator() = default;
	//! `size` bytes, or throws.
	virtual char *Allocate(uint64_t size) = 0;
	virtual void Free(char *data, uint64_t size) = 0;

	//! The allocator of plain new[] and delete[].
	static std::shared_ptr<BufferAllocator> System();
};

//! A buffer from a BufferAllocator, given back when it is reset or goes.
class AllocatedBuffer {
public:
	AllocatedBuffer() = default;
	~AllocatedBuffer();
	AllocatedBuffer(const AllocatedBuffer &) = delete;
	AllocatedBuffer &operator=(const AllocatedBuffer &) = delete;

	char *Get() const {
		return data;
	}
	explicit operator bool() const {
		return data != nullptr;
	}
	//! Gives back the buffer held, if any, and takes `size` bytes from `allocator`.
	void Allocate(BufferAllocator &allocator, uint64_t size);
	void Reset();

private:
	BufferAllocator *allocator = nullptr;
	char *data = nullptr;
	uint64_t size = 0;
};

} // namespace httpfs2
