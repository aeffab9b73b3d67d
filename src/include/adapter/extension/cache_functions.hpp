//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/extension/cache_functions.hpp
//
// httpfs2_cache_info(): what the block cache holds, per object version; httpfs2_cache_clear([path prefix]): removes
// it. Both act on the directory the settings name, whether or not the cache is enabled, and create nothing.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb.hpp"

namespace httpfs2 {

void RegisterCacheFunctions(duckdb::ExtensionLoader &loader);

} // namespace httpfs2
