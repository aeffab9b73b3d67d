//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/compat/duckdb_api.hpp
//
// The seams where DuckDB's C++ API differs between the versions httpfs2 is built for (1.5.x and 2.0.x), in one place:
// the rest of the tree writes against these names. HTTPFS2_DUCKDB_MAJOR comes from the build (CMakeLists.txt, from
// the DuckDB version the extension is built for).
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/main/client_context.hpp"

#include <string>

#ifndef HTTPFS2_DUCKDB_MAJOR
#error "HTTPFS2_DUCKDB_MAJOR is set by the build to the major version of the DuckDB httpfs2 is built for"
#endif

namespace httpfs2 {
namespace compat {

#if HTTPFS2_DUCKDB_MAJOR >= 2
//! How DuckDB names a setting a FileOpener is asked for, and a column a table function binds.
using SettingKey = duckdb::Identifier;
using ColumnName = duckdb::Identifier;

inline bool Interrupted(const duckdb::ClientContext &context) {
	return context.IsInterrupted();
}
#else
using SettingKey = std::string;
using ColumnName = std::string;

inline bool Interrupted(const duckdb::ClientContext &context) {
	return context.interrupted.load();
}
#endif

//! The name a SettingKey holds.
inline const std::string &KeyName(const SettingKey &key) {
	return static_cast<const std::string &>(key);
}

} // namespace compat
} // namespace httpfs2
