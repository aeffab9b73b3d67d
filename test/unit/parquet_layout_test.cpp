#include "core/formats/parquet_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>

using namespace httpfs2;

namespace {

std::string DataPath(const std::string &name) {
	return std::string(HTTPFS2_TEST_DATA_DIR) + "/" + name;
}

std::string ReadFile(const std::string &name) {
	std::ifstream in(DataPath(name), std::ios::binary);
	EXPECT_TRUE(in.good()) << "cannot open " << DataPath(name);
	std::ostringstream bytes;
	bytes << in.rdbuf();
	return bytes.str();
}

struct ExpectedFile {
	uint64_t size = 0;
	ParquetLayout layout;
};

ByteRange ParseRange(const std::string &token) {
	auto colon = token.find(':');
	return ByteRange {std::stoull(token.substr(0, colon)), std::stoull(token.substr(colon + 1))};
}

//! parquet_layouts.txt, written by make_parquet_fixtures.py from DuckDB's parquet_metadata().
std::map<std::string, ExpectedFile> LoadExpectedLayouts() {
	std::map<std::string, ExpectedFile> files;
	std::ifstream in(DataPath("parquet_layouts.txt"));
	EXPECT_TRUE(in.good());
	std::string line;
	ExpectedFile *current = nullptr;
	while (std::getline(in, line)) {
		std::istringstream words(line);
		std::string kind, name, token;
		words >> kind;
		if (kind == "file") {
			words >> name;
			current = &files[name];
			words >> current->size;
		} else if (kind == "row_group" && current) {
			RowGroupLayout row_group;
			words >> token >> token >> token; // index, "span", range
			row_group.span = ParseRange(token);
			words >> token; // "columns"
			while (words >> token) {
				row_group.columns.push_back(ParseRange(token));
			}
			current->layout.row_groups.push_back(row_group);
		}
	}
	return files;
}

//! The metadata bytes of a Parquet file, found through its trailer as DuckDB finds them.
std::string Metadata(const std::string &file) {
	uint32_t length = 0;
	EXPECT_TRUE(ParquetFooter::ParseTrailer(file.data() + file.size() - 8, file.size(), length));
	return file.substr(file.size() - 8 - length, length);
}

//! Parses from a heap copy of exactly `bytes`, so ASan reports any read past its end.
bool Parse(const std::string &bytes, uint64_t file_size, ParquetLayout &layout, std::string &error) {
	std::unique_ptr<char[]> copy(new char[bytes.size() + 1]);
	std::memcpy(copy.get(), bytes.data(), bytes.size());
	return ParquetFooter::ParseLayout(copy.get(), bytes.size(), file_size, layout, error);
}

void ExpectSameRange(const ByteRange &actual, const ByteRange &expected, const std::string &what) {
	EXPECT_EQ(actual.offset, expected.offset) << what;
	EXPECT_EQ(actual.length, expected.length) << what;
}

void ExpectInside(const ByteRange &range, uint64_t file_size, const std::string &what) {
	EXPECT_LE(range.offset, file_size) << what;
	EXPECT_LE(range.length, file_size - std::min(range.offset, file_size)) << what;
}

//! What any layout the parser returns must satisfy, right or wrong: every range inside the file, one bloom filter entry
//! per column chunk (none, or a real range), and each row group's span the hull of its chunks, as DuckDB's
//! GetGroupSpan, or empty.
void ExpectSoundLayout(const ParquetLayout &layout, uint64_t file_size, const std::string &what) {
	for (size_t group = 0; group < layout.row_groups.size(); group++) {
		auto &row_group = layout.row_groups[group];
		auto where = what + " row group " + std::to_string(group);
		ExpectInside(row_group.span, file_size, where + " span");
		ASSERT_EQ(row_group.bloom_filters.size(), row_group.columns.size()) << where;
		uint64_t start = UINT64_MAX, end = 0;
		for (size_t column = 0; column < row_group.columns.size(); column++) {
			auto &chunk = row_group.columns[column];
			auto &filter = row_group.bloom_filters[column];
			ExpectInside(chunk, file_size, where + " column " + std::to_string(column));
			ExpectInside(filter, file_size, where + " bloom filter " + std::to_string(column));
			EXPECT_EQ(filter.offset == 0, filter.length == 0) << where << " bloom filter " << column;
			start = std::min(start, chunk.offset);
			end = std::max(end, chunk.End());
		}
		if (row_group.columns.empty() || row_group.span.length == 0) {
			EXPECT_EQ(row_group.span.length, 0u) << where;
			continue;
		}
		EXPECT_EQ(row_group.span.offset, start) << where;
		EXPECT_EQ(row_group.span.End(), end) << where;
	}
}

//! A failure says why and at which byte of the input, a byte that exists.
void ExpectFailureSaysWhere(const std::string &error, uint64_t input_size, const std::string &what) {
	static const std::string AT = " at metadata byte ";
	auto at = error.rfind(AT);
	ASSERT_NE(at, std::string::npos) << what << ": " << error;
	EXPECT_GT(at, 0u) << what << ": no reason in " << error;
	auto position = error.substr(at + AT.size());
	ASSERT_FALSE(position.empty()) << what << ": " << error;
	ASSERT_EQ(position.find_first_not_of("0123456789"), std::string::npos) << what << ": " << error;
	EXPECT_LE(std::stoull(position), input_size) << what << ": " << error;
}

//! Parses damaged or random `bytes` and checks what must hold either way: a success gives a sound layout, a failure
//! says where and leaves the caller's layout as it was. True when the bytes parsed.
bool ParseDamaged(const std::string &bytes, uint64_t file_size, const std::string &what) {
	ParquetLayout layout;
	layout.row_groups.resize(3); // what the caller held before: a failed parse must not touch it
	std::string error;
	if (Parse(bytes, file_size, layout, error)) {
		ExpectSoundLayout(layout, file_size, what);
		return true;
	}
	ExpectFailureSaysWhere(error, bytes.size(), what);
	EXPECT_EQ(layout.row_groups.size(), 3u) << what << ": a failed parse changed the layout";
	return false;
}

} // namespace

