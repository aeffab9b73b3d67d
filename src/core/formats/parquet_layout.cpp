#include "core/formats/parquet_layout.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <initializer_list>

namespace httpfs2 {

namespace {

//! Type nibbles of Thrift's compact protocol. DuckDB's Thrift knows no others (no UUID), so neither do we.
enum CompactType : uint8_t {
	CT_STOP = 0,
	CT_BOOLEAN_TRUE = 1,
	CT_BOOLEAN_FALSE = 2,
	CT_BYTE = 3,
	CT_I16 = 4,
	CT_I32 = 5,
	CT_I64 = 6,
	CT_DOUBLE = 7,
	CT_BINARY = 8,
	CT_LIST = 9,
	CT_SET = 10,
	CT_MAP = 11,
	CT_STRUCT = 12
};

//! Parquet metadata nests about ten levels deep; this bounds the stack on hostile input (Thrift's default limit).
constexpr int MAX_DEPTH = 64;
//! A varint of more than 10 bytes does not fit 64 bits; Thrift rejects it.
constexpr int MAX_VARINT_BYTES = 10;

//! A field header, or a required field of a struct: Thrift's generated readers fail the whole metadata when one is
//! missing (or comes with another type, which they skip), and so does DuckDB, so a footer lacking one is malformed.
struct FieldHeader {
	int16_t id;
	uint8_t type;
};

bool IsKnownType(uint8_t type) {
	return type >= CT_BOOLEAN_TRUE && type <= CT_STRUCT;
}

//! Reads Thrift compact values from a bounded buffer. Every read checks the bytes left; the first failure is kept.
class CompactReader {
public:
	CompactReader(const uint8_t *data_p, uint64_t length) : data(data_p), position(data_p), end(data_p + length) {
	}

	bool Fail(const std::string &reason) {
		if (error.empty()) {
			error = reason + " at metadata byte " + std::to_string(position - data);
		}
		return false;
	}

	uint64_t Remaining() const {
		return static_cast<uint64_t>(end - position);
	}

	bool ReadByte(uint8_t &out) {
		if (position == end) {
			return Fail("metadata ends early");
		}
		out = *position++;
		return true;
	}

	bool SkipBytes(uint64_t count) {
		if (count > Remaining()) {
			return Fail("metadata ends early");
		}
		position += count;
		return true;
	}

	bool ReadVarint(uint64_t &out) {
		out = 0;
		for (int i = 0; i < MAX_VARINT_BYTES; i++) {
			uint8_t byte = 0;
			if (!ReadByte(byte)) {
				return false;
			}
			out |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
			if ((byte & 0x80) == 0) {
				return true;
			}
		}
		return Fail("varint longer than 10 bytes");
	}

	//! A zigzag integer (i16, i32 or i64), as the two's complement bits of its value: DuckDB casts Parquet's signed
	//! offsets and sizes to idx_t the same way.
	bool ReadZigzag(uint64_t &out) {
		uint64_t raw;
		if (!ReadVarint(raw)) {
			return false;
		}
		out = (raw >> 1) ^ (~(raw & 1) + 1);
		return true;
	}

	//! The next field of the current struct; CT_STOP ends it. `last_id` is the base of the compact id deltas.
	bool ReadFieldHeader(int16_t &last_id, FieldHeader &field) {
		uint8_t byte = 0;
		if (!ReadByte(byte)) {
			return false;
		}
		field.type = byte & 0x0F;
		if (field.type == CT_STOP) {
			field.id = 0;
			return true;
		}
		if (!IsKnownType(field.type)) {
			return Fail("unknown Thrift field type " + std::to_string(field.type));
		}
		uint8_t delta = byte >> 4;
		if (delta == 0) {
			uint64_t id;
			if (!ReadZigzag(id)) {
				return false;
			}
			field.id = static_cast<int16_t>(id);
		} else {
			field.id = static_cast<int16_t>(last_id + delta);
		}
		last_id = field.id;
		return true;
	}

