#include "adapter/stats_functions.hpp"

#include "adapter/extension_state.hpp"
#include "duckdb/function/table_function.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace httpfs2 {

using namespace duckdb;

namespace {

struct Column {
	const char *name;
	LogicalType type;
};

//! Rows computed once at init and then emitted in chunks.
struct RowsState : public GlobalTableFunctionState {
	vector<vector<Value>> rows;
	idx_t offset = 0;
};

const vector<Column> &StatsColumns() {
	static const vector<Column> columns = {
	    {"filesystem", LogicalType::VARCHAR},
	    {"files_opened", LogicalType::UBIGINT},
	    {"reads", LogicalType::UBIGINT},
	    {"bytes_read", LogicalType::UBIGINT},
	    {"reads_passed_through", LogicalType::UBIGINT},
	    {"reads_split", LogicalType::UBIGINT},
	    {"sub_reads", LogicalType::UBIGINT},
	    {"sub_read_bytes", LogicalType::UBIGINT},
	    {"sub_read_seconds", LogicalType::DOUBLE},
	    {"in_flight_peak", LogicalType::UBIGINT},
	    {"errors", LogicalType::UBIGINT},
	    {"writes", LogicalType::UBIGINT},
	    {"bytes_written", LogicalType::UBIGINT},
	    {"fanout_histogram", LogicalType::MAP(LogicalType::UBIGINT, LogicalType::UBIGINT)},
	    {"io_threads", LogicalType::UBIGINT},
	    {"model_first_byte_latency_ms", LogicalType::DOUBLE},
	    {"model_stream_bandwidth_mib_s", LogicalType::DOUBLE},
	    {"model_learned_overhead_ms", LogicalType::DOUBLE},
	    {"model_samples", LogicalType::UBIGINT},
	};
	return columns;
}

//! NULL until the model has a sample, so an unlearned value is never mistaken for a measurement.
Value ModelValue(uint64_t samples, double value) {
	return samples == 0 ? Value(LogicalType::DOUBLE) : Value::DOUBLE(value);
}

vector<Value> StatsRow(const string &name, const ReadStatsSnapshot &stats, const CostModelSnapshot &model,
                       idx_t io_threads) {
	vector<Value> keys;
	vector<Value> counts;
	for (idx_t fanout = 1; fanout < stats.fanout_histogram.size(); fanout++) {
		if (stats.fanout_histogram[fanout] > 0) {
			keys.push_back(Value::UBIGINT(fanout));
			counts.push_back(Value::UBIGINT(stats.fanout_histogram[fanout]));
		}
	}
	return {Value(name),
	        Value::UBIGINT(stats.files_opened),
	        Value::UBIGINT(stats.reads),
	        Value::UBIGINT(stats.bytes_read),
	        Value::UBIGINT(stats.reads_passed_through),
	        Value::UBIGINT(stats.reads_split),
	        Value::UBIGINT(stats.sub_reads),
	        Value::UBIGINT(stats.sub_read_bytes),
	        Value::DOUBLE(static_cast<double>(stats.sub_read_micros) / 1e6),
	        Value::UBIGINT(stats.in_flight_peak),
	        Value::UBIGINT(stats.errors),
	        Value::UBIGINT(stats.writes),
	        Value::UBIGINT(stats.bytes_written),
	        Value::MAP(LogicalType::UBIGINT, LogicalType::UBIGINT, std::move(keys), std::move(counts)),
	        Value::UBIGINT(io_threads),
	        ModelValue(model.latency_samples, model.first_byte_latency_s * 1000.0),
	        ModelValue(model.bandwidth_samples, model.stream_bandwidth_bps / static_cast<double>(MiB)),
	        ModelValue(model.overhead_samples, model.learned_overhead_s * 1000.0),
	        Value::UBIGINT(model.latency_samples + model.bandwidth_samples + model.overhead_samples)};
}

unique_ptr<FunctionData> StatsBind(ClientContext &, TableFunctionBindInput &, vector<LogicalType> &return_types,
                                   vector<string> &names) {
	for (auto &column : StatsColumns()) {
		names.emplace_back(column.name);
		return_types.push_back(column.type);
	}
	return nullptr;
}

unique_ptr<GlobalTableFunctionState> StatsInit(ClientContext &context, TableFunctionInitInput &) {
	auto state = ExtensionState::Get(*context.db);
	auto result = make_uniq<RowsState>();
	auto model = state->cost_model.Snapshot();
	auto io_threads = state->io_pool.TargetSize();
	for (auto &entry : state->AllStats()) {
		result->rows.push_back(StatsRow(entry.first, entry.second->Snapshot(), model, io_threads));
	}
	return std::move(result);
}

unique_ptr<FunctionData> ResetBind(ClientContext &, TableFunctionBindInput &, vector<LogicalType> &return_types,
                                   vector<string> &names) {
	names.emplace_back("success");
	return_types.push_back(LogicalType::BOOLEAN);
	return nullptr;
}

unique_ptr<GlobalTableFunctionState> ResetInit(ClientContext &context, TableFunctionInitInput &) {
	auto state = ExtensionState::Get(*context.db);
	for (auto &entry : state->AllStats()) {
		entry.second->Reset();
	}
	auto result = make_uniq<RowsState>();
	result->rows.push_back({Value::BOOLEAN(true)});
	return std::move(result);
}

void EmitRows(ClientContext &, TableFunctionInput &input, DataChunk &output) {
	auto &state = input.global_state->Cast<RowsState>();
	idx_t count = 0;
	while (state.offset < state.rows.size() && count < STANDARD_VECTOR_SIZE) {
		auto &row = state.rows[state.offset++];
		for (idx_t column = 0; column < row.size(); column++) {
			output.SetValue(column, count, row[column]);
		}
		count++;
	}
	output.SetCardinality(count);
}

} // namespace

void RegisterStatsFunctions(ExtensionLoader &loader) {
	loader.RegisterFunction(TableFunction("httpfs2_stats", {}, EmitRows, StatsBind, StatsInit));
	loader.RegisterFunction(TableFunction("httpfs2_reset_stats", {}, EmitRows, ResetBind, ResetInit));
}

} // namespace httpfs2
