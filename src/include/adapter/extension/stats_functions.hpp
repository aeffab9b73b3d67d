//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/extension/stats_functions.hpp
//
// httpfs2_stats(): one row per wrapped filesystem; httpfs2_reset_stats(): zeroes the counters.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb.hpp"

namespace httpfs2 {

void RegisterStatsFunctions(duckdb::ExtensionLoader &loader);

} // namespace httpfs2
