#include "core/formats/manifest_list.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace httpfs2;

namespace {

//! An Avro long: zigzag, then seven bits a byte.
std::string Long(int64_t value) {
	auto raw = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
	std::string out;
	do {
		auto byte = static_cast<char>(raw & 0x7f);
		raw >>= 7;
		out += static_cast<char>(raw ? byte | 0x80 : byte);
	} while (raw);
	return out;
}

std::string String(const std::string &text) {
	return Long(static_cast<int64_t>(text.size())) + text;
}

//! A manifest_file record as Iceberg v2 writes it: path, length, then spec id, content, sequence numbers, snapshot
//! id, file and row counts, an empty partitions array (union branch 1) and no key metadata (union branch 0).
std::string Record(const std::string &path, int64_t length) {
	std::string record = String(path) + Long(length) + Long(0) + Long(0) + Long(1) + Long(1) + Long(42);
	for (int i = 0; i < 6; i++) {
		record += Long(i);
	}
	return record + Long(1) + Long(0) + Long(0);
}

const std::string SYNC = "0123456789abcdef";

//! An Avro object container file of `codec` whose blocks hold `blocks` (already encoded by the codec).
std::string Container(const std::string &codec, const std::vector<std::string> &blocks, int records_per_block = 1) {
	std::string file = std::string("Obj\x01", 4);
	file += Long(2) + String("avro.schema") + String("{\"type\":\"record\",\"name\":\"manifest_file\"}");
	file += String("avro.codec") + String(codec) + Long(0) + SYNC;
	for (auto &block : blocks) {
		file += Long(records_per_block) + String(block) + SYNC;
	}
	return file;
}

const std::string DIR = "s3://bucket/warehouse/db/t/metadata/";

} // namespace

TEST(ManifestList, NamesEachManifestOfItsBucketOnceInOrder) {
	auto first = Record(DIR + "a-m0.avro", 7012) + Record(DIR + "b-m0.avro", 130000);
	auto second =
	    Record("s3://other/metadata/c-m0.avro", 900) + Record(DIR + "a-m0.avro", 7012) + Record(DIR + "d-m1.avro", 1);
	auto found = ManifestList::Read(Container("null", {first, second}, 2), "s3://bucket/", nullptr);
	std::vector<ListedManifest> expected {
	    {DIR + "a-m0.avro", 7012}, {DIR + "b-m0.avro", 130000}, {DIR + "d-m1.avro", 1}};
	EXPECT_EQ(found, expected);
}

TEST(ManifestList, PathsLongerThanOneLengthByteAreFound) {
	auto long_name = DIR + std::string(300, 'x') + "-m0.avro"; // a length of two varint bytes
	auto found = ManifestList::Read(Container("null", {Record(long_name, 5)}), "s3://bucket/", nullptr);
	ASSERT_EQ(found.size(), 1u);
	EXPECT_EQ(found[0].path, long_name);
}

TEST(ManifestList, DeflateBlocksAreInflatedFirst) {
	// The inflater stands in for deflate: it reverses its input, so only an inflated block names the manifest.
	auto plain = Record(DIR + "a-m0.avro", 9);
	std::string encoded(plain.rbegin(), plain.rend());
	auto reverse = [](const char *data, size_t size, std::string &out) {
		std::string in(data, size);
		out.assign(in.rbegin(), in.rend());
		return true;
	};
	auto found = ManifestList::Read(Container("deflate", {encoded}), "s3://bucket/", reverse);
	ASSERT_EQ(found.size(), 1u);
	EXPECT_EQ(found[0], (ListedManifest {DIR + "a-m0.avro", 9}));
	auto refuse = [](const char *, size_t, std::string &) {
		return false;
	};
	EXPECT_TRUE(ManifestList::Read(Container("deflate", {encoded}), "s3://bucket/", refuse).empty());
}

TEST(ManifestList, WhatIsNotAWholeListOfAKnownCodecNamesNothing) {
	auto good = Container("null", {Record(DIR + "a-m0.avro", 9)});
	EXPECT_EQ(ManifestList::Read(good, "s3://bucket/", nullptr).size(), 1u);
	EXPECT_TRUE(ManifestList::Read(good.substr(0, good.size() - 3), "s3://bucket/", nullptr).empty()) << "cut short";
	EXPECT_TRUE(ManifestList::Read("PAR1" + good.substr(4), "s3://bucket/", nullptr).empty()) << "not Avro";
	EXPECT_TRUE(
	    ManifestList::Read(Container("snappy", {Record(DIR + "a-m0.avro", 9)}), "s3://bucket/", nullptr).empty())
	    << "a codec not read";
	EXPECT_TRUE(ManifestList::Read(good, "", nullptr).empty()) << "no prefix";
	auto not_avro = Container("null", {Record(DIR + "a-m0.parquet", 9) + Record(DIR + "b-m0.avro", 0)});
	EXPECT_TRUE(ManifestList::Read(not_avro, "s3://bucket/", nullptr).empty()) << "no .avro, no length";
}

//! A manifest_entry record of a v2 manifest: status, snapshot id (union branch 1), sequence numbers (branch 0), then
//! the data_file: content, file_path, file_format, an empty partition record, record count, file size.
std::string Entry(const std::string &path, int64_t status = 1) {
	return Long(status) + Long(1) + Long(7) + Long(0) + Long(0) + Long(0) + String(path) + String("PARQUET") +
	       Long(1000) + Long(123456);
}

TEST(ManifestList, AManifestNamesItsDataFilesInOrderOnce) {
	const std::string data = "s3://bucket/warehouse/db/t/data/";
	auto first = Entry(data + "00000-0-a.parquet") + Entry(data + "00001-0-b.parquet");
	auto second = Entry(data + "00000-0-a.parquet", 2) + Entry("s3://other/t/data/c.parquet") +
	              Entry(data + std::string(300, 'x') + ".parquet") + Entry(data + "d.orc");
	auto found = ManifestList::DataFiles(Container("null", {first, second}, 2), "s3://bucket/", nullptr);
	std::vector<std::string> expected {data + "00000-0-a.parquet", data + "00001-0-b.parquet",
	                                   data + std::string(300, 'x') + ".parquet"};
	EXPECT_EQ(found, expected) << "each once, this bucket's, lengths of two bytes, Parquet alone";
	EXPECT_TRUE(ManifestList::DataFiles(Container("snappy", {first}), "s3://bucket/", nullptr).empty());
	EXPECT_TRUE(ManifestList::DataFiles(first, "s3://bucket/", nullptr).empty()) << "records alone are no container";
}

TEST(ManifestList, KnowsItsFilesAndTheirBuckets) {
	EXPECT_TRUE(ManifestList::IsManifestList(DIR + "snap-6012-1-ab12.avro"));
	EXPECT_FALSE(ManifestList::IsManifestList(DIR + "ab12-m0.avro"));
	EXPECT_FALSE(ManifestList::IsManifestList(DIR + "snap-6012-1-ab12.json"));
	EXPECT_EQ(ManifestList::SchemeAndAuthority(DIR + "snap-1.avro"), "s3://bucket/");
	EXPECT_EQ(ManifestList::SchemeAndAuthority("https://host:9000/b/k"), "https://host:9000/");
	EXPECT_EQ(ManifestList::SchemeAndAuthority("/local/path"), "");
	EXPECT_EQ(ManifestList::SchemeAndAuthority("s3://bucket"), "");
}
