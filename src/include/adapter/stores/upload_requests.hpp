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
#include "core/requests/retry_policy.hpp"
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
	//! Builds an attempt's request (afresh for each: signed now) with the parameters given; `signed_with` gets the
	//! generation of the credentials it was signed with, where they can be refreshed (RefreshCredentialsWith).
	using MakeRequest = std::function<duckdb::BaseRequest &(duckdb::HTTPParams &params, uint64_t &signed_with)>;

	//! Sends the request `make` builds on a kept connection, with the attempts of the one retry policy
	//! (RequestAttempts) rather than httpfs's retry loop, so that each answer is seen here: one asking to slow down
	//! halves the uploads' streams and waits (RetryBackoff::Throttled), one refusing the credentials is sent once more
	//! when they changed. Attempts follow httpfs's policy (http_retries, http_retry_wait_ms, http_retry_backoff, no
	//! wait over MAX_RETRY_WAIT_MS) and are at least `min_attempts`; `in_doubt` becomes true when one failed in a way
	//! that may have reached the store (no answer, or a status httpfs retries), which matters to a request whose every
	//! arrival counts (S3's CreateMultipartUpload begins an upload each time). Returns the successful answer; throws
	//! httpfs's error (its type and status code) or an HTTPException with the status, the message starting
	//! "httpfs2: <what> of '<path>' failed: " and the request's URL redacted.
	duckdb::unique_ptr<duckdb::HTTPResponse> SendAttempts(const MakeRequest &make, const std::string &what,
	                                                      uint64_t min_attempts, bool &in_doubt);
	//! SendAttempts for a request that ends an abandoned upload (an abort, the listing that finds begins whose answer
	//! was lost): not held to the prefix's pace at its gate (told of its answer all the same). One request that takes
	//! load off the store, which behind the turns the throttled parts took would keep the upload open seconds longer.
	duckdb::unique_ptr<duckdb::HTTPResponse> SendCleanup(const MakeRequest &make, const std::string &what,
	                                                     uint64_t min_attempts, bool &in_doubt);
	//! SendAttempts for a request that may arrive twice (a part, a whole object, a HEAD: the same bytes under the same
	//! name, whichever attempt arrived).
	duckdb::unique_ptr<duckdb::HTTPResponse> SendIdempotent(const MakeRequest &make, const std::string &what);
	//! SendIdempotent for an upload's data (a part, a block, a whole object): once the query of the connection that
	//! writes is cancelled, no other attempt is sent nor waited for (at the gate, or before a retry) and it throws an
	//! InterruptException, as a read's requests do. Requests that end an upload (complete, abort, their checks) are
	//! sent whatever the query.
	duckdb::unique_ptr<duckdb::HTTPResponse> SendData(const MakeRequest &make, const std::string &what);
	//! After a refusal of the credentials an attempt was signed with (their generation): true when they changed and
	//! the next attempt signs with the new ones (S3CredentialSource::Refresh). None: refusals stand.
	void RefreshCredentialsWith(std::function<bool(uint64_t signed_with)> refresh) {
		refresh_credentials = std::move(refresh);
	}

	static constexpr uint64_t MAX_RETRY_WAIT_MS = 1000;

	const std::string path;

private:
	UploadRequests(std::string path, duckdb::HTTPUtil &http, duckdb::unique_ptr<duckdb::HTTPParams> params,
	               duckdb::unique_ptr<duckdb::HTTPParams> single_attempt, std::shared_ptr<HostClientPools> shared);
	struct Attempt;

	//! Where `request` takes a kept connection and gives it back: the transaction's, else this upload's own.
	ClientPool &ClientsFor(const duckdb::BaseRequest &request);
	//! SendAttempts, stopped once `cancelled` says so (when set), held to the prefix's pace where `paced`.
	duckdb::unique_ptr<duckdb::HTTPResponse> SendUntil(const MakeRequest &make, const std::string &what,
	                                                   uint64_t min_attempts, bool &in_doubt,
	                                                   const std::function<bool()> &until, bool paced = true);
	//! Sends one attempt of the request `make` builds into `attempt`: what it came to.
	AttemptOutcome Send(const MakeRequest &make, Attempt &attempt);
	//! What an attempt of `request` answered `response` came to.
	static AttemptOutcome Judge(const duckdb::HTTPResponse *response, const duckdb::BaseRequest &request);
	[[noreturn]] void Rethrow(const std::exception &error, duckdb::BaseRequest &request, const std::string &what);
	//! The body of the answer `response` to `request`: the store's error document when it refused.
	static const std::string &AnswerBody(const duckdb::HTTPResponse &response, const duckdb::BaseRequest &request);
	//! Throws unless `response` (to `request`) is a success.
	void Check(duckdb::HTTPResponse *response, const duckdb::BaseRequest &request, const std::string &what);

	duckdb::HTTPUtil &http;
	const duckdb::unique_ptr<duckdb::HTTPParams> params;
	//! As `params`, without retries: SendAttempts makes them.
	const duckdb::unique_ptr<duckdb::HTTPParams> single_attempt;
	//! Where its requests are logged (QuietParams).
	RequestLog log;
	//! The filesystem's stats and the database's upload streams (UploadBudget::streams), told of throttled answers.
	ThrottleListeners throttle_listeners;
	std::function<bool(uint64_t)> refresh_credentials;
	//! The query of the connection that writes was cancelled (QueryCancelled): SendData stops.
	std::function<bool()> cancelled;
	//! The connections of the uploads of this transaction (UploadConnections); null: `clients` alone.
	const std::shared_ptr<HostClientPools> shared;
	ClientPool clients;
};

} // namespace httpfs2