	//! A list or set header. Every element takes at least one byte, so a size beyond the bytes left is malformed.
	bool ReadListHeader(uint8_t &element_type, uint64_t &size) {
		uint8_t byte = 0;
		if (!ReadByte(byte)) {
			return false;
		}
		element_type = byte & 0x0F;
		size = byte >> 4;
		if (size == 15 && !ReadVarint(size)) {
			return false;
		}
		if (size > Remaining()) {
			return Fail("list of " + std::to_string(size) + " elements in " + std::to_string(Remaining()) + " bytes");
		}
		if (size > 0 && !IsKnownType(element_type)) {
			return Fail("unknown Thrift element type " + std::to_string(element_type));
		}
		return true;
	}

	//! Skips one value of any type. Booleans take no bytes as struct fields (the type carries them) but one byte as
	//! collection elements.
	bool SkipValue(uint8_t type, bool in_collection, int depth) {
		if (depth > MAX_DEPTH) {
			return Fail("metadata nests deeper than " + std::to_string(MAX_DEPTH));
		}
		uint64_t value;
		switch (type) {
		case CT_BOOLEAN_TRUE:
		case CT_BOOLEAN_FALSE:
			return !in_collection || SkipBytes(1);
		case CT_BYTE:
			return SkipBytes(1);
		case CT_I16:
		case CT_I32:
		case CT_I64:
			return ReadVarint(value);
		case CT_DOUBLE:
			return SkipBytes(8);
		case CT_BINARY:
			return ReadVarint(value) && SkipBytes(value);
		case CT_LIST:
		case CT_SET: {
			uint8_t element_type;
			if (!ReadListHeader(element_type, value)) {
				return false;
			}
			for (uint64_t i = 0; i < value; i++) {
				if (!SkipValue(element_type, true, depth + 1)) {
					return false;
				}
			}
			return true;
		}
		case CT_MAP:
			return SkipMap(depth);
		case CT_STRUCT:
			return SkipStruct(depth + 1);
		default:
			return Fail("unknown Thrift type " + std::to_string(type));
		}
	}

	bool SkipStruct(int depth);

	std::string error;

private:
	bool SkipMap(int depth) {
		uint64_t size;
		if (!ReadVarint(size)) {
			return false;
		}
		if (size == 0) {
			return true;
		}
		uint8_t types = 0;
		if (!ReadByte(types)) {
			return false;
		}
		if (size > Remaining() / 2) {
			return Fail("map of " + std::to_string(size) + " entries in " + std::to_string(Remaining()) + " bytes");
		}
		uint8_t key_type = types >> 4;
		uint8_t value_type = types & 0x0F;
		for (uint64_t i = 0; i < size; i++) {
			if (!SkipValue(key_type, true, depth + 1) || !SkipValue(value_type, true, depth + 1)) {
				return false;
			}
		}
		return true;
	}

