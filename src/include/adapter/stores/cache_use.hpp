//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/cache_use.hpp
//
// How a range reader takes the database's block cache (core/cache): every reader httpfs2 makes of an object whose
// version the query knows (an open's, read-ahead's, a footer fetched ahead of its open) looks in the cache first, so a
// warm read sends no range GET whoever asks for the bytes.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/extension_state.hpp"
#include "adapter/common/object_version.hpp"
#include "core/split/range_planner.hpp"
#include "duckdb/common/file_opener.hpp"

#include <string>

namespace httpfs2 {

class CheckedRangeReader;

//! CLOCK_REALTIME in ns: version records' time, which all processes share.
int64_t CacheClockNanoseconds();

//! With the block cache enabled: the database's cache for `reader`; a directory that cannot be opened leaves the file
//! read without it, with a warning in DuckDB's log naming the directory. `learnt`: the version the query proved (null
//! for one it trusted), recorded with the time for httpfs2_cache_trust_seconds.
void AttachBlockCache(ExtensionState &state, IoStats &stats, CheckedRangeReader &reader, const std::string &path,
                      const IoSettings &settings, duckdb::optional_ptr<duckdb::FileOpener> opener,
                      const ObjectVersion *learnt);

//! The version of `path` the cache recorded within the session's trust window (httpfs2_cache_trust_seconds), into
//! `version`; false without a window, a record, or a cache.
bool FindTrustedVersion(ExtensionState &state, const IoSettings &settings, const std::string &path,
                        ObjectVersion &version);
//! Whether `path` opens at a trusted version (FindTrustedVersion) whose last block or tail piece the cache holds: its
//! open and the read of its footer make no request, so nothing is to be fetched ahead of it.
bool TrustedAndTailHeld(ExtensionState &state, const IoSettings &settings, const std::string &path);
//! Whether the cache recorded a version of `path` (learnt at any time) whose last block or tail piece it holds: a warm
//! open, whose version is to be proven (by a request) but whose footer is read from the cache.
bool RecordedAndTailHeld(ExtensionState &state, const IoSettings &settings, const std::string &path);

//! Reads the blocks `range` touches (of an object of `object_size` bytes) whole through `reader` (which uses the
//! cache) on `pool`, off the caller's path, and drops the bytes: they are cached where missing. An error leaves them
//! to a later read.
void FillInBackground(IoPool &pool, std::shared_ptr<CheckedRangeReader> reader, const ByteRange &range,
                      uint64_t object_size);

} // namespace httpfs2
