//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/extension/settings.hpp
//
// Registers the httpfs2_parallel_read_* settings with DuckDB and reads them back for a file open.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/io_settings.hpp"
#include "duckdb.hpp"

namespace httpfs2 {

class ExtensionState;

//! Adds the settings to `config`, each with a callback that rejects out-of-range values naming the setting.
void RegisterSettings(duckdb::DBConfig &config);

//! The settings in force for `opener` (session values over global ones); without an opener, the last SET values.
IoSettings SettingsFor(duckdb::optional_ptr<duckdb::FileOpener> opener, ExtensionState &state);

} // namespace httpfs2
