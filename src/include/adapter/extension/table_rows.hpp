//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/extension/table_rows.hpp
//
// What httpfs2's table functions share: rows computed once at init, then emitted in chunks.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb.hpp"
#include "duckdb/function/table_function.hpp"

namespace httpfs2 {

//! Rows computed once at init and then emitted in chunks.
struct RowsState : public duckdb::GlobalTableFunctionState {
	duckdb::vector<duckdb::vector<duckdb::Value>> rows;
	duckdb::idx_t offset = 0;
};

//! The table function that emits a RowsState's rows.
void EmitRows(duckdb::ClientContext &context, duckdb::TableFunctionInput &input, duckdb::DataChunk &output);

} // namespace httpfs2