TEST(ParquetLayout, MatchesDuckDBMetadataOfEveryFixture) {
	auto expected_files = LoadExpectedLayouts();
	ASSERT_EQ(expected_files.size(), 4u);
	for (auto &entry : expected_files) {
		auto file = ReadFile(entry.first);
		ASSERT_EQ(file.size(), entry.second.size)
		    << entry.first << " differs from parquet_layouts.txt: rerun the script";
		ParquetLayout layout;
		std::string error;
		ASSERT_TRUE(Parse(Metadata(file), file.size(), layout, error)) << entry.first << ": " << error;
		auto &expected = entry.second.layout.row_groups;
		ASSERT_EQ(layout.row_groups.size(), expected.size()) << entry.first;
		for (size_t group = 0; group < expected.size(); group++) {
			auto where = entry.first + " row group " + std::to_string(group);
			ExpectSameRange(layout.row_groups[group].span, expected[group].span, where + " span");
			ASSERT_EQ(layout.row_groups[group].columns.size(), expected[group].columns.size()) << where;
			for (size_t column = 0; column < expected[group].columns.size(); column++) {
				ExpectSameRange(layout.row_groups[group].columns[column], expected[group].columns[column],
				                where + " column " + std::to_string(column));
			}
		}
	}
}

TEST(ParquetLayout, BloomFiltersAsDuckDBMetadataGivesThem) {
	// parquet_metadata('row_groups.parquet'): DuckDB wrote a 47-byte bloom filter for the dictionary-encoded
	// `category` column (column 1) of each row group, one after another after the row groups; none for the others.
	auto file = ReadFile("row_groups.parquet");
	ParquetLayout layout;
	std::string error;
	ASSERT_TRUE(Parse(Metadata(file), file.size(), layout, error)) << error;
	ASSERT_EQ(layout.row_groups.size(), 5u);
	for (size_t group = 0; group < layout.row_groups.size(); group++) {
		auto &filters = layout.row_groups[group].bloom_filters;
		ASSERT_EQ(filters.size(), 4u);
		for (size_t column = 0; column < filters.size(); column++) {
			auto expected = column == 1 ? ByteRange {99646 + 47 * group, 47} : ByteRange {0, 0};
			ExpectSameRange(filters[column], expected,
			                "bloom filter " + std::to_string(group) + "/" + std::to_string(column));
		}
	}
}

