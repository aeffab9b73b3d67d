//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/formats/parquet_layout.hpp
//
// Learns where a Parquet file's row groups and column chunks lie from its footer, with the byte ranges DuckDB 1.5.5
// reads for them, so read-ahead fetches exactly what the scan asks for next.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/formats/file_layout.hpp"
#include "core/split/range_planner.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace httpfs2 {

struct RowGroupLayout {
	//! Byte range of each leaf column chunk, in the file's column order, as DuckDB 1.5.5 reads it: from the lowest of
	//! its dictionary, index and data page offsets, total_compressed_size bytes long.
	std::vector<ByteRange> columns;
	//! Byte range of each leaf column chunk's bloom filter (header and bitset), where the footer gives its offset and
	//! length; {0, 0} otherwise. DuckDB 1.5.5 reads it, before the row group's data, for each column a filter compares
	//! with constants (ParquetStatisticsUtils::BloomFilterExcludes), one round trip per row group.
	std::vector<ByteRange> bloom_filters;
	//! From the first column chunk's start to the end of the last one, as DuckDB's whole-row-group read. Empty when
	//! DuckDB never reads the row group whole (it has no columns, or its compressed size and its chunks' are all 0).
	ByteRange span;
};

struct ParquetLayout : FileLayout {
	std::vector<RowGroupLayout> row_groups;
};

class ParquetFooter {
public:
	static constexpr uint64_t TRAILER_SIZE = 8;
	//! Layouts with more column chunks than this (row groups x columns) are refused rather than held in memory.
	static constexpr uint64_t MAX_COLUMN_CHUNKS = 1000000;

	//! From the last 8 bytes of a file: true for a plain Parquet file ("PAR1"), with the length of its
	//! metadata; false for anything else (encrypted "PARE" footer, bad magic, length that does not fit file_size).
	static bool ParseTrailer(const char *trailer, uint64_t file_size, uint32_t &metadata_length);
	//! Parses Thrift-compact FileMetaData of `length` bytes. False (with a reason in `error`) for malformed input or
	//! column ranges outside [0, file_size); never reads outside [metadata, metadata + length), never throws or
	//! crashes on garbage.
	static bool ParseLayout(const char *metadata, uint64_t length, uint64_t file_size, ParquetLayout &layout,
	                        std::string &error);
	//! The byte count DuckDB 1.5.5 reads from the end of a remote file of `file_size` bytes on its first footer read
	//! (0 for a file too small to be Parquet, which DuckDB rejects without reading). DuckDB reads the metadata again,
	//! footer_length bytes from file_size - 8 - footer_length, only when it did not fit in this first read.
	static uint64_t DuckDBTailReadSize(uint64_t file_size);
};

//! Whether `path` names a Parquet file (ends in ".parquet", any case): the files whose footers are predicted and
//! that open from their tail.
bool IsParquetPath(const std::string &path);

} // namespace httpfs2
