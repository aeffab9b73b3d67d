#include "core/cache/version_records.hpp"

#include "core/cache/block_file.hpp"
#include "core/cache/crc32c.hpp"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace httpfs2 {

namespace {

//! A new layout gets a new folder, so processes of two httpfs2 versions never read each other's records.
const char *const ROOT_FOLDER = "httpfs2-versions-v1";
constexpr char MAGIC[8] = {'h', '2', 'f', 's', 'v', 'e', 'r', '\n'};
constexpr uint32_t FORMAT_VERSION = 1;
//! Longer records are not written, and a longer file is not read.
constexpr uint64_t MAX_RECORD_BYTES = 64 * 1024;
//! How far in the future a record may say it was learnt (clocks of processes on one machine agree).
constexpr int64_t FUTURE_SLACK_NS = 1000LL * 1000 * 1000;

struct RecordHeader {
	char magic[8];
	uint32_t format_version;
	uint32_t path_length;
	uint32_t version_length;
	uint32_t crc;
	int64_t learnt_ns;
};
static_assert(sizeof(RecordHeader) == 32, "the header's layout is the file format: no padding");

uint32_t RecordCrc(RecordHeader header, const char *rest, uint64_t length) {
	header.crc = 0;
	return Crc32c(rest, length, Crc32c(reinterpret_cast<const char *>(&header), sizeof(header)));
}

//! The path, version and time of a record file's bytes, when they are a whole record whose checksum holds.
bool DecodeRecord(const std::string &bytes, std::string &path, std::string &version, int64_t &learnt_ns) {
	RecordHeader header;
	if (bytes.size() < sizeof(header)) {
		return false;
	}
	std::memcpy(&header, bytes.data(), sizeof(header));
	uint64_t rest = uint64_t(header.path_length) + header.version_length;
	if (std::memcmp(header.magic, MAGIC, sizeof(MAGIC)) != 0 || header.format_version != FORMAT_VERSION ||
	    bytes.size() != sizeof(header) + rest || header.crc != RecordCrc(header, bytes.data() + sizeof(header), rest)) {
		return false;
	}
	path = bytes.substr(sizeof(header), header.path_length);
	version = bytes.substr(sizeof(header) + header.path_length);
	learnt_ns = header.learnt_ns;
	return true;
}

} // namespace

const char *const VersionRecords::RECORD_SUFFIX = ".ver";

VersionRecords::VersionRecords(const std::string &directory) : root(directory + "/" + ROOT_FOLDER) {
}

uint64_t VersionRecords::RecordBytes(const std::string &path, const std::string &version) {
	return sizeof(RecordHeader) + path.size() + version.size();
}

const std::string &VersionRecords::Root() const {
	return root;
}

std::string VersionRecords::RecordFile(const std::string &path) const {
	auto hash = HexOf(HashCacheKey(CacheKey {path, ""}));
	return root + "/" + hash.substr(0, 2) + "/" + hash + RECORD_SUFFIX;
}

bool VersionRecords::Record(const std::string &path, const std::string &version, int64_t learnt_ns) {
	if (path.size() + version.size() > MAX_RECORD_BYTES - sizeof(RecordHeader)) {
		return false;
	}
	RecordHeader header;
	std::memcpy(header.magic, MAGIC, sizeof(MAGIC));
	header.format_version = FORMAT_VERSION;
	header.path_length = static_cast<uint32_t>(path.size());
	header.version_length = static_cast<uint32_t>(version.size());
	header.learnt_ns = learnt_ns;
	auto rest = path + version;
	header.crc = RecordCrc(header, rest.data(), rest.size());
	auto file = RecordFile(path);
	auto folder = file.substr(0, file.rfind('/'));
	auto head = std::string(reinterpret_cast<const char *>(&header), sizeof(header));
	for (int attempt = 0; attempt < 2; attempt++) {
		auto temp = folder + "/tmp-" + std::to_string(getpid()) + "-" + std::to_string(temp_sequence++);
		if (WriteFileAtomically(temp, file, head, rest.data(), rest.size())) {
			return true;
		}
		// The first record of a shard makes its folder (and the root's, the first of all).
		if (errno != ENOENT || (mkdir(root.c_str(), 0755) != 0 && errno != EEXIST) ||
		    (mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST)) {
			return false;
		}
	}
	return false;
}

bool VersionRecords::Find(const std::string &path, int64_t not_before_ns, int64_t now_ns, std::string &version) {
	auto file = RecordFile(path);
	std::string bytes, recorded_path;
	int64_t learnt_ns = 0;
	if (!ReadSmallFile(file, MAX_RECORD_BYTES, bytes)) {
		return false;
	}
	if (!DecodeRecord(bytes, recorded_path, version, learnt_ns)) {
		// Torn or corrupt (a rename makes records whole, so this is a disk's or a user's doing): a miss, and gone.
		unlink(file.c_str());
		return false;
	}
	return recorded_path == path && learnt_ns >= not_before_ns && learnt_ns <= now_ns + FUTURE_SLACK_NS;
}

void VersionRecords::Forget(const std::string &path) {
	unlink(RecordFile(path).c_str());
}

void VersionRecords::ForgetPrefix(const std::string &path_prefix) {
	for (auto &shard : FolderNames(root)) {
		auto folder = root + "/" + shard;
		for (auto &name : FolderNames(folder)) {
			auto file = folder + "/" + name;
			std::string bytes, path, version;
			int64_t learnt_ns;
			bool readable =
			    ReadSmallFile(file, MAX_RECORD_BYTES, bytes) && DecodeRecord(bytes, path, version, learnt_ns);
			if (path_prefix.empty() || (readable && path.compare(0, path_prefix.size(), path_prefix) == 0)) {
				unlink(file.c_str());
			}
		}
		rmdir(folder.c_str()); // fails while it holds a record
	}
}

} // namespace httpfs2
