//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/extension/read_range_function.hpp
//
// httpfs2_read_range(path, offset, length [, sequential]) -> BLOB: one Read of a byte range through DuckDB's
// filesystem, exactly as a scan issues it. For checking bytes at any offset and size (tests, debugging).
// httpfs2_read_range(path, offsets[], lengths[] [, sequential]) -> BLOB[]: those reads one after another through one
// open handle, as a scan makes them (an access trace, which read-ahead sees as one pattern).
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb.hpp"

namespace httpfs2 {

void RegisterReadRangeFunction(duckdb::ExtensionLoader &loader);

} // namespace httpfs2