TEST(ParquetLayout, FixturesCoverRowGroupsNestingAndCompression) {
	auto expected = LoadExpectedLayouts();
	EXPECT_EQ(expected["row_groups.parquet"].layout.row_groups.size(), 5u);
	EXPECT_EQ(expected["single_row_group.parquet"].layout.row_groups.size(), 1u);
	EXPECT_EQ(expected["zstd.parquet"].layout.row_groups.size(), 2u);
	// id, s STRUCT(a, b), l INTEGER[]: three top-level columns, four leaf column chunks
	ASSERT_FALSE(expected["nested.parquet"].layout.row_groups.empty());
	EXPECT_EQ(expected["nested.parquet"].layout.row_groups[0].columns.size(), 4u);
}

TEST(ParquetFooter, TrailerOfARealFile) {
	auto file = ReadFile("row_groups.parquet");
	uint32_t length = 0;
	ASSERT_TRUE(ParquetFooter::ParseTrailer(file.data() + file.size() - 8, file.size(), length));
	EXPECT_GT(length, 0u);
	EXPECT_LE(length + 12u, file.size());
	EXPECT_EQ(file.substr(0, 4), "PAR1");
}

TEST(ParquetFooter, TrailerRejectsEncryptedAndForeignFiles) {
	uint32_t length = 0;
	EXPECT_FALSE(ParquetFooter::ParseTrailer("\x10\x00\x00\x00PARE", 1000, length));
	EXPECT_FALSE(ParquetFooter::ParseTrailer("\x10\x00\x00\x00PAR2", 1000, length));
	EXPECT_FALSE(ParquetFooter::ParseTrailer("\x10\x00\x00\x00par1", 1000, length));
	EXPECT_FALSE(ParquetFooter::ParseTrailer("\x00\x00\x00\x00\x00\x00\x00\x00", 1000, length));
}

TEST(ParquetFooter, TrailerRejectsLengthsThatDoNotFit) {
	uint32_t length = 0;
	// 1000 bytes hold at most 988 bytes of metadata: leading magic, metadata, length, trailing magic
	EXPECT_TRUE(ParquetFooter::ParseTrailer("\xdc\x03\x00\x00PAR1", 1000, length));
	EXPECT_EQ(length, 988u);
	EXPECT_FALSE(ParquetFooter::ParseTrailer("\xdd\x03\x00\x00PAR1", 1000, length));
	EXPECT_FALSE(ParquetFooter::ParseTrailer("\xe1\x03\x00\x00PAR1", 1000, length)); // > file_size - 8
	EXPECT_FALSE(ParquetFooter::ParseTrailer("\xff\xff\xff\xffPAR1", 1000, length));
	EXPECT_FALSE(ParquetFooter::ParseTrailer("\x00\x00\x00\x00PAR1", 1000, length));
	EXPECT_FALSE(ParquetFooter::ParseTrailer("\x01\x00\x00\x00PAR1", 8, length));
}

TEST(ParquetFooter, DuckDBTailReadSize) {
	const uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
	EXPECT_EQ(ParquetFooter::DuckDBTailReadSize(11), 0u);      // DuckDB rejects it unread
	EXPECT_EQ(ParquetFooter::DuckDBTailReadSize(5000), 5000u); // never past the start of the file
	EXPECT_EQ(ParquetFooter::DuckDBTailReadSize(16 * KiB), 16 * KiB);
	EXPECT_EQ(ParquetFooter::DuckDBTailReadSize(1 * MiB), 16 * KiB);
	EXPECT_EQ(ParquetFooter::DuckDBTailReadSize(20000000), 32 * KiB); // 20000 rounded up to a power of two
	EXPECT_EQ(ParquetFooter::DuckDBTailReadSize(100 * MiB), 128 * KiB);
	EXPECT_EQ(ParquetFooter::DuckDBTailReadSize(10 * GiB), 256 * KiB);
}

