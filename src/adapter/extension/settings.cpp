#include "adapter/extension/settings.hpp"

#include "adapter/extension/extension_state.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/config.hpp"

#include <array>
#include <utility>

namespace httpfs2 {

using duckdb::ClientContext;
using duckdb::LogicalType;
using duckdb::SetScope;
using duckdb::Value;

static int64_t ValueAsInteger(const SettingSpec &spec, const Value &value) {
	if (value.IsNull()) {
		throw duckdb::InvalidInputException("Setting '%s' cannot be NULL", spec.name);
	}
	return spec.kind == SettingKind::BOOLEAN ? (value.GetValue<bool>() ? 1 : 0) : value.GetValue<int64_t>();
}

//! DuckDB's set callbacks carry no setting name, so there is one instantiation per entry of SETTING_SPECS.
template <size_t INDEX>
static void OnSet(ClientContext &context, SetScope, Value &parameter) {
	static_assert(INDEX < SETTING_COUNT, "a callback for a setting that does not exist");
	auto &spec = SETTING_SPECS[INDEX];
	auto value = ValueAsInteger(spec, parameter);
	auto error = spec.Validate(value);
	if (!error.empty()) {
		throw duckdb::InvalidInputException(error);
	}
	ExtensionState::Get(*context.db)->ApplySetting(spec, value);
}

template <size_t... INDEX>
static std::array<duckdb::set_option_callback_t, sizeof...(INDEX)> MakeCallbacks(std::index_sequence<INDEX...>) {
	return {{&OnSet<INDEX>...}};
}

void RegisterSettings(duckdb::DBConfig &config) {
	auto callbacks = MakeCallbacks(std::make_index_sequence<SETTING_COUNT> {});
	for (size_t i = 0; i < SETTING_COUNT; i++) {
		auto &spec = SETTING_SPECS[i];
		bool is_flag = spec.kind == SettingKind::BOOLEAN;
		Value default_value = is_flag ? Value::BOOLEAN(spec.default_value != 0) : Value::BIGINT(spec.default_value);
		auto scope = spec.scope == SettingScope::GLOBAL ? SetScope::GLOBAL : SetScope::SESSION;
		config.AddExtensionOption(spec.name, spec.description, is_flag ? LogicalType::BOOLEAN : LogicalType::BIGINT,
		                          default_value, callbacks[i], scope);
	}
}

IoSettings SettingsFor(duckdb::optional_ptr<duckdb::FileOpener> opener, ExtensionState &state) {
	auto result = state.LastSetSettings();
	if (!opener) {
		return result;
	}
	for (auto &spec : SETTING_SPECS) {
		Value value;
		if (duckdb::FileOpener::TryGetCurrentSetting(opener, spec.name, value) && !value.IsNull()) {
			spec.Apply(result, ValueAsInteger(spec, value));
		}
	}
	return result;
}

} // namespace httpfs2