	const uint8_t *data;
	const uint8_t *position;
	const uint8_t *end;
};

//! Reads the fields of one struct up to its stop byte: `handle_field` consumes each field's value (skipping the ones
//! it does not want), then the struct fails unless every field of `required` came with its declared type.
template <class HANDLER>
bool ReadStruct(CompactReader &reader, int depth, const char *name, std::initializer_list<FieldHeader> required,
                HANDLER &&handle_field) {
	if (depth > MAX_DEPTH) {
		return reader.Fail("metadata nests deeper than " + std::to_string(MAX_DEPTH));
	}
	uint32_t seen = 0; // bit i: required[i] arrived; Parquet's structs have fewer than 32 required fields
	int16_t last_id = 0;
	while (true) {
		FieldHeader field {0, CT_STOP};
		if (!reader.ReadFieldHeader(last_id, field)) {
			return false;
		}
		if (field.type == CT_STOP) {
			break;
		}
		uint32_t bit = 1;
		for (auto &spec : required) {
			seen |= (spec.id == field.id && spec.type == field.type) ? bit : 0;
			bit <<= 1;
		}
		if (!handle_field(field)) {
			return false;
		}
	}
	uint32_t bit = 1;
	for (auto &spec : required) {
		if ((seen & bit) == 0) {
			return reader.Fail(std::string(name) + " lacks required field " + std::to_string(spec.id));
		}
		bit <<= 1;
	}
	return true;
}

bool CompactReader::SkipStruct(int depth) {
	return ReadStruct(*this, depth, "struct", {},
	                  [&](const FieldHeader &field) { return SkipValue(field.type, false, depth + 1); });
}

//! Reads a list field whose elements are structs, calling `read_element` for each.
template <class READER>
bool ReadStructList(CompactReader &reader, int depth, const char *name, READER &&read_element) {
	uint8_t element_type;
	uint64_t size;
	if (!reader.ReadListHeader(element_type, size)) {
		return false;
	}
	if (size > 0 && element_type != CT_STRUCT) {
		return reader.Fail(std::string(name) + " is not a list of structs");
	}
	for (uint64_t i = 0; i < size; i++) {
		if (!read_element(depth + 1)) {
			return false;
		}
	}
	return true;
}

//! The ColumnMetaData fields DuckDB derives a chunk's range from, as idx_t bits of Parquet's i64 values.
struct ChunkOffsets {
	uint64_t data_page_offset = 0;
	uint64_t total_compressed_size = 0;
	bool has_index_page = false;
	uint64_t index_page_offset = 0;
	bool has_dictionary_page = false;
	uint64_t dictionary_page_offset = 0;
	uint64_t bloom_filter_offset = 0;
	uint64_t bloom_filter_length = 0;

	//! ColumnReader::FileOffset: the lowest page offset that is set, whichever page kind it is.
	uint64_t Start() const {
		uint64_t start = data_page_offset;
		if (has_dictionary_page) {
			start = std::min(start, dictionary_page_offset);
		}
		if (has_index_page) {
			start = std::min(start, index_page_offset);
		}
		return start;
	}
};

//! Walks FileMetaData down to the ColumnMetaData of every chunk and skips everything else. The required fields
//! listed are the ones DuckDB's generated Thrift readers insist on for these four structs.
class LayoutParser {
public:
	LayoutParser(const uint8_t *data, uint64_t length, uint64_t file_size_p)
	    : reader(data, length), file_size(file_size_p) {
	}

	bool ReadFileMetaData(ParquetLayout &layout) {
		auto handle_field = [&](const FieldHeader &field) {
			if (field.id == 4 && field.type == CT_LIST) {
				layout.row_groups.clear();
				return ReadStructList(reader, 1, "FileMetaData.row_groups",
				                      [&](int depth) { return ReadRowGroup(depth, layout); });
			}
			return reader.SkipValue(field.type, false, 1);
		};
		// version, schema, num_rows, row_groups
		return ReadStruct(reader, 0, "FileMetaData", {{1, CT_I32}, {2, CT_LIST}, {3, CT_I64}, {4, CT_LIST}},
		                  handle_field);
	}

	const std::string &Error() const {
		return reader.error;
	}

private:
	bool ReadRowGroup(int depth, ParquetLayout &layout) {
		if (layout.row_groups.size() >= ParquetFooter::MAX_COLUMN_CHUNKS) {
			return reader.Fail("more than " + std::to_string(ParquetFooter::MAX_COLUMN_CHUNKS) + " row groups");
		}
		RowGroupLayout row_group;
		uint64_t total_compressed_size = 0;
		auto handle_field = [&](const FieldHeader &field) {
			if (field.id == 1 && field.type == CT_LIST) {
				row_group.columns.clear();
				row_group.bloom_filters.clear();
				return ReadStructList(reader, depth + 1, "RowGroup.columns", [&](int element_depth) {
					return ReadColumnChunk(element_depth, layout.row_groups.size(), row_group);
				});
			}
			if (field.id == 6 && field.type == CT_I64) {
				return reader.ReadZigzag(total_compressed_size);
			}
			return reader.SkipValue(field.type, false, depth + 1);
		};
		// columns, total_byte_size, num_rows
		if (!ReadStruct(reader, depth, "RowGroup", {{1, CT_LIST}, {2, CT_I64}, {3, CT_I64}}, handle_field)) {
			return false;
		}
		row_group.span = GroupSpan(row_group.columns, total_compressed_size);
		layout.row_groups.push_back(std::move(row_group));
		return true;
	}