const char *const FIXTURES[] = {"row_groups.parquet", "nested.parquet", "single_row_group.parquet", "zstd.parquet"};

TEST(ParquetLayout, EveryTruncationFailsCleanly) {
	for (auto name : FIXTURES) {
		auto file = ReadFile(name);
		auto metadata = Metadata(file);
		ASSERT_TRUE(ParseDamaged(metadata, file.size(), name)) << "the whole footer parses";
		for (size_t length = 0; length < metadata.size(); length++) {
			// FileMetaData's last byte closes it, so no proper prefix is a whole FileMetaData
			ASSERT_FALSE(ParseDamaged(metadata.substr(0, length), file.size(),
			                          name + std::string(" prefix ") + std::to_string(length)));
		}
	}
}

TEST(ParquetLayout, EveryBitFlipOfAFooterFailsOrGivesASoundLayout) {
	for (auto name : FIXTURES) {
		auto file = ReadFile(name);
		auto metadata = Metadata(file);
		int parsed = 0, failed = 0;
		for (size_t byte = 0; byte < metadata.size(); byte++) {
			for (int bit = 0; bit < 8; bit++) {
				auto damaged = metadata;
				damaged[byte] = static_cast<char>(damaged[byte] ^ (1 << bit));
				auto what = std::string(name) + " byte " + std::to_string(byte) + " bit " + std::to_string(bit);
				(ParseDamaged(damaged, file.size(), what) ? parsed : failed)++;
			}
		}
		// Both outcomes must occur, or the checks above were never run on one of them: flips in statistics and
		// schema names are skipped; flips in field headers, lengths and required fields fail.
		EXPECT_GT(parsed, 0) << name;
		EXPECT_GT(failed, 0) << name;
	}
}

TEST(ParquetLayout, RandomByteFlipsNeverEscapeTheFile) {
	std::mt19937 random(20240611);
	for (auto name : {"row_groups.parquet", "nested.parquet", "zstd.parquet"}) {
		auto file = ReadFile(name);
		auto metadata = Metadata(file);
		int parsed = 0, failed = 0;
		for (int round = 0; round < 1500; round++) {
			auto damaged = metadata;
			int flips = 1 + static_cast<int>(random() % 4);
			for (int i = 0; i < flips; i++) {
				damaged[random() % damaged.size()] = static_cast<char>(random() & 0xFF);
			}
			(ParseDamaged(damaged, file.size(), name + std::string(" round ") + std::to_string(round)) ? parsed
			                                                                                           : failed)++;
		}
		EXPECT_GT(parsed, 0) << name;
		EXPECT_GT(failed, 0) << name;
	}
}

TEST(ParquetLayout, RandomGarbageFailsCleanly) {
	std::mt19937 random(7);
	int parsed = 0;
	for (int round = 0; round < 2000; round++) {
		std::string garbage(random() % 300, '\0');
		for (auto &byte : garbage) {
			byte = static_cast<char>(random() & 0xFF);
		}
		parsed += ParseDamaged(garbage, 1 << 20, "garbage round " + std::to_string(round));
	}
	// Random bytes are no FileMetaData: its four required fields (version, schema, num_rows, row_groups), each with
	// its type, do not come by chance.
	EXPECT_EQ(parsed, 0);
}

namespace {

enum : uint8_t { T_TRUE = 1, T_FALSE, T_BYTE, T_I16, T_I32, T_I64, T_DOUBLE, T_BINARY, T_LIST, T_SET, T_MAP, T_STRUCT };

//! Writes Thrift compact bytes by hand, for footers DuckDB never writes.
struct CompactWriter {
	std::string bytes;
	std::vector<int16_t> last_ids {0};

