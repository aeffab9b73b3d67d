#include "core/cache/block_file.hpp"

#include "core/cache/crc32c.hpp"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace httpfs2 {

namespace {

constexpr char MAGIC[8] = {'h', '2', 'f', 's', 'b', 'l', 'k', '\n'};
constexpr uint32_t FORMAT_VERSION = 1;
//! Longer keys are not written, and a header naming one is not believed (it would make a reader allocate it).
constexpr uint64_t MAX_KEY_BYTES = 64 * 1024;

struct BlockHeader {
	char magic[8];
	uint32_t format_version;
	uint32_t path_length;
	uint32_t version_length;
	uint32_t data_crc;
	uint64_t key_hash;
	uint64_t index;
	uint64_t length;
	uint32_t header_crc;
	uint32_t zero;
};
static_assert(sizeof(BlockHeader) == 56, "the header's layout is the file format: no padding");

uint32_t HeaderCrc(BlockHeader header, const char *key_bytes, uint64_t key_length) {
	header.header_crc = 0;
	auto crc = Crc32c(reinterpret_cast<const char *>(&header), sizeof(header));
	return Crc32c(key_bytes, key_length, crc);
}

//! The header and key of block `index` of `key`, as written before its bytes.
std::string EncodeHeader(const CacheKey &key, uint64_t index, const char *data, uint64_t length) {
	BlockHeader header;
	std::memcpy(header.magic, MAGIC, sizeof(MAGIC));
	header.format_version = FORMAT_VERSION;
	header.path_length = static_cast<uint32_t>(key.path.size());
	header.version_length = static_cast<uint32_t>(key.version.size());
	header.data_crc = Crc32c(data, length);
	header.key_hash = HashCacheKey(key);
	header.index = index;
	header.length = length;
	header.zero = 0;
	auto key_bytes = key.path + key.version;
	header.header_crc = HeaderCrc(header, key_bytes.data(), key_bytes.size());
	return std::string(reinterpret_cast<const char *>(&header), sizeof(header)) + key_bytes;
}

//! The header at the start of `bytes` when it is one of this format whose checksum covers it and its key.
bool DecodeHeader(const std::string &bytes, BlockHeader &header) {
	if (bytes.size() < sizeof(header)) {
		return false;
	}
	std::memcpy(&header, bytes.data(), sizeof(header));
	uint64_t key_length = uint64_t(header.path_length) + header.version_length;
	return std::memcmp(header.magic, MAGIC, sizeof(MAGIC)) == 0 && header.format_version == FORMAT_VERSION &&
	       bytes.size() == sizeof(header) + key_length &&
	       header.header_crc == HeaderCrc(header, bytes.data() + sizeof(header), key_length);
}

//! Calls `step(done)`, which moves bytes from offset `done` on and returns how many (as read and write do), until
//! `count` bytes are moved: false on an error or at the end of the file (a truncated block).
template <class Step>
bool Fully(uint64_t count, Step step) {
	for (uint64_t done = 0; done < count;) {
		auto moved = step(done);
		if (moved < 0 && errno == EINTR) {
			continue;
		}
		if (moved <= 0) {
			return false;
		}
		done += static_cast<uint64_t>(moved);
	}
	return true;
}

bool ReadFully(int fd, char *out, uint64_t count, uint64_t offset) {
	return Fully(count, [&](uint64_t done) { return pread(fd, out + done, count - done, off_t(offset + done)); });
}

bool WriteFully(int fd, const char *data, uint64_t count) {
	return Fully(count, [&](uint64_t done) { return write(fd, data + done, count - done); });
}

//! The header at the start of the file open as `fd`, and its bytes with the key's in `bytes`, when valid.
bool ReadHeaderAndKey(int fd, BlockHeader &header, std::string &bytes) {
	bytes.assign(sizeof(header), '\0');
	if (!ReadFully(fd, &bytes[0], bytes.size(), 0)) {
		return false;
	}
	std::memcpy(&header, bytes.data(), sizeof(header));
	uint64_t key_length = uint64_t(header.path_length) + header.version_length;
	if (key_length > MAX_KEY_BYTES) {
		return false;
	}
	bytes.resize(sizeof(header) + key_length);
	return ReadFully(fd, &bytes[sizeof(header)], key_length, sizeof(header)) && DecodeHeader(bytes, header);
}

//! Removes `file` when it is still the file open as `fd`: another process may have renamed a good block onto the
//! name since this one was opened, and that block stays.
void RemoveIfSame(const std::string &file, int fd) {
	struct stat opened, named;
	if (fstat(fd, &opened) == 0 && stat(file.c_str(), &named) == 0 && opened.st_dev == named.st_dev &&
	    opened.st_ino == named.st_ino) {
		unlink(file.c_str());
	}
}

//! Whether the file open as `fd` is block `index` of `key`, `length` bytes, which it reads into `out`.
bool ReadCheckedBlock(int fd, const CacheKey &key, uint64_t index, uint64_t length, char *out) {
	BlockHeader header;
	std::string bytes;
	struct stat status;
	if (!ReadHeaderAndKey(fd, header, bytes) || fstat(fd, &status) != 0) {
		return false;
	}
	bool same_block = header.path_length == key.path.size() &&
	                  bytes.compare(sizeof(header), std::string::npos, key.path + key.version) == 0 &&
	                  header.key_hash == HashCacheKey(key) && header.index == index && header.length == length &&
	                  uint64_t(status.st_size) == bytes.size() + length;
	return same_block && ReadFully(fd, out, length, bytes.size()) && Crc32c(out, length) == header.data_crc;
}

} // namespace

