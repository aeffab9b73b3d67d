#include "core/cache/crc32c.hpp"

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

} // namespace

uint32_t Crc32c(const char *data, uint64_t length, uint32_t crc) {
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
