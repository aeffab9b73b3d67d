#include "adapter/extension/stats_functions.hpp"

#include "adapter/compat/duckdb_api.hpp"

#include "adapter/common/extension_state.hpp"
#include "adapter/extension/table_rows.hpp"
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

//! Columns after the counters (which come from COUNTER_SPECS).
const vector<Column> &ExtraColumns() {
	static const vector<Column> columns = {
	    {"fanout_histogram", LogicalType::MAP(LogicalType::UBIGINT, LogicalType::UBIGINT)},
	    {"io_threads", LogicalType::UBIGINT},
	    {"read_ahead_memory_limit", LogicalType::UBIGINT},
	    {"read_ahead_memory_in_use", LogicalType::UBIGINT},
	    {"read_ahead_memory_peak", LogicalType::UBIGINT},
	    {"upload_memory_limit", LogicalType::UBIGINT},
	    {"upload_memory_peak", LogicalType::UBIGINT},
	    {"upload_parts_in_flight_peak", LogicalType::UBIGINT},
	    {"upload_streams", LogicalType::UBIGINT},
	    {"model_first_byte_latency_ms", LogicalType::DOUBLE},
	    {"model_stream_bandwidth_mib_s", LogicalType::DOUBLE},
	    {"model_learned_overhead_ms", LogicalType::DOUBLE},
	    {"model_samples", LogicalType::UBIGINT},
	    {"streams", LogicalType::UBIGINT},
	    {"streams_settled", LogicalType::UBIGINT},
	    {"streams_throttles", LogicalType::UBIGINT},
	    {"cache_bytes_written", LogicalType::UBIGINT},
	    {"cache_bytes_evicted", LogicalType::UBIGINT},
	    {"cache_corrupt_blocks_removed", LogicalType::UBIGINT},
	    {"cache_writes_skipped", LogicalType::UBIGINT},
	    {"cache_write_failures", LogicalType::UBIGINT},
	    {"hedge_deadline_ms", LogicalType::DOUBLE},
	};
	return columns;
}

//! Durations are counted in microseconds and shown in seconds.
bool IsDuration(Counter counter) {
	return counter == Counter::SUB_READ_MICROS || counter == Counter::UPLOAD_CLOSE_MICROS ||
	       counter == Counter::THROTTLED_WAIT_MICROS || counter == Counter::GATE_WAIT_MICROS;
}

//! NULL until the model has a sample, so an unlearned value is never mistaken for a measurement.
Value ModelValue(uint64_t samples, double value) {
	return samples == 0 ? Value(LogicalType::DOUBLE) : Value::DOUBLE(value);
}

