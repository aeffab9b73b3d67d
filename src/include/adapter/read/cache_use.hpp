//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/read/cache_use.hpp
//
// How a range reader takes the database's block cache (core/cache): every reader httpfs2 makes of an object whose
// version the query knows (an open's, read-ahead's, a footer fetched ahead of its open) looks in the cache first, so a
// warm read sends no range GET whoever asks for the bytes.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/extension_state.hpp"
#include "adapter/stores/checked_range_reader.hpp"
#include "duckdb/common/file_opener.hpp"

#include <string>

namespace httpfs2 {

//! CLOCK_REALTIME in ns: version records' time, which all processes share.
int64_t CacheClockNanoseconds();

//! With the block cache enabled: the database's cache for `reader`; a directory that cannot be opened leaves the file
//! read without it, with a warning in DuckDB's log naming the directory. `learnt`: the version the query proved (null
//! for one it trusted), recorded with the time for httpfs2_cache_trust_seconds.
void AttachBlockCache(ExtensionState &state, IoStats &stats, CheckedRangeReader &reader, const std::string &path,
                      const IoSettings &settings, duckdb::optional_ptr<duckdb::FileOpener> opener,
                      const ObjectVersion *learnt);

} // namespace httpfs2
