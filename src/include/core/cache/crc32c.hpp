//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/cache/crc32c.hpp
//
// CRC-32C (Castagnoli), the checksum of a cached block: it finds every burst error of up to 32 bits and all but one
// in 4 billion others, which is what a torn or bit-rotted block on local disk looks like. Computed in software
// (slicing by 8, ~2.5 GB/s: under half a millisecond a block) so the core needs no dependency and runs on any CPU.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>

namespace httpfs2 {

//! The CRC-32C of `length` bytes at `data`, continuing from `crc` (the CRC of the bytes before; 0 to start).
//! With the CPU's crc32 instruction where it has one (x86-64 SSE4.2), else Crc32cTables.
uint32_t Crc32c(const char *data, uint64_t length, uint32_t crc = 0);
//! The same, from tables alone (slicing by eight): what a CPU without the instruction computes.
uint32_t Crc32cTables(const char *data, uint64_t length, uint32_t crc = 0);

} // namespace httpfs2
