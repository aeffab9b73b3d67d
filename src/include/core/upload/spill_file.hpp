//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/upload/spill_file.hpp
//
// A part kept on local disk instead of in the upload budget: when the budget is held by buffers still being filled
// and none can be sent yet (more files open than the budget holds parts of the store's smallest size), a writer
// keeps going by writing its part to a temporary file. The file is unlinked at once (nothing is left behind, even
// after a crash) and mapped when the part is sent, so the page cache, not the budget, holds its bytes.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace httpfs2 {

class SpillFile {
public:
	//! Creates an unlinked temporary file in `directory` (empty: $TMPDIR, else /tmp). Throws naming the directory.
	explicit SpillFile(const std::string &directory);
	~SpillFile();
	SpillFile(const SpillFile &) = delete;
	SpillFile &operator=(const SpillFile &) = delete;

	void Append(const char *data, uint64_t size);
	//! The bytes appended, mapped read-only; the mapping outlives this file. Once, at the end.
	std::shared_ptr<char> Map();

private:
	std::string directory;
	int fd = -1;
	uint64_t size = 0;
};

} // namespace httpfs2
