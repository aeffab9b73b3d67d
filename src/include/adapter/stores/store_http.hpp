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
#include "core/common/cost_model.hpp"
#include "core/common/io_pool.hpp"
#include "core/requests/hedge_policy.hpp"
#include "core/requests/retry_policy.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"
#include "duckdb/main/client_context_state.hpp"

#include <functional>
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
//! Who hears of a throttled answer to a read's request of `path`: `stats`, the reads' `streams` (where given), the
//! database's hedging policy, the admission gate of the path's prefix (which the request's attempts pass first).
ThrottleListeners ReadThrottleListeners(duckdb::ClientContext &context, IoStats &stats, StreamController *streams,
                                        const std::string &path);

//! Whether `http`'s client calls a request's response handler as the head arrives (httpfs's httplib client), not once
//! the whole body is in (its curl client, HTTPFS-Curl).
bool HeadsBeforeBody(duckdb::HTTPUtil &http);

//! How a read's GETs are hedged (RequestRace): the database's policy and the threads hedged GETs are sent on, both
//! outliving the readers their threads keep (ExtensionState); and, where the client tells of an answer only with its
//! body, what that body adds to the wait (the streams' bandwidth the cost model learnt): a large GET is as slow as
//! its size, not a straggler.
struct ReadHedging {
	//! Null: not hedged (httpfs2_hedge_reads off for the open).
	HedgePolicy *policy = nullptr;
	IoPool *threads = nullptr;
	const CostModel *model = nullptr;
	bool heads_before_body = true;

	//! As the settings of `opener` (a connection of `context`'s database) say.
	static ReadHedging For(duckdb::ClientContext &context, duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! The rate a body of CostModel::MIN_BANDWIDTH_SAMPLE_BYTES or more is taken to come at until the cost model learnt
	//! one (a query's first GETs go out together, before any has ended): a slow stream's; a smaller body is mostly
	//! first byte and adds nothing then (a tail's hedge keeps within half its own deadline). On a faster link a stall
	//! among them is hedged later than it could be (a 2 MiB piece 0.25 s later); on a slower one a GET may be hedged
	//! for its body, within the hedge budget.
	static constexpr double COLD_BYTES_PER_SECOND = 8.0 * 1024 * 1024;

	//! The seconds a body of `bytes` adds to an answer's first byte (at most HedgePolicy's cold deadline while the rate
	//! is assumed).
	double BodySeconds(uint64_t bytes) const;
};

//! Whether the query of `context`'s connection was interrupted, or the connection is gone (no query is left to send
//! for): what the attempts of a request sent for that connection, and their waits at the gate, stop for
//! (RequestAttempts::CancelWith). Holds the connection weakly.
std::function<bool()> QueryCancelled(duckdb::ClientContext &context);

//! The HTTP status an error of httpfs's carries (an HTTPException's), else 0.
int HttpStatusOf(const std::exception &error);
//! Whether `error` is a request's failure as httpfs throws it (IO or HTTP), told by the type DuckDB records, not the
//! C++ class: httpfs throws some again from their ErrorData as a plain Exception of that type.
bool IsTransferFailure(const std::exception &error);

//! The waits between attempts that httpfs's retry settings in `params` ask for (and DuckDB 2.0's
//! http_retry_throttled_wait_ms), none longer than `max_wait_ms` (0: no bound).
RetryBackoff RetryBackoffOf(const duckdb::HTTPParams &params, uint64_t max_wait_ms = 0);

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