	void Byte(uint8_t value) {
		bytes.push_back(static_cast<char>(value));
	}
	void Varint(uint64_t value) {
		for (; value >= 0x80; value >>= 7) {
			Byte(static_cast<uint8_t>(value | 0x80));
		}
		Byte(static_cast<uint8_t>(value));
	}
	void Zigzag(int64_t value) {
		Varint((static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63));
	}
	void Field(int16_t id, uint8_t type) {
		int delta = id - last_ids.back();
		if (delta > 0 && delta <= 15) {
			Byte(static_cast<uint8_t>(delta << 4 | type));
		} else {
			Byte(type);
			Zigzag(id);
		}
		last_ids.back() = id;
	}
	void BeginStruct() {
		last_ids.push_back(0);
	}
	void EndStruct() {
		Byte(0);
		last_ids.pop_back();
	}
	void List(uint8_t type, uint64_t size) {
		if (size < 15) {
			Byte(static_cast<uint8_t>(size << 4 | type));
		} else {
			Byte(0xF0 | type);
			Varint(size);
		}
	}
	void Binary(const std::string &value) {
		Varint(value.size());
		bytes += value;
	}
	void I64Field(int16_t id, int64_t value) {
		Field(id, T_I64);
		Zigzag(value);
	}
};

constexpr int64_t UNSET = INT64_MIN;

struct ChunkSpec {
	int64_t data_page_offset;
	int64_t total_compressed_size;
	int64_t dictionary_page_offset;
	int64_t index_page_offset;
};

//! Fields of every kind the parser must skip, written as fields 20.. of the current struct.
void WriteUnknownFields(CompactWriter &out) {
	out.Field(20, T_TRUE);
	out.Field(21, T_FALSE);
	out.Field(22, T_BYTE);
	out.Byte(0x7F);
	out.Field(23, T_I16);
	out.Zigzag(-300);
	out.Field(24, T_DOUBLE);
	out.bytes += std::string(8, '\x01');
	out.Field(25, T_BINARY);
	out.Binary("statistics \x00\xff bytes");
	out.Field(26, T_LIST);
	out.List(T_TRUE, 20); // long list header; bools in a list take a byte each
	out.bytes += std::string(20, '\x01');
	out.Field(27, T_SET);
	out.List(T_I32, 2);
	out.Zigzag(1);
	out.Zigzag(-1);
	out.Field(28, T_MAP);
	out.Varint(2);
	out.Byte(T_BINARY << 4 | T_STRUCT);
	for (int i = 0; i < 2; i++) {
		out.Binary("key");
		out.BeginStruct();
		out.Field(1, T_LIST);
		out.List(T_LIST, 1);
		out.List(T_I64, 1);
		out.Zigzag(5);
		out.EndStruct();
	}
	out.Field(29, T_MAP);
	out.Varint(0); // an empty map has no type byte
	out.Field(300, T_I64);
	out.Zigzag(INT64_MIN);
}

void WriteColumnChunk(CompactWriter &out, const ChunkSpec &chunk, bool extras) {
	out.BeginStruct();
	out.I64Field(2, 0); // file_offset, which writers fill inconsistently (DuckDB writes 0)
	out.Field(3, T_STRUCT);
	out.BeginStruct();
	out.Field(1, T_I32);
	out.Zigzag(2);
	out.Field(2, T_LIST);
	out.List(T_I32, 1);
	out.Zigzag(0);
	out.Field(3, T_LIST);
	out.List(T_BINARY, 1);
	out.Binary("column");
	out.Field(4, T_I32);
	out.Zigzag(0);
	out.I64Field(5, 100);
	out.I64Field(6, chunk.total_compressed_size);
	out.I64Field(7, chunk.total_compressed_size);
	if (chunk.data_page_offset != UNSET) {
		out.I64Field(9, chunk.data_page_offset);
	}
	if (chunk.index_page_offset != UNSET) {
		out.I64Field(10, chunk.index_page_offset);
	}
	if (chunk.dictionary_page_offset != UNSET) {
		out.I64Field(11, chunk.dictionary_page_offset);
	}
	if (extras) {
		WriteUnknownFields(out);
	}
	out.EndStruct();
	out.EndStruct();
}

//! A FileMetaData with the given chunks; row_groups comes last and after the unknown fields when `extras`.
std::string Footer(const std::vector<std::vector<ChunkSpec>> &row_groups, bool extras = false,
                   int64_t row_group_compressed_size = UNSET) {
	CompactWriter out;
	out.Field(1, T_I32);
	out.Zigzag(1);
	out.Field(2, T_LIST);
	out.List(T_STRUCT, 0);
	out.I64Field(3, 100);
	if (extras) {
		WriteUnknownFields(out);
	}
	out.Field(4, T_LIST); // after field 300: a long-form field id
	out.List(T_STRUCT, row_groups.size());
	for (auto &columns : row_groups) {
		out.BeginStruct();
		if (extras) {
			WriteUnknownFields(out);
		}
		out.Field(1, T_LIST);
		out.List(T_STRUCT, columns.size());
		for (auto &chunk : columns) {
			WriteColumnChunk(out, chunk, extras);
		}
		out.I64Field(2, 1000);
		out.I64Field(3, 100);
		if (row_group_compressed_size != UNSET) {
			out.I64Field(6, row_group_compressed_size);
		}
		out.EndStruct();
	}
	out.EndStruct();
	return out.bytes;
}

} // namespace

