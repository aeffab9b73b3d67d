#include "core/read_ahead/manifest_list.hpp"

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

//! The (manifest_path, manifest_length) pairs in one block's records: each string under `prefix` that ends in
//! ".avro", whose length is the long just before it and which a positive long follows.
void FindManifests(const std::string &data, const std::string &prefix, std::unordered_set<std::string> &seen,
                   std::vector<ListedManifest> &found) {
	for (size_t start = data.find(prefix); start != std::string::npos; start = data.find(prefix, start + 1)) {
		for (size_t width = 1; width <= 3 && width <= start; width++) {
			size_t position = start - width;
			int64_t length;
			if (!ReadLong(data, position, length) || position != start || length <= 0 ||
			    static_cast<uint64_t>(length) > data.size() - start) {
				continue;
			}
			auto path = data.substr(start, static_cast<size_t>(length));
			position = start + path.size();
			int64_t manifest_length;
			bool printable = true;
			for (auto c : path) {
				printable = printable && static_cast<uint8_t>(c) >= 0x20 && c != 0x7f;
			}
			if (!printable || !EndsWith(path, ".avro") || !ReadLong(data, position, manifest_length) ||
			    manifest_length <= 0) {
				continue;
			}
			if (seen.insert(path).second) {
				found.push_back(ListedManifest {path, static_cast<uint64_t>(manifest_length)});
			}
			break;
		}
	}
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
	if (prefix.empty() || bytes.size() < sizeof(MAGIC) + SYNC_BYTES ||
	    bytes.compare(0, sizeof(MAGIC), std::string(MAGIC, sizeof(MAGIC))) != 0) {
		return found;
	}
	size_t position = sizeof(MAGIC);
	std::string codec;
	if (!ReadCodec(bytes, position, codec) || (codec != "null" && codec != "deflate") ||
	    bytes.size() - position < SYNC_BYTES) {
		return found;
	}
	auto sync = bytes.substr(position, SYNC_BYTES);
	position += SYNC_BYTES;
	std::unordered_set<std::string> seen;
	while (position < bytes.size()) {
		int64_t objects;
		std::string block;
		if (!ReadLong(bytes, position, objects) || objects < 0 || !ReadBytes(bytes, position, block) ||
		    bytes.size() - position < SYNC_BYTES || bytes.compare(position, SYNC_BYTES, sync) != 0) {
			return {};
		}
		position += SYNC_BYTES;
		if (codec == "deflate") {
			std::string inflated;
			if (!inflate || !inflate(block.data(), block.size(), inflated)) {
				return {};
			}
			block = std::move(inflated);
		}
		FindManifests(block, prefix, seen, found);
	}
	return found;
}

} // namespace httpfs2
