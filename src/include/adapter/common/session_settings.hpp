//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/common/session_settings.hpp
//
// The httpfs2_* settings in force for a file open, read back from DuckDB (adapter/extension/settings registers them).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/io_settings.hpp"
#include "duckdb.hpp"

namespace httpfs2 {

class ExtensionState;

//! `value` of the setting `spec` as the table stores it (a flag as 0 or 1); rejects NULL naming the setting.
int64_t SettingAsInteger(const SettingSpec &spec, const duckdb::Value &value);

//! `value` of the TEXT setting `spec`; rejects NULL naming the setting.
std::string SettingAsText(const SettingSpec &spec, const duckdb::Value &value);

//! The settings in force for `opener` (session values over global ones); without an opener, the last SET values.
IoSettings SettingsFor(duckdb::optional_ptr<duckdb::FileOpener> opener, ExtensionState &state);
//! The settings in force for a connection (its SQL functions).
IoSettings SettingsFor(duckdb::ClientContext &context, ExtensionState &state);

} // namespace httpfs2