TEST(ParquetLayout, SkipsFieldsOfEveryTypeAndTakesTheLowestPageOffset) {
	auto footer = Footer({{{1000, 500, 400, UNSET}, {1500, 100, UNSET, 1450}}, {{3000, 10, UNSET, UNSET}}}, true);
	ParquetLayout layout;
	std::string error;
	ASSERT_TRUE(Parse(footer, 10000, layout, error)) << error;
	ASSERT_EQ(layout.row_groups.size(), 2u);
	ASSERT_EQ(layout.row_groups[0].columns.size(), 2u);
	// a chunk starts at its dictionary (or index) page and is total_compressed_size long from there
	ExpectSameRange(layout.row_groups[0].columns[0], {400, 500}, "dictionary first");
	ExpectSameRange(layout.row_groups[0].columns[1], {1450, 100}, "index first");
	ExpectSameRange(layout.row_groups[0].span, {400, 1150}, "span");
	ExpectSameRange(layout.row_groups[1].span, {3000, 10}, "one column");
}

TEST(ParquetLayout, DictionaryOffsetZeroIsTakenAsDuckDBDoes) {
	// Some writers put 0 for "no dictionary"; DuckDB's prefetch still starts the chunk there.
	ParquetLayout layout;
	std::string error;
	ASSERT_TRUE(Parse(Footer({{{1000, 500, 0, UNSET}}}), 10000, layout, error)) << error;
	ExpectSameRange(layout.row_groups[0].columns[0], {0, 500}, "chunk");
}

TEST(ParquetLayout, SpanIsEmptyWhenDuckDBSkipsTheWholeGroupRead) {
	ParquetLayout layout;
	std::string error;
	ASSERT_TRUE(Parse(Footer({{{1000, 0, UNSET, UNSET}, {2000, 0, UNSET, UNSET}}, {}}), 10000, layout, error));
	EXPECT_EQ(layout.row_groups[0].span.length, 0u);
	EXPECT_TRUE(layout.row_groups[1].columns.empty());
	EXPECT_EQ(layout.row_groups[1].span.length, 0u);
	// the row group's own total_compressed_size, when set, is what DuckDB checks
	ASSERT_TRUE(Parse(Footer({{{1000, 0, UNSET, UNSET}, {2000, 0, UNSET, UNSET}}}, false, 5), 10000, layout, error));
	ExpectSameRange(layout.row_groups[0].span, {1000, 1000}, "span");
}

TEST(ParquetLayout, RejectsChunksOutsideTheFile) {
	ParquetLayout layout;
	std::string error;
	EXPECT_TRUE(Parse(Footer({{{9000, 1000, UNSET, UNSET}}}), 10000, layout, error)) << error;
	EXPECT_FALSE(Parse(Footer({{{9000, 1001, UNSET, UNSET}}}), 10000, layout, error));
	EXPECT_NE(error.find("outside the file"), std::string::npos) << error;
	EXPECT_FALSE(Parse(Footer({{{-5, 10, UNSET, UNSET}}}), 10000, layout, error));
	EXPECT_FALSE(Parse(Footer({{{100, -1, UNSET, UNSET}}}), 10000, layout, error));
	EXPECT_FALSE(Parse(Footer({{{INT64_MAX, INT64_MAX, UNSET, UNSET}}}), INT64_MAX, layout, error));
}

