//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/upload_requests.hpp
//
// What the requests of one upload share, whatever the store: DuckDB's HTTPUtil (httpfs's client: its retries, its
// errors), HTTP parameters without DuckDB's HTTP log (it records headers and URLs, which carry signatures and SAS
// tokens), connections kept alive and reused by the parts of the transaction's uploads, and failures that name the file
// and the request.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/stores/store_http.hpp"
#include "core/common/io_stats.hpp"
#include "core/common/stream_controller.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace httpfs2 {

class UploadRequests {
public:
	//! The requests of an upload of `path`; null without a client context or when the HTTP client cannot send a PUT
	//! (DuckDB's built-in one, used while httpfs is not loaded).
	static std::unique_ptr<UploadRequests> For(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                           IoStats &stats);

	//! What requests are built with.
	duckdb::HTTPParams &Params() {
		return *params;
	}
	//! Sends `request` on a kept connection; its successful answer. On failure throws httpfs's error (its type and
	//! status code) or an HTTPException with the status, the message starting "httpfs2: <what> of '<path>' failed: "
	//! and the request's URL redacted.
	duckdb::unique_ptr<duckdb::HTTPResponse> Send(duckdb::BaseRequest &request, const std::string &what);
	//! Sends the request `make` builds (afresh for each attempt, with the parameters given) with the attempts made
	//! here, one at a time, rather than in httpfs's retry loop, for a request whose lost answers matter: S3's
	//! CreateMultipartUpload, each arrival of which begins an upload, and the abort that must not give up early.
	//! Attempts follow httpfs's policy (http_retries, http_retry_wait_ms, http_retry_backoff, no wait over
	//! MAX_RETRY_WAIT_MS) and are at least `min_attempts`; `in_doubt` becomes true when one failed in a way that may
	//! have reached the store (no answer, or a status httpfs retries). Answer and failures as Send's.
	duckdb::unique_ptr<duckdb::HTTPResponse>
	SendAttempts(const std::function<duckdb::BaseRequest &(duckdb::HTTPParams &)> &make, const std::string &what,
	             uint64_t min_attempts, bool &in_doubt);
	//! SendAttempts for a request that may arrive twice (a PUT of a part or of a whole object: the same bytes under
	//! the same name), so that an answer asking to slow down is seen here: the uploads' streams are halved and the
	//! retry waits (RetryBackoff::Throttled), where httpfs's retry loop would retry it at once.
	duckdb::unique_ptr<duckdb::HTTPResponse>
	SendIdempotent(const std::function<duckdb::BaseRequest &(duckdb::HTTPParams &)> &make, const std::string &what);

	static constexpr uint64_t MAX_RETRY_WAIT_MS = 1000;

	const std::string path;

private:
	UploadRequests(std::string path, duckdb::HTTPUtil &http, duckdb::unique_ptr<duckdb::HTTPParams> params,
	               duckdb::unique_ptr<duckdb::HTTPParams> single_attempt, std::shared_ptr<HostClientPools> shared);
	//! Where `request` takes a kept connection and gives it back: the transaction's, else this upload's own.
	ClientPool &ClientsFor(const duckdb::BaseRequest &request);
	//! After attempt `attempt` of `attempts` failed: waits for the next, or throws the failure as Send does.
	void RetryOrRethrow(const std::exception &error, duckdb::BaseRequest &request, const std::string &what,
	                    uint64_t attempt, uint64_t attempts, bool &in_doubt);
	[[noreturn]] void Rethrow(const std::exception &error, duckdb::BaseRequest &request, const std::string &what);
	//! Throws unless `response` is a success.
	void Check(duckdb::HTTPResponse *response, const std::string &what);

	duckdb::HTTPUtil &http;
	const duckdb::unique_ptr<duckdb::HTTPParams> params;
	//! As `params`, without retries: SendAttempts makes them.
	const duckdb::unique_ptr<duckdb::HTTPParams> single_attempt;
	//! Where its requests are logged (QuietParams).
	RequestLog log;
	//! The filesystem's stats and the database's upload streams (UploadBudget::streams), told of throttled answers.
	IoStats *stats = nullptr;
	StreamController *streams = nullptr;
	//! The connections of the uploads of this transaction (UploadConnections); null: `clients` alone.
	const std::shared_ptr<HostClientPools> shared;
	ClientPool clients;
};

} // namespace httpfs2
