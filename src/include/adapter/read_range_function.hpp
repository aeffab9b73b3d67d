//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/read_range_function.hpp
//
// httpfs2_read_range(path, offset, length [, sequential]) -> BLOB: one Read of a byte range through DuckDB's
// filesystem, exactly as a scan issues it. For checking bytes at any offset and size (tests, debugging).
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb.hpp"

namespace httpfs2 {

void RegisterReadRangeFunction(duckdb::ExtensionLoader &loader);

} // namespace httpfs2