	//! ParquetReader::GetGroupOffset and GetGroupSpan, read only when GetGroupCompressedSize is not 0.
	static ByteRange GroupSpan(const std::vector<ByteRange> &columns, uint64_t total_compressed_size) {
		if (columns.empty()) {
			return ByteRange {0, 0};
		}
		uint64_t start = columns[0].offset;
		uint64_t end = columns[0].End();
		uint64_t compressed = total_compressed_size;
		for (auto &column : columns) {
			start = std::min(start, column.offset);
			end = std::max(end, column.End());
			// DuckDB sums the chunks only when the row group's own total_compressed_size is absent or 0
			if (total_compressed_size == 0) {
				compressed += column.length;
			}
		}
		return ByteRange {start, compressed == 0 ? 0 : end - start};
	}

	bool ReadColumnChunk(int depth, size_t row_group_index, RowGroupLayout &row_group) {
		ChunkOffsets chunk;
		bool has_metadata = false;
		auto handle_field = [&](const FieldHeader &field) {
			if (field.id == 1 && field.type == CT_BINARY) {
				// DuckDB refuses chunks stored in another file (file_path), so the file is never scanned
				return reader.Fail("column chunk stored in another file");
			}
			if (field.id == 3 && field.type == CT_STRUCT) {
				has_metadata = true;
				return ReadColumnMetaData(depth + 1, chunk);
			}
			return reader.SkipValue(field.type, false, depth + 1);
		};
		// file_offset
		if (!ReadStruct(reader, depth, "ColumnChunk", {{2, CT_I64}}, handle_field)) {
			return false;
		}
		std::string name = "column chunk " + std::to_string(row_group.columns.size()) + " of row group " +
		                   std::to_string(row_group_index);
		if (!has_metadata) {
			// files with encrypted columns carry encrypted_column_metadata instead, which DuckDB cannot read
			return reader.Fail(name + " has no meta_data");
		}
		ByteRange range {chunk.Start(), chunk.total_compressed_size};
		if (range.length > file_size || range.offset > file_size - range.length) {
			return reader.Fail(name + " at " + std::to_string(range.offset) + " (" + std::to_string(range.length) +
			                   " bytes) lies outside the file of " + std::to_string(file_size) + " bytes");
		}
		if (++chunk_count > ParquetFooter::MAX_COLUMN_CHUNKS) {
			return reader.Fail("more than " + std::to_string(ParquetFooter::MAX_COLUMN_CHUNKS) + " column chunks");
		}
		row_group.columns.push_back(range);
		// Parquet's i64 and i32 as idx_t bits: a negative offset or length is huge and falls outside the file.
		ByteRange bloom {chunk.bloom_filter_offset, chunk.bloom_filter_length};
		bool bloom_inside = bloom.offset > 0 && bloom.length > 0 && bloom.length <= file_size &&
		                    bloom.offset <= file_size - bloom.length;
		row_group.bloom_filters.push_back(bloom_inside ? bloom : ByteRange {0, 0});
		return true;
	}

