#include "core/cache/crc32c.hpp"

#include <cstring>

namespace httpfs2 {

namespace {

//! Reflected form of the Castagnoli polynomial 0x1EDC6F41.
constexpr uint32_t CASTAGNOLI = 0x82F63B78;

//! table[k][b]: the CRC of byte b followed by k zero bytes, so eight bytes are folded in with eight lookups.
struct SlicingTables {
	uint32_t table[8][256];

	SlicingTables() {
		for (uint32_t byte = 0; byte < 256; byte++) {
			uint32_t crc = byte;
			for (int bit = 0; bit < 8; bit++) {
				crc = (crc >> 1) ^ (crc & 1 ? CASTAGNOLI : 0);
			}
			table[0][byte] = crc;
		}
		for (uint32_t byte = 0; byte < 256; byte++) {
			for (int slice = 1; slice < 8; slice++) {
				uint32_t previous = table[slice - 1][byte];
				table[slice][byte] = (previous >> 8) ^ table[0][previous & 0xFF];
			}
		}
	}
};

const SlicingTables &Tables() {
	static const SlicingTables tables;
	return tables;
}

uint32_t LoadLittleEndian32(const unsigned char *bytes) {
	return uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 | uint32_t(bytes[2]) << 16 | uint32_t(bytes[3]) << 24;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
//! SSE4.2's crc32 instruction computes CRC-32C: eight bytes in a few cycles, several times the tables' speed, which
//! matters where every block written and read is checked (the cache's writer and warm reads).
__attribute__((target("sse4.2"))) uint32_t Crc32cInstruction(const unsigned char *bytes, uint64_t length,
                                                             uint32_t crc) {
	uint64_t wide = crc;
	for (; length >= 8; length -= 8, bytes += 8) {
		uint64_t word;
		std::memcpy(&word, bytes, sizeof(word)); // little-endian, as the tables read it
		wide = __builtin_ia32_crc32di(wide, word);
	}
	crc = static_cast<uint32_t>(wide);
	for (; length > 0; length--, bytes++) {
		crc = __builtin_ia32_crc32qi(crc, *bytes);
	}
	return crc;
}

bool HasCrc32cInstruction() {
	static const bool has = __builtin_cpu_supports("sse4.2");
	return has;
}
#else
uint32_t Crc32cInstruction(const unsigned char *, uint64_t, uint32_t crc) {
	return crc;
}

bool HasCrc32cInstruction() {
	return false;
}
#endif

} // namespace

uint32_t Crc32c(const char *data, uint64_t length, uint32_t crc) {
	auto bytes = reinterpret_cast<const unsigned char *>(data);
	if (HasCrc32cInstruction()) {
		return ~Crc32cInstruction(bytes, length, ~crc);
	}
	return Crc32cTables(data, length, crc);
}

uint32_t Crc32cTables(const char *data, uint64_t length, uint32_t crc) {
	auto &table = Tables().table;
	auto bytes = reinterpret_cast<const unsigned char *>(data);
	crc = ~crc;
	for (; length >= 8; length -= 8, bytes += 8) {
		uint32_t low = LoadLittleEndian32(bytes) ^ crc;
		uint32_t high = LoadLittleEndian32(bytes + 4);
		crc = table[7][low & 0xFF] ^ table[6][(low >> 8) & 0xFF] ^ table[5][(low >> 16) & 0xFF] ^ table[4][low >> 24] ^
		      table[3][high & 0xFF] ^ table[2][(high >> 8) & 0xFF] ^ table[1][(high >> 16) & 0xFF] ^
		      table[0][high >> 24];
	}
	for (; length > 0; length--, bytes++) {
		crc = (crc >> 8) ^ table[0][(crc ^ *bytes) & 0xFF];
	}
	return ~crc;
}

} // namespace httpfs2
