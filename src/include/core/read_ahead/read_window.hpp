//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_ahead/read_window.hpp
//
// The window a buffered handle reads through (one opened without direct IO or parallel access), as httpfs's own
// handle keeps one: a read smaller than the window is fetched with the bytes after it up to the window's size, and
// the next reads inside it cost no request; the window doubles while reads follow each other, up to MAX_BYTES. With
// it a read that httpfs2 sends itself (checked, hedged, re-signed) asks for what httpfs's handle would have asked
// for, no more requests and no more bytes.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"
#include "core/split/range_planner.hpp"

#include <cstdint>
#include <functional>
#include <memory>

namespace httpfs2 {

class ReadWindow {
public:
	//! httpfs's INITIAL_READ_BUFFER_LEN and MAXIMUM_READ_BUFFER_LEN.
	static constexpr uint64_t INITIAL_BYTES = 1024 * 1024;
	static constexpr uint64_t MAX_BYTES = 32 * 1024 * 1024;

	//! Fetches exactly `range` into the destination, or throws.
	using Fetch = std::function<void(const ByteRange &range, char *destination)>;

	//! Reads `range` of an object of `object_size` bytes (the range lies within it) into `destination`: from the
	//! window where it holds the bytes, else through `fetch`. A fetch that throws leaves the window empty.
	void Read(const ByteRange &range, uint64_t object_size, char *destination, const Fetch &fetch);
	//! Frees the window's bytes.
	void Release();

private:
	Mutex lock;
	std::unique_ptr<char[]> bytes HTTPFS2_GUARDED_BY(lock);
	//! What `bytes` can hold; the next fetch into the window asks for this many bytes (less at the object's end).
	uint64_t capacity HTTPFS2_GUARDED_BY(lock) = INITIAL_BYTES;
	//! The bytes held: [held.offset, held.End()).
	ByteRange held HTTPFS2_GUARDED_BY(lock) {0, 0};
	//! Where the last fetch ended (into the window or not): a read beginning there follows it.
	uint64_t last_fetch_end HTTPFS2_GUARDED_BY(lock) = UINT64_MAX;
};

} // namespace httpfs2