	bool ReadColumnMetaData(int depth, ChunkOffsets &chunk) {
		auto handle_field = [&](const FieldHeader &field) {
			if (field.type == CT_I64) {
				switch (field.id) {
				case 7:
					return reader.ReadZigzag(chunk.total_compressed_size);
				case 9:
					return reader.ReadZigzag(chunk.data_page_offset);
				case 10:
					chunk.has_index_page = true;
					return reader.ReadZigzag(chunk.index_page_offset);
				case 11:
					chunk.has_dictionary_page = true;
					return reader.ReadZigzag(chunk.dictionary_page_offset);
				case 14:
					return reader.ReadZigzag(chunk.bloom_filter_offset);
				default:
					break;
				}
			}
			if (field.type == CT_I32 && field.id == 15) {
				return reader.ReadZigzag(chunk.bloom_filter_length);
			}
			return reader.SkipValue(field.type, false, depth + 1);
		};
		// type, encodings, path_in_schema, codec, num_values, total_uncompressed_size, total_compressed_size,
		// data_page_offset
		return ReadStruct(
		    reader, depth, "ColumnMetaData",
		    {{1, CT_I32}, {2, CT_LIST}, {3, CT_LIST}, {4, CT_I32}, {5, CT_I64}, {6, CT_I64}, {7, CT_I64}, {9, CT_I64}},
		    handle_field);
	}

	CompactReader reader;
	uint64_t file_size;
	uint64_t chunk_count = 0;
};

uint32_t LoadLittleEndian32(const char *bytes) {
	uint32_t value = 0;
	for (int i = 3; i >= 0; i--) {
		value = (value << 8) | static_cast<uint8_t>(bytes[i]);
	}
	return value;
}

//! DuckDB's NextPowerOfTwo (constants.cpp) for the values it is used with here (1 and above).
uint64_t NextPowerOfTwo(uint64_t value) {
	uint64_t power = 1;
	while (power < value) {
		power <<= 1;
	}
	return power;
}

} // namespace

constexpr uint64_t ParquetFooter::TRAILER_SIZE;
constexpr uint64_t ParquetFooter::MAX_COLUMN_CHUNKS;

bool ParquetFooter::ParseTrailer(const char *trailer, uint64_t file_size, uint32_t &metadata_length) {
	if (std::memcmp(trailer + 4, "PAR1", 4) != 0) {
		return false;
	}
	uint32_t length = LoadLittleEndian32(trailer);
	// DuckDB's ParseParquetFooter: the metadata, the trailer and the leading magic must all fit
	if (length == 0 || file_size < 12 || length > file_size - 12) {
		return false;
	}
	metadata_length = length;
	return true;
}

bool ParquetFooter::ParseLayout(const char *metadata, uint64_t length, uint64_t file_size, ParquetLayout &layout,
                                std::string &error) {
	LayoutParser parser(reinterpret_cast<const uint8_t *>(metadata), length, file_size);
	ParquetLayout parsed;
	if (!parser.ReadFileMetaData(parsed)) {
		error = parser.Error();
		return false;
	}
	layout = std::move(parsed);
	return true;
}

uint64_t ParquetFooter::DuckDBTailReadSize(uint64_t file_size) {
	// LoadMetadata in DuckDB's parquet_reader.cpp: a 1/1000 of the file, clamped, so small files take one round trip
	static constexpr uint64_t ESTIMATED_FOOTER_RATIO = 1000;
	static constexpr uint64_t MIN_PREFETCH_SIZE = 16384;
	static constexpr uint64_t MAX_PREFETCH_SIZE = 262144;
	if (file_size < 12) {
		return 0;
	}
	uint64_t size = std::min(std::max(file_size / ESTIMATED_FOOTER_RATIO, MIN_PREFETCH_SIZE), MAX_PREFETCH_SIZE);
	return std::min(NextPowerOfTwo(size), file_size);
}

bool IsParquetPath(const std::string &path) {
	static const std::string suffix = ".parquet";
	if (path.size() < suffix.size()) {
		return false;
	}
	return std::equal(
	    suffix.begin(), suffix.end(), path.end() - static_cast<std::ptrdiff_t>(suffix.size()),
	    [](char expected, char actual) { return expected == std::tolower(static_cast<unsigned char>(actual)); });
}

} // namespace httpfs2
