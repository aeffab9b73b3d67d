//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/common/query_state.hpp
//
// What httpfs2 keeps for one query of a client context (versions learnt, the order of a table's data files): found
// from any file opener of the query, and forgotten when a query begins and when it ends, so that each query sees
// changes and none inherits what a bind outside any query (the Python relation API's) learnt.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/file_opener.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/client_context_state.hpp"

namespace httpfs2 {

//! The base of such a state `T`: `T` names itself (`static const char *StateName()`) and forgets all in `Clear()`.
template <class T>
class QueryState : public duckdb::ClientContextState {
public:
	//! The state of the query `opener` belongs to; null without a client context.
	static duckdb::shared_ptr<T> Of(duckdb::optional_ptr<duckdb::FileOpener> opener) {
		auto context = duckdb::FileOpener::TryGetClientContext(opener);
		if (!context) {
			return nullptr;
		}
		return context->registered_state->GetOrCreate<T>(T::StateName());
	}

	void QueryBegin(duckdb::ClientContext &) override {
		static_cast<T &>(*this).Clear();
	}
	using ClientContextState::QueryEnd;
	void QueryEnd(duckdb::ClientContext &) override {
		static_cast<T &>(*this).Clear();
	}
};

} // namespace httpfs2
