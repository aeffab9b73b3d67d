//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/store_http.hpp
//
// HTTP clients (connections) of httpfs2's own requests, kept between requests: a request takes an idle one or none
// (HTTPUtil then makes one), and gives it back only after a clean answer.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/compat/duckdb_api.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"
#include "duckdb/main/client_context_state.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace httpfs2 {

//! DuckDB's HTTP log (`CALL enable_logging('HTTP')`, `duckdb_logs_parsed('HTTP')`) for the requests httpfs2 sends
//! itself, as httpfs's appear there, with what carries a credential or a signature redacted: the Authorization and
//! session token headers, a URL's query (an Azure SAS token). Written only while the connection that prepared the
//! request lives: a fetch ahead may end after its query, and at shutdown DuckDB tears its logging down first.
class RequestLog {
public:
	//! The HTTP log of the connection of `opener` that `params` came with; none without a client context.
	RequestLog(duckdb::HTTPParams &params, duckdb::optional_ptr<duckdb::FileOpener> opener);
	RequestLog() = default;

	//! Sends `request` (on `client` where given) with `http` and writes it to the log.
	duckdb::unique_ptr<duckdb::HTTPResponse> Send(duckdb::HTTPUtil &http, duckdb::BaseRequest &request,
	                                              duckdb::unique_ptr<duckdb::HTTPClient> *client = nullptr) const;
	//! The redacted form of `headers` that the log shows.
	static duckdb::HTTPHeaders Redacted(const duckdb::HTTPHeaders &headers);

private:
	void Write(duckdb::BaseRequest &request, duckdb::optional_ptr<duckdb::HTTPResponse> response,
	           const compat::RequestClock &clock) const;

	duckdb::shared_ptr<duckdb::Logger> logger;
	duckdb::weak_ptr<duckdb::ClientContext> context;
};

//! httpfs's parameters for requests to `path` (timeout, proxy, TLS, retries) without DuckDB's HTTP log, which would
//! record URLs and headers as they are (signatures, session tokens and SAS tokens): httpfs2 writes its requests there
//! itself, redacted, through the RequestLog it puts in `log`.
duckdb::unique_ptr<duckdb::HTTPParams> QuietParams(duckdb::HTTPUtil &http, const std::string &path,
                                                   duckdb::optional_ptr<duckdb::FileOpener> opener,
                                                   RequestLog *log = nullptr);
//! QuietParams for a request that stands in for one the open makes anyway (a tail GET for the HEAD, a listing for the
//! next files' tail GETs): one attempt within `timeout_seconds`, so a store that stalls it does not hold the open up
//! for httpfs's http_timeout and retries; the open then goes on as without it.
duckdb::unique_ptr<duckdb::HTTPParams> StandInParams(duckdb::HTTPUtil &http, const std::string &path,
                                                     duckdb::optional_ptr<duckdb::FileOpener> opener,
                                                     uint64_t timeout_seconds, RequestLog *log = nullptr);

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
		return *Shared(proto_host_port);
	}

	//! The pool of `proto_host_port`, for a holder that may outlive these pools (a reader kept past its transaction).
	std::shared_ptr<ClientPool> Shared(const std::string &proto_host_port) {
		std::lock_guard<std::mutex> guard(lock);
		auto &pool = pools[proto_host_port];
		if (!pool) {
			pool = std::make_shared<ClientPool>();
		}
		return pool;
	}

private:
	std::mutex lock;
	std::map<std::string, std::shared_ptr<ClientPool>> pools;
};

//! The connections httpfs2's own requests of a client context's transaction share: the parts of the many files of a
//! statement's uploads, and the range GETs of the many files it reads, go on kept connections rather than each file
//! opening its own (as S3 clients keep theirs per host: on S3 a new connection costs a TCP and a TLS handshake). New
//! ones for each transaction: a client keeps the parameters (timeouts, proxy, CA file) it was made with, and a SET
//! between statements must reach the next ones.
class UploadConnections : public duckdb::ClientContextState {
public:
	//! Those of `opener`'s client context; null without one.
	static std::shared_ptr<HostClientPools> For(duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! The pool of the host of `url` among those of `opener`'s client context; a pool of its own without one.
	static std::shared_ptr<ClientPool> ForUrl(duckdb::optional_ptr<duckdb::FileOpener> opener, const std::string &url);

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
