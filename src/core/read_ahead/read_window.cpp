#include "core/read_ahead/read_window.hpp"

#include <algorithm>
#include <cstring>

namespace httpfs2 {

constexpr uint64_t ReadWindow::INITIAL_BYTES;
constexpr uint64_t ReadWindow::MAX_BYTES;

void ReadWindow::Read(const ByteRange &range, uint64_t object_size, char *destination, const Fetch &fetch) {
	MutexLock guard(lock);
	uint64_t position = range.offset;
	uint64_t remaining = range.length;
	if (position >= held.offset && position < held.End()) {
		auto from_window = std::min<uint64_t>(remaining, held.End() - position);
		std::memcpy(destination, bytes.get() + (position - held.offset), from_window);
		position += from_window;
		remaining -= from_window;
	}
	if (remaining == 0) {
		return;
	}
	char *rest = destination + (position - range.offset);
	if (remaining > std::min<uint64_t>(capacity, object_size - position)) {
		// Larger than the window: fetched alone, as httpfs's handle bypasses its buffer.
		fetch(ByteRange {position, remaining}, rest);
		last_fetch_end = position + remaining;
		return;
	}
	if (last_fetch_end == position && capacity < MAX_BYTES) {
		capacity *= 2;
		bytes.reset();
	}
	if (!bytes) {
		bytes.reset(new char[capacity]);
	}
	ByteRange window {position, std::min<uint64_t>(capacity, object_size - position)};
	held = ByteRange {0, 0};
	fetch(window, bytes.get());
	held = window;
	last_fetch_end = window.End();
	std::memcpy(rest, bytes.get(), remaining);
}

void ReadWindow::Release() {
	MutexLock guard(lock);
	bytes.reset();
	held = ByteRange {0, 0};
}

} // namespace httpfs2
