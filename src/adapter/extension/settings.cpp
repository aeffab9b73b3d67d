#include "adapter/extension/settings.hpp"

#include "adapter/common/extension_state.hpp"
#include "adapter/common/session_settings.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/config.hpp"

#include <array>
#include <utility>

namespace httpfs2 {

using duckdb::ClientContext;
using duckdb::LogicalType;
using duckdb::SetScope;
using duckdb::Value;

//! DuckDB's set callbacks carry no setting name, so there is one instantiation per entry of SETTING_SPECS.
template <size_t INDEX>
static void OnSet(ClientContext &context, SetScope, Value &parameter) {
	static_assert(INDEX < SETTING_COUNT, "a callback for a setting that does not exist");
	auto &spec = SETTING_SPECS[INDEX];
	if (spec.kind == SettingKind::TEXT) {
		ExtensionState::Get(*context.db)->ApplyTextSetting(spec, SettingAsText(spec, parameter));
		return;
	}
	auto value = SettingAsInteger(spec, parameter);
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
		auto scope = spec.scope == SettingScope::GLOBAL ? SetScope::GLOBAL : SetScope::SESSION;
		switch (spec.kind) {
		case SettingKind::BOOLEAN:
			config.AddExtensionOption(spec.name, spec.description, LogicalType::BOOLEAN,
			                          Value::BOOLEAN(spec.default_value != 0), callbacks[i], scope);
			break;
		case SettingKind::INTEGER:
			config.AddExtensionOption(spec.name, spec.description, LogicalType::BIGINT,
			                          Value::BIGINT(spec.default_value), callbacks[i], scope);
			break;
		case SettingKind::TEXT:
			config.AddExtensionOption(spec.name, spec.description, LogicalType::VARCHAR, Value(spec.default_text),
			                          callbacks[i], scope);
			break;
		}
	}
}

} // namespace httpfs2
