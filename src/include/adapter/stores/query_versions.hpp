//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/query_versions.hpp
//
// The object versions httpfs2 learnt with requests of its own during one query (an az:// blob's lookup, an s3://
// file's tail GET), so that the query's later opens of the same path (the scan's after the bind's) make no request,
// as httpfs answers them from what its first open learnt. Forgotten when the query ends, so each query sees changes,
// and when one begins, so that what a bind outside any query learnt (the Python relation API's) is not taken for it.
// A path httpfs2 fetches whole ahead of its open (an Iceberg manifest its list names) is awaited: its open waits for
// the fetch, then takes the version and the bytes it gave.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/stores/object_version.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/main/client_context_state.hpp"

#include <condition_variable>
#include <functional>
#include <memory>
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

	//! The version of `path` learnt in this query; waits first while it is awaited (Expect), unless `give_up` says
	//! to stop (the query was interrupted).
	bool Find(const std::string &path, ObjectVersion &version, const std::function<bool()> &give_up = nullptr);
	void Store(const std::string &path, const ObjectVersion &version);
	//! Forgets `path` (it is being written).
	void Forget(const std::string &path);

	//! `path` is about to be fetched whole for this query: its opens wait for Deliver or Abandon. The number to give
	//! them back, or 0 when the path's version is known or awaited already (nothing to fetch).
	uint64_t Expect(const std::string &path);
	//! What the fetch `expected` (Expect's number) of `path` gave; ignored once its query ended.
	void Deliver(const std::string &path, const ObjectVersion &version, std::shared_ptr<std::string> bytes,
	             uint64_t expected);
	void Abandon(const std::string &path, uint64_t expected);
	//! The bytes delivered for `path`, handed out once (the taker may move them out).
	std::shared_ptr<std::string> TakeBytes(const std::string &path);

private:
	//! An open waits this long at most for a fetch (whose own timeouts end it first).
	static constexpr int MAX_WAIT_SECONDS = 300;

	void Clear();

	std::mutex lock;
	std::condition_variable delivered;
	std::unordered_map<std::string, ObjectVersion> versions;
	//! Awaited paths, with the number Expect gave each.
	std::unordered_map<std::string, uint64_t> awaited;
	std::unordered_map<std::string, std::shared_ptr<std::string>> bytes;
	uint64_t expectations = 0;
};

} // namespace httpfs2
