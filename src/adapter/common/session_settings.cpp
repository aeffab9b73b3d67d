#include "adapter/common/session_settings.hpp"

#include "adapter/common/extension_state.hpp"
#include "adapter/compat/duckdb_api.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/main/client_data.hpp"

namespace httpfs2 {

int64_t SettingAsInteger(const SettingSpec &spec, const duckdb::Value &value) {
	if (value.IsNull()) {
		throw duckdb::InvalidInputException("Setting '%s' cannot be NULL", spec.name);
	}
	return spec.kind == SettingKind::BOOLEAN ? (value.GetValue<bool>() ? 1 : 0) : value.GetValue<int64_t>();
}

std::string SettingAsText(const SettingSpec &spec, const duckdb::Value &value) {
	if (value.IsNull()) {
		throw duckdb::InvalidInputException("Setting '%s' cannot be NULL", spec.name);
	}
	return value.ToString();
}

IoSettings SettingsFor(duckdb::optional_ptr<duckdb::FileOpener> opener, ExtensionState &state) {
	auto result = state.LastSetSettings();
	if (!opener) {
		return result;
	}
	auto context = duckdb::FileOpener::TryGetClientContext(opener);
	if (context) {
		result.host_reads.streams = compat::HostReadStreams(*context);
	}
	duckdb::Value piece_bytes; // DuckDB 2.0's; 1.5 has no such setting
	if (duckdb::FileOpener::TryGetCurrentSetting(opener, "external_file_cache_remote_max_block_size", piece_bytes) &&
	    !piece_bytes.IsNull()) {
		result.host_reads.piece_bytes = piece_bytes.GetValue<uint64_t>();
	}
	for (auto &spec : SETTING_SPECS) {
		duckdb::Value value;
		if (!duckdb::FileOpener::TryGetCurrentSetting(opener, spec.name, value) || value.IsNull()) {
			continue;
		}
		if (spec.kind == SettingKind::TEXT) {
			spec.ApplyText(result, SettingAsText(spec, value));
		} else {
			spec.Apply(result, SettingAsInteger(spec, value));
		}
	}
	return result;
}

IoSettings SettingsFor(duckdb::ClientContext &context, ExtensionState &state) {
	auto &opener = duckdb::ClientData::Get(context).file_opener;
	return SettingsFor(opener.get(), state);
}

} // namespace httpfs2
