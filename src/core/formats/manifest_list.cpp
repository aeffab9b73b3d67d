#include "core/formats/manifest_list.hpp"

#include <unordered_set>

namespace httpfs2 {

namespace {
constexpr char MAGIC[] = {'O', 'b', 'j', 1};
constexpr size_t SYNC_BYTES = 16;
//! An Avro long: at most ten bytes of seven bits.
constexpr size_t MAX_LONG_BYTES = 10;

//! Reads an Avro long (a zigzag varint) at `position`, moving past it; false past the end or over ten bytes.
bool ReadLong(const std::string &bytes, size_t &position, int64_t &value) {
	uint64_t raw = 0;
	for (size_t shift = 0, read = 0; read < MAX_LONG_BYTES; shift += 7, read++) {
		if (position >= bytes.size()) {
			return false;
		}
		auto byte = static_cast<uint8_t>(bytes[position++]);
		raw |= static_cast<uint64_t>(byte & 0x7f) << shift;
		if ((byte & 0x80) == 0) {
			value = static_cast<int64_t>(raw >> 1) ^ -static_cast<int64_t>(raw & 1);
			return true;
		}
	}
	return false;
}

//! Reads an Avro string or bytes value (a long length, then the bytes).
bool ReadBytes(const std::string &bytes, size_t &position, std::string &value) {
	int64_t length;
	if (!ReadLong(bytes, position, length) || length < 0 || static_cast<uint64_t>(length) > bytes.size() - position) {
		return false;
	}
	value = bytes.substr(position, static_cast<size_t>(length));
	position += static_cast<size_t>(length);
	return true;
}

//! The header's metadata (a map of bytes), its codec alone kept; false when it does not parse.
bool ReadCodec(const std::string &bytes, size_t &position, std::string &codec) {
	codec = "null";
	while (true) {
		int64_t count;
		if (!ReadLong(bytes, position, count)) {
			return false;
		}
		if (count == 0) {
			return true;
		}
		if (count < 0) { // a block that gives its size in bytes too
			int64_t size;
			if (!ReadLong(bytes, position, size)) {
				return false;
			}
			count = -count;
		}
		for (int64_t i = 0; i < count; i++) {
			std::string key, value;
			if (!ReadBytes(bytes, position, key) || !ReadBytes(bytes, position, value)) {
				return false;
			}
			if (key == "avro.codec") {
				codec = value;
			}
		}
	}
}

bool EndsWith(const std::string &text, const std::string &suffix) {
	return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

//! Calls `found` with each string in `data` (a block's records) that begins with `prefix`, ends with `suffix` and
//! whose length is the long just before it (1 to 3 bytes), with the position just after it.
void FindStrings(const std::string &data, const std::string &prefix, const std::string &suffix,
                 const std::function<void(std::string path, size_t after)> &found) {
	for (size_t start = data.find(prefix); start != std::string::npos; start = data.find(prefix, start + 1)) {
		for (size_t width = 1; width <= 3 && width <= start; width++) {
			size_t position = start - width;
			int64_t length;
			if (!ReadLong(data, position, length) || position != start || length <= 0 ||
			    static_cast<uint64_t>(length) > data.size() - start) {
				continue;
			}
			auto path = data.substr(start, static_cast<size_t>(length));
			bool printable = true;
			for (auto c : path) {
				printable = printable && static_cast<uint8_t>(c) >= 0x20 && c != 0x7f;
			}
			if (!printable || !EndsWith(path, suffix)) {
				continue;
			}
			found(std::move(path), start + static_cast<size_t>(length));
			break;
		}
	}
}

//! Calls `visit` with the records of each block of the Avro container file in `bytes` (inflated); false when it is
//! not one of the null or deflate codec, or a block does not inflate.
bool ForEachBlock(const std::string &bytes, const ManifestList::Inflater &inflate,
                  const std::function<void(const std::string &records)> &visit) {
	if (bytes.size() < sizeof(MAGIC) + SYNC_BYTES ||
	    bytes.compare(0, sizeof(MAGIC), std::string(MAGIC, sizeof(MAGIC))) != 0) {
		return false;
	}
	size_t position = sizeof(MAGIC);
	std::string codec;
	if (!ReadCodec(bytes, position, codec) || (codec != "null" && codec != "deflate") ||
	    bytes.size() - position < SYNC_BYTES) {
		return false;
	}
	auto sync = bytes.substr(position, SYNC_BYTES);
	position += SYNC_BYTES;
	while (position < bytes.size()) {
		int64_t objects;
		std::string block;
		if (!ReadLong(bytes, position, objects) || objects < 0 || !ReadBytes(bytes, position, block) ||
		    bytes.size() - position < SYNC_BYTES || bytes.compare(position, SYNC_BYTES, sync) != 0) {
			return false;
		}
		position += SYNC_BYTES;
		if (codec == "deflate") {
			std::string inflated;
			if (!inflate || !inflate(block.data(), block.size(), inflated)) {
				return false;
			}
			block = std::move(inflated);
		}
		visit(block);
	}
	return true;
}
} // namespace

bool ManifestList::IsManifestList(const std::string &path) {
	auto slash = path.find_last_of('/');
	auto name = slash == std::string::npos ? path : path.substr(slash + 1);
	return name.compare(0, 5, "snap-") == 0 && EndsWith(name, ".avro");
}

std::string ManifestList::SchemeAndAuthority(const std::string &path) {
	auto scheme_end = path.find("://");
	if (scheme_end == std::string::npos) {
		return std::string();
	}
	auto authority_end = path.find('/', scheme_end + 3);
	if (authority_end == std::string::npos || authority_end == scheme_end + 3) {
		return std::string();
	}
	return path.substr(0, authority_end + 1);
}

std::vector<ListedManifest> ManifestList::Read(const std::string &bytes, const std::string &prefix,
                                               const Inflater &inflate) {
	std::vector<ListedManifest> found;
	std::unordered_set<std::string> seen;
	auto walked = !prefix.empty() && ForEachBlock(bytes, inflate, [&](const std::string &records) {
		// Each record: manifest_path, then manifest_length (a positive long).
		FindStrings(records, prefix, ".avro", [&](std::string path, size_t after) {
			int64_t length;
			if (ReadLong(records, after, length) && length > 0 && seen.count(path) == 0) {
				seen.insert(path);
				found.push_back(ListedManifest {std::move(path), static_cast<uint64_t>(length)});
			}
		});
	});
	return walked ? found : std::vector<ListedManifest>();
}

std::vector<std::string> ManifestList::DataFiles(const std::string &bytes, const std::string &prefix,
                                                 const Inflater &inflate) {
	std::vector<std::string> found;
	std::unordered_set<std::string> seen;
	auto walked = !prefix.empty() && ForEachBlock(bytes, inflate, [&](const std::string &records) {
		FindStrings(records, prefix, ".parquet", [&](std::string path, size_t) {
			if (seen.insert(path).second) {
				found.push_back(std::move(path));
			}
		});
	});
	return walked ? found : std::vector<std::string>();
}

} // namespace httpfs2
