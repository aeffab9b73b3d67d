#include "adapter/common/session_settings.hpp"

#include "adapter/common/extension_state.hpp"
#include "duckdb/common/file_opener.hpp"

namespace httpfs2 {

int64_t SettingAsInteger(const SettingSpec &spec, const duckdb::Value &value) {
	if (value.IsNull()) {
		throw duckdb::InvalidInputException("Setting '%s' cannot be NULL", spec.name);
	}
	return spec.kind == SettingKind::BOOLEAN ? (value.GetValue<bool>() ? 1 : 0) : value.GetValue<int64_t>();
}

IoSettings SettingsFor(duckdb::optional_ptr<duckdb::FileOpener> opener, ExtensionState &state) {
	auto result = state.LastSetSettings();
	if (!opener) {
		return result;
	}
	for (auto &spec : SETTING_SPECS) {
		duckdb::Value value;
		if (duckdb::FileOpener::TryGetCurrentSetting(opener, spec.name, value) && !value.IsNull()) {
			spec.Apply(result, SettingAsInteger(spec, value));
		}
	}
	return result;
}

} // namespace httpfs2