vector<Value> StatsRow(const string &name, const IoStatsSnapshot &stats, ExtensionState &state) {
	vector<Value> row {Value(name)};
	for (auto &spec : COUNTER_SPECS) {
		auto count = stats.Get(spec.counter);
		row.push_back(IsDuration(spec.counter) ? Value::DOUBLE(static_cast<double>(count) / 1e6)
		                                       : Value::UBIGINT(count));
	}
	vector<Value> keys;
	vector<Value> counts;
	for (idx_t fanout = 1; fanout < stats.fanout_histogram.size(); fanout++) {
		if (stats.fanout_histogram[fanout] > 0) {
			keys.push_back(Value::UBIGINT(fanout));
			counts.push_back(Value::UBIGINT(stats.fanout_histogram[fanout]));
		}
	}
	auto model = state.cost_model.Snapshot();
	auto &budget = state.read_ahead_budget;
	row.push_back(Value::MAP(LogicalType::UBIGINT, LogicalType::UBIGINT, std::move(keys), std::move(counts)));
	row.push_back(Value::UBIGINT(state.io_pool.TargetSize()));
	row.push_back(Value::UBIGINT(budget.Limit()));
	row.push_back(Value::UBIGINT(budget.InUse()));
	row.push_back(Value::UBIGINT(budget.Peak()));
	row.push_back(Value::UBIGINT(state.upload_budget->Limit()));
	row.push_back(Value::UBIGINT(state.upload_budget->Peak()));
	row.push_back(Value::UBIGINT(state.upload_budget->PartsInFlightPeak()));
	row.push_back(Value::UBIGINT(state.upload_budget->StreamsAllowed()));
	row.push_back(ModelValue(model.latency_samples, model.first_byte_latency_s * 1000.0));
	row.push_back(ModelValue(model.bandwidth_samples, model.stream_bandwidth_bps / static_cast<double>(MiB)));
	row.push_back(ModelValue(model.overhead_samples, model.learned_overhead_s * 1000.0));
	row.push_back(Value::UBIGINT(model.latency_samples + model.bandwidth_samples + model.overhead_samples));
	auto streams = state.cost_model.streams.Snapshot();
	row.push_back(Value::UBIGINT(streams.streams));
	row.push_back(Value::UBIGINT(streams.settled_streams));
	row.push_back(Value::UBIGINT(streams.throttles));
	// The database's cache writes, evicts and removes for all its readers: its own counters, since it was opened.
	BlockCacheCounters cache;
	if (auto current = state.CurrentCache()) {
		// The blocks that reads before this call handed over are counted once written (or failed).
		current->Flush();
		cache = current->Counters();
	}
	row.push_back(Value::UBIGINT(cache.bytes_written));
	row.push_back(Value::UBIGINT(cache.bytes_evicted));
	row.push_back(Value::UBIGINT(cache.corrupt_blocks_removed));
	row.push_back(Value::UBIGINT(cache.writes_skipped));
	row.push_back(Value::UBIGINT(cache.write_failures));
	row.push_back(Value::DOUBLE(state.hedges.Snapshot().deadline_seconds * 1000.0));
	return row;
}

unique_ptr<FunctionData> StatsBind(ClientContext &, TableFunctionBindInput &, vector<LogicalType> &return_types,
                                   vector<compat::ColumnName> &names) {
	names.emplace_back("filesystem");
	return_types.push_back(LogicalType::VARCHAR);
	for (auto &spec : COUNTER_SPECS) {
		names.emplace_back(spec.column);
		return_types.push_back(IsDuration(spec.counter) ? LogicalType::DOUBLE : LogicalType::UBIGINT);
	}
	for (auto &column : ExtraColumns()) {
		names.emplace_back(column.name);
		return_types.push_back(column.type);
	}
	return nullptr;
}

unique_ptr<GlobalTableFunctionState> StatsInit(ClientContext &context, TableFunctionInitInput &) {
	auto state = ExtensionState::Get(*context.db);
	auto result = make_uniq<RowsState>();
	for (auto &entry : state->AllStats()) {
		result->rows.push_back(StatsRow(entry.first, entry.second->Snapshot(), *state));
	}
	return std::move(result);
}

unique_ptr<FunctionData> ResetBind(ClientContext &, TableFunctionBindInput &, vector<LogicalType> &return_types,
                                   vector<compat::ColumnName> &names) {
	names.emplace_back("success");
	return_types.push_back(LogicalType::BOOLEAN);
	return nullptr;
}

unique_ptr<GlobalTableFunctionState> ResetInit(ClientContext &context, TableFunctionInitInput &) {
	auto state = ExtensionState::Get(*context.db);
	for (auto &entry : state->AllStats()) {
		entry.second->Reset();
	}
	state->read_ahead_budget.ResetPeak();
	state->upload_budget->ResetPeak();
	auto result = make_uniq<RowsState>();
	result->rows.push_back({Value::BOOLEAN(true)});
	return std::move(result);
}

} // namespace

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

void RegisterStatsFunctions(ExtensionLoader &loader) {
	loader.RegisterFunction(TableFunction("httpfs2_stats", {}, EmitRows, StatsBind, StatsInit));
	loader.RegisterFunction(TableFunction("httpfs2_reset_stats", {}, EmitRows, ResetBind, ResetInit));
}

} // namespace httpfs2
