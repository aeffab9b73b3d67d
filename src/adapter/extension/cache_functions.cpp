#include "adapter/extension/cache_functions.hpp"

#include "adapter/common/extension_state.hpp"
#include "adapter/common/session_settings.hpp"
#include "adapter/compat/duckdb_api.hpp"
#include "adapter/extension/table_rows.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

#include <sys/stat.h>

namespace httpfs2 {

using namespace duckdb;

namespace {

//! The cache the connection's settings name; null when its directory does not exist (nothing was ever cached there,
//! and looking must not create it).
std::shared_ptr<BlockCache> NamedCache(ClientContext &context) {
	auto state = ExtensionState::Get(*context.db);
	auto settings = SettingsFor(context, *state);
	struct stat found;
	if (::stat(settings.CacheDirectory().c_str(), &found) != 0) {
		return nullptr;
	}
	string error;
	auto cache = state->CacheFor(settings, error);
	if (!cache) {
		throw IOException(error);
	}
	return cache;
}

struct ClearData : public TableFunctionData {
	string prefix;
};

unique_ptr<FunctionData> InfoBind(ClientContext &, TableFunctionBindInput &, vector<LogicalType> &return_types,
                                  vector<compat::ColumnName> &names) {
	names.emplace_back("path");
	names.emplace_back("version");
	names.emplace_back("blocks");
	names.emplace_back("bytes");
	return_types = {LogicalType::VARCHAR, LogicalType::VARCHAR, LogicalType::UBIGINT, LogicalType::UBIGINT};
	return nullptr;
}

unique_ptr<GlobalTableFunctionState> InfoInit(ClientContext &context, TableFunctionInitInput &) {
	auto result = make_uniq<RowsState>();
	if (auto cache = NamedCache(context)) {
		for (auto &object : cache->Info()) {
			result->rows.push_back({Value(object.path), Value(object.version), Value::UBIGINT(object.blocks),
			                        Value::UBIGINT(object.bytes)});
		}
	}
	return std::move(result);
}

unique_ptr<FunctionData> ClearBind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &return_types,
                                   vector<compat::ColumnName> &names) {
	auto data = make_uniq<ClearData>();
	if (!input.inputs.empty()) {
		if (input.inputs[0].IsNull()) {
			throw InvalidInputException("httpfs2_cache_clear: the path prefix cannot be NULL (no argument clears all)");
		}
		data->prefix = input.inputs[0].ToString();
	}
	names.emplace_back("bytes_removed");
	return_types.push_back(LogicalType::UBIGINT);
	return std::move(data);
}

unique_ptr<GlobalTableFunctionState> ClearInit(ClientContext &context, TableFunctionInitInput &input) {
	auto &data = input.bind_data->Cast<ClearData>();
	uint64_t removed = 0;
	if (auto cache = NamedCache(context)) {
		removed = cache->Clear(data.prefix);
	}
	auto result = make_uniq<RowsState>();
	result->rows.push_back({Value::UBIGINT(removed)});
	return std::move(result);
}

} // namespace

void RegisterCacheFunctions(ExtensionLoader &loader) {
	loader.RegisterFunction(TableFunction("httpfs2_cache_info", {}, EmitRows, InfoBind, InfoInit));
	TableFunctionSet clear("httpfs2_cache_clear");
	clear.AddFunction(TableFunction({}, EmitRows, ClearBind, ClearInit));
	clear.AddFunction(TableFunction({LogicalType::VARCHAR}, EmitRows, ClearBind, ClearInit));
	loader.RegisterFunction(clear);
}

} // namespace httpfs2