uint64_t HashCacheKey(const CacheKey &key) {
	// FNV-1a over the path, a separator no UTF-8 text holds, and the version; then a finalizer (splitmix64's) so
	// that the leading hex digits, which spread the folders, depend on every byte.
	uint64_t hash = 0xcbf29ce484222325ULL;
	auto mix_in = [&hash](const std::string &text) {
		for (unsigned char byte : text) {
			hash = (hash ^ byte) * 0x100000001b3ULL;
		}
	};
	mix_in(key.path);
	mix_in(std::string(1, '\xff'));
	mix_in(key.version);
	hash = (hash ^ (hash >> 30)) * 0xbf58476d1ce4e5b9ULL;
	hash = (hash ^ (hash >> 27)) * 0x94d049bb133111ebULL;
	return hash ^ (hash >> 31);
}

uint64_t BlockFileSize(const CacheKey &key, uint64_t length) {
	return sizeof(BlockHeader) + key.path.size() + key.version.size() + length;
}

BlockFileRead ReadBlockFile(const std::string &file, const CacheKey &key, uint64_t index, uint64_t length, char *out) {
	int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return BlockFileRead::ABSENT;
	}
	auto result = BlockFileRead::HIT;
	if (ReadCheckedBlock(fd, key, index, length, out)) {
		futimens(fd, nullptr);
	} else {
		RemoveIfSame(file, fd);
		result = BlockFileRead::INVALID;
	}
	close(fd);
	return result;
}

bool WriteBlockFile(const std::string &temp_file, const std::string &file, const CacheKey &key, uint64_t index,
                    const char *data, uint64_t length) {
	if (key.path.size() + key.version.size() > MAX_KEY_BYTES) {
		errno = ENAMETOOLONG;
		return false;
	}
	return WriteFileAtomically(temp_file, file, EncodeHeader(key, index, data, length), data, length);
}

bool WriteFileAtomically(const std::string &temp_file, const std::string &file, const std::string &head,
                         const char *data, uint64_t length) {
	int fd = open(temp_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		return false;
	}
	bool written = WriteFully(fd, head.data(), head.size()) && WriteFully(fd, data, length);
	// A network filesystem may report a failed write only at the close.
	written = close(fd) == 0 && written;
	if (written && rename(temp_file.c_str(), file.c_str()) == 0) {
		return true;
	}
	int failure = errno;
	unlink(temp_file.c_str());
	errno = failure;
	return false;
}

bool ReadBlockKey(const std::string &file, CacheKey &key, uint64_t &length) {
	int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return false;
	}
	BlockHeader header;
	std::string bytes;
	bool valid = ReadHeaderAndKey(fd, header, bytes);
	close(fd);
	if (valid) {
		key.path = bytes.substr(sizeof(header), header.path_length);
		key.version = bytes.substr(sizeof(header) + header.path_length);
		length = header.length;
	}
	return valid;
}

bool ReadSmallFile(const std::string &file, uint64_t max_bytes, std::string &bytes) {
	int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return false;
	}
	struct stat status;
	bool read = fstat(fd, &status) == 0 && uint64_t(status.st_size) <= max_bytes;
	if (read) {
		bytes.assign(uint64_t(status.st_size), '\0');
		read = ReadFully(fd, &bytes[0], bytes.size(), 0);
	}
	close(fd);
	return read;
}

std::string HexOf(uint64_t value) {
	static const char digits[] = "0123456789abcdef";
	std::string hex(16, '0');
	for (int i = 15; i >= 0; i--, value >>= 4) {
		hex[i] = digits[value & 0xF];
	}
	return hex;
}

std::vector<std::string> FolderNames(const std::string &folder) {
	std::vector<std::string> names;
	DIR *listing = opendir(folder.c_str());
	if (!listing) {
		return names;
	}
	while (auto entry = readdir(listing)) {
		std::string name = entry->d_name;
		if (name != "." && name != "..") {
			names.push_back(name);
		}
	}
	closedir(listing);
	return names;
}

} // namespace httpfs2
