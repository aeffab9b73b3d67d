//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/extension/settings.hpp
//
// Registers the httpfs2_* settings with DuckDB (adapter/common/session_settings reads them back for a file open).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/io_settings.hpp"
#include "duckdb.hpp"

namespace httpfs2 {

//! Adds the settings to `config`, each with a callback that rejects out-of-range values naming the setting.
void RegisterSettings(duckdb::DBConfig &config);

} // namespace httpfs2
