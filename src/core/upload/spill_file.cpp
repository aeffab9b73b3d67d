#include "core/upload/spill_file.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace httpfs2 {

static std::runtime_error SpillError(const std::string &what, const std::string &directory) {
	return std::runtime_error("httpfs2: " + what + " a part in the temporary directory '" + directory +
	                          "' failed: " + std::strerror(errno));
}

SpillFile::SpillFile(const std::string &directory_p) : directory(directory_p) {
	if (directory.empty()) {
		auto tmpdir = std::getenv("TMPDIR");
		directory = tmpdir && *tmpdir ? tmpdir : "/tmp";
	}
	std::string pattern = directory + "/httpfs2-part-XXXXXX";
	std::vector<char> name(pattern.begin(), pattern.end());
	name.push_back('\0');
	fd = mkstemp(name.data());
	if (fd < 0) {
		throw SpillError("keeping", directory);
	}
	unlink(name.data());
}

SpillFile::~SpillFile() {
	if (fd >= 0) {
		close(fd);
	}
}

void SpillFile::Append(const char *data, uint64_t count) {
	while (count > 0) {
		auto written = write(fd, data, count);
		if (written < 0 && errno == EINTR) {
			continue;
		}
		if (written <= 0) {
			throw SpillError("writing", directory);
		}
		data += written;
		count -= static_cast<uint64_t>(written);
		size += static_cast<uint64_t>(written);
	}
}

std::shared_ptr<char> SpillFile::Map() {
	if (size == 0) {
		return std::shared_ptr<char>(new char[1], std::default_delete<char[]>());
	}
	void *mapped = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
	if (mapped == MAP_FAILED) {
		throw SpillError("mapping", directory);
	}
	close(fd);
	fd = -1;
	auto length = size;
	return std::shared_ptr<char>(static_cast<char *>(mapped), [length](char *bytes) { munmap(bytes, length); });
}

} // namespace httpfs2
