//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/query_versions.hpp
//
// The object versions httpfs2 learnt with requests of its own during one query (an az:// blob's lookup, an s3://
// file's tail GET), so that the query's later opens of the same path (the scan's after the bind's) make no request,
// as httpfs answers them from what its first open learnt. Forgotten when the query ends, so each query sees changes,
// and when one begins, so that what a bind outside any query learnt (the Python relation API's) is not taken for it.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/stores/object_version.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/main/client_context_state.hpp"

#include <mutex>
#include <string>
#include <unordered_map>

namespace httpfs2 {

class QueryVersions : public duckdb::ClientContextState {
public:
	//! The versions of the query `opener` belongs to; null without a client context.
	static duckdb::shared_ptr<QueryVersions> Of(duckdb::optional_ptr<duckdb::FileOpener> opener);

	void QueryBegin(duckdb::ClientContext &context) override;
	using ClientContextState::QueryEnd;
	void QueryEnd(duckdb::ClientContext &context) override;

	bool Find(const std::string &path, ObjectVersion &version);
	void Store(const std::string &path, const ObjectVersion &version);
	//! Forgets `path` (it is being written).
	void Forget(const std::string &path);

private:
	void Clear();

	std::mutex lock;
	std::unordered_map<std::string, ObjectVersion> versions;
};

} // namespace httpfs2
