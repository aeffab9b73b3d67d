#include "adapter/settings.hpp"

#include "adapter/extension_state.hpp"
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

template <size_t INDEX>
static void OnSet(ClientContext &context, SetScope, Value &parameter) {
	auto &spec = AllSettings()[INDEX];
	auto value = ValueAsInteger(spec, parameter);
	auto error = spec.Validate(value);
	if (!error.empty()) {
		throw duckdb::InvalidInputException(error);
	}
	auto state = ExtensionState::Get(*context.db);
	state->ApplySetting(spec, value);
	if (spec.number == &ParallelReadSettings::io_threads) {
		state->io_pool.Resize(static_cast<size_t>(value));
	}
}

template <size_t... INDEX>
static std::array<duckdb::set_option_callback_t, sizeof...(INDEX)> MakeCallbacks(std::index_sequence<INDEX...>) {
	return {{&OnSet<INDEX>...}};
}

static constexpr size_t SETTING_COUNT = 10;

void RegisterSettings(duckdb::DBConfig &config) {
	D_ASSERT(AllSettings().size() == SETTING_COUNT);
	auto callbacks = MakeCallbacks(std::make_index_sequence<SETTING_COUNT> {});
	auto &specs = AllSettings();
	for (size_t i = 0; i < specs.size(); i++) {
		auto &spec = specs[i];
		bool is_flag = spec.kind == SettingKind::BOOLEAN;
		Value default_value = is_flag ? Value::BOOLEAN(spec.default_value != 0) : Value::BIGINT(spec.default_value);
		// The pool is one per database, so its size is a global setting; the rest follow the session.
		auto scope = spec.number == &ParallelReadSettings::io_threads ? SetScope::GLOBAL : SetScope::SESSION;
		config.AddExtensionOption(spec.name, spec.description, is_flag ? LogicalType::BOOLEAN : LogicalType::BIGINT,
		                          default_value, callbacks[i], scope);
	}
}

ParallelReadSettings ReadSettings(duckdb::optional_ptr<duckdb::FileOpener> opener, ExtensionState &state) {
	auto result = state.LastSetSettings();
	if (!opener) {
		return result;
	}
	for (auto &spec : AllSettings()) {
		Value value;
		if (duckdb::FileOpener::TryGetCurrentSetting(opener, spec.name, value) && !value.IsNull()) {
			spec.Apply(result, ValueAsInteger(spec, value));
		}
	}
	return result;
}

} // namespace httpfs2