TEST(ParquetLayout, RejectsMissingOrMistypedRequiredFields) {
	ParquetLayout layout;
	std::string error;
	EXPECT_FALSE(Parse(Footer({{{UNSET, 10, 4, UNSET}}}), 10000, layout, error));
	EXPECT_NE(error.find("ColumnMetaData lacks required field 9"), std::string::npos) << error;
	// a required field of the wrong type is skipped, as Thrift's generated readers do, so it is missing
	auto footer = Footer({{{4, 10, UNSET, UNSET}}});
	auto data_page_offset = footer.find("\x26\x08"); // field 9 (7 + 2), i64, 4
	ASSERT_NE(data_page_offset, std::string::npos);
	footer[data_page_offset] = '\x25'; // i32
	EXPECT_FALSE(Parse(footer, 10000, layout, error));
	CompactWriter no_row_groups;
	no_row_groups.EndStruct();
	EXPECT_FALSE(Parse(no_row_groups.bytes, 10000, layout, error));
	EXPECT_NE(error.find("FileMetaData lacks required field 1"), std::string::npos) << error;
}

TEST(ParquetLayout, RejectsHostileSizesAndNesting) {
	ParquetLayout layout;
	std::string error;
	CompactWriter huge_list;
	huge_list.Field(2, T_LIST);
	huge_list.List(T_STRUCT, 1ULL << 31);
	EXPECT_FALSE(Parse(huge_list.bytes, 10000, layout, error));
	CompactWriter huge_binary;
	huge_binary.Field(7, T_BINARY);
	huge_binary.Varint(UINT64_MAX);
	EXPECT_FALSE(Parse(huge_binary.bytes, 10000, layout, error));
	CompactWriter long_varint;
	long_varint.Field(3, T_I64);
	long_varint.bytes += std::string(11, '\x80') + '\x01';
	EXPECT_FALSE(Parse(long_varint.bytes, 10000, layout, error));
	CompactWriter unknown_type;
	unknown_type.Byte(0x1D); // UUID, which DuckDB's Thrift does not know
	EXPECT_FALSE(Parse(unknown_type.bytes, 10000, layout, error));
	// nesting beyond any real footer fails instead of exhausting the stack
	std::string deep;
	for (int i = 0; i < 100000; i++) {
		deep += '\x1C'; // field delta 1, struct
	}
	EXPECT_FALSE(Parse(deep, 10000, layout, error));
	EXPECT_NE(error.find("nests deeper"), std::string::npos) << error;
	std::string deep_lists = "\x19" + std::string(100000, '\x19');
	EXPECT_FALSE(Parse(deep_lists, 10000, layout, error));
}

TEST(ParquetLayout, RejectsMoreRowGroupsThanTheCap) {
	CompactWriter row_group;
	row_group.BeginStruct();
	row_group.Field(1, T_LIST);
	row_group.List(T_STRUCT, 0);
	row_group.I64Field(2, 0);
	row_group.I64Field(3, 0);
	row_group.EndStruct();
	uint64_t count = ParquetFooter::MAX_COLUMN_CHUNKS + 1;
	CompactWriter footer;
	footer.Field(4, T_LIST);
	footer.List(T_STRUCT, count);
	footer.bytes.reserve(footer.bytes.size() + count * row_group.bytes.size() + 1);
	for (uint64_t i = 0; i < count; i++) {
		footer.bytes += row_group.bytes;
	}
	footer.EndStruct();
	ParquetLayout layout;
	std::string error;
	EXPECT_FALSE(Parse(footer.bytes, 10000, layout, error));
	EXPECT_NE(error.find("row groups"), std::string::npos) << error;
}
