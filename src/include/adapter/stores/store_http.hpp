//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/store_http.hpp
//
// HTTP clients (connections) of httpfs2's own requests, kept between requests: a request takes an idle one or none
// (HTTPUtil then makes one), and gives it back only after a clean answer.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"
#include "duckdb/main/client_context_state.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace httpfs2 {

//! httpfs's parameters for requests to `path` (timeout, proxy, TLS, retries) with DuckDB's HTTP log off: it records
//! URLs and headers, which carry signatures, session tokens and SAS tokens.
duckdb::unique_ptr<duckdb::HTTPParams> QuietParams(duckdb::HTTPUtil &http, const std::string &path,
                                                   duckdb::optional_ptr<duckdb::FileOpener> opener);
//! QuietParams for a request that stands in for one the open makes anyway (a tail GET for the HEAD, a listing for the
//! next files' tail GETs): one attempt within `timeout_seconds`, so a store that stalls it does not hold the open up
//! for httpfs's http_timeout and retries; the open then goes on as without it.
duckdb::unique_ptr<duckdb::HTTPParams> StandInParams(duckdb::HTTPUtil &http, const std::string &path,
                                                     duckdb::optional_ptr<duckdb::FileOpener> opener,
                                                     uint64_t timeout_seconds);

//! A request takes an idle client or none (HTTPUtil then makes one), and gives it back only after a clean answer.
class ClientPool {
public:
	//! An idle client, or null.
	duckdb::unique_ptr<duckdb::HTTPClient> Take() {
		std::lock_guard<std::mutex> guard(lock);
		if (idle.empty()) {
			return nullptr;
		}
		auto client = std::move(idle.back());
		idle.pop_back();
		return client;
	}

	void GiveBack(duckdb::unique_ptr<duckdb::HTTPClient> client) {
		if (client) {
			std::lock_guard<std::mutex> guard(lock);
			idle.push_back(std::move(client));
		}
	}

private:
	std::mutex lock;
	std::vector<duckdb::unique_ptr<duckdb::HTTPClient>> idle;
};

//! Idle clients by the host they talk to (a request's proto_host_port).
class HostClientPools {
public:
	ClientPool &For(const std::string &proto_host_port) {
		std::lock_guard<std::mutex> guard(lock);
		auto &pool = pools[proto_host_port];
		if (!pool) {
			pool.reset(new ClientPool());
		}
		return *pool;
	}

private:
	std::mutex lock;
	std::map<std::string, std::unique_ptr<ClientPool>> pools;
};

//! The connections the uploads of a client context's transaction share, so that the parts of the many files of a
//! statement go on kept connections rather than each file opening its own. New ones for each transaction: a client
//! keeps the parameters (timeouts, proxy) it was made with, and a SET between statements must reach the next ones.
class UploadConnections : public duckdb::ClientContextState {
public:
	//! Those of `opener`'s client context; null without one.
	static std::shared_ptr<HostClientPools> For(duckdb::optional_ptr<duckdb::FileOpener> opener);

	//! A transaction begins with new ones (a commit hook before this one may have thrown, skipping the others').
	void TransactionBegin(duckdb::MetaTransaction &transaction, duckdb::ClientContext &context) override;
	void TransactionCommit(duckdb::MetaTransaction &transaction, duckdb::ClientContext &context) override;
	void TransactionRollback(duckdb::MetaTransaction &transaction, duckdb::ClientContext &context) override;

private:
	std::shared_ptr<HostClientPools> Current();
	void Drop();

	std::mutex lock;
	std::shared_ptr<HostClientPools> pools;
};

} // namespace httpfs2
