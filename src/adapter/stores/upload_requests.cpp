#include "adapter/stores/upload_requests.hpp"

#include "adapter/common/error_context.hpp"
#include "adapter/common/extension_state.hpp"
#include "adapter/stores/store_http.hpp"
#include "core/requests/retry_policy.hpp"
#include "core/requests/s3_request.hpp"
#include "duckdb/common/exception/http_exception.hpp"
#include "duckdb/main/client_context.hpp"

#include <chrono>
#include <thread>

namespace httpfs2 {

using duckdb::unique_ptr;
using std::string;

std::unique_ptr<UploadRequests> UploadRequests::For(const string &path, duckdb::optional_ptr<duckdb::FileOpener> opener,
                                                    IoStats &stats) {
	auto context = duckdb::FileOpener::TryGetClientContext(opener);
	if (!context) {
		return nullptr;
	}
	auto &http = duckdb::HTTPUtil::Get(*context->db);
	// DuckDB's own client ("Built-In", in use while httpfs is not loaded) throws NotImplementedException on a PUT.
	if (http.GetName() == "Built-In") {
		return nullptr;
	}
	RequestLog log;
	auto params = QuietParams(http, path, opener, &log);
	std::unique_ptr<UploadRequests> requests(new UploadRequests(
	    path, http, std::move(params), QuietParams(http, path, opener), UploadConnections::For(opener)));
	requests->log = std::move(log);
	auto state = ExtensionState::Get(*context->db);
	requests->throttle_listeners.stats = &stats;
	requests->throttle_listeners.streams = &state->upload_budget->streams;
	requests->throttle_listeners.hedges = &state->upload_hedges;
	requests->throttle_listeners.gate = state->request_gates.For(path, StreamController::Now());
	requests->cancelled = QueryCancelled(*context);
	return requests;
}

UploadRequests::UploadRequests(string path_p, duckdb::HTTPUtil &http_p, unique_ptr<duckdb::HTTPParams> params_p,
                               unique_ptr<duckdb::HTTPParams> single_attempt_p,
                               std::shared_ptr<HostClientPools> shared_p)
    : path(std::move(path_p)), http(http_p), params(std::move(params_p)), single_attempt(std::move(single_attempt_p)),
      shared(std::move(shared_p)) {
	single_attempt->retries = 0;
}

ClientPool &UploadRequests::ClientsFor(const duckdb::BaseRequest &request) {
	return shared ? shared->For(request.proto_host_port) : clients;
}

//! One attempt of a request: what it was sent as and on, and its answer or the failure httpfs threw.
struct UploadRequests::Attempt {
	duckdb::BaseRequest *request = nullptr;
	//! The generation of the credentials it was signed with.
	uint64_t signed_with = 0;
	//! A kept connection, given back only after a clean answer.
	unique_ptr<duckdb::HTTPClient> client;
	unique_ptr<duckdb::HTTPResponse> response;
	std::exception_ptr failure;
};

AttemptOutcome UploadRequests::Send(const MakeRequest &make, Attempt &attempt) {
	auto &request = make(*single_attempt, attempt.signed_with);
	attempt.request = &request;
	auto &pool = ClientsFor(request);
	attempt.client = pool.Take();
	AttemptOutcome outcome;
	// httpfs throws what it would retry (no answer, 5xx, 429...) and answers a refusal (403, 404...).
	try {
		attempt.response = log.Send(http, request, &attempt.client);
		outcome = Judge(attempt.response.get(), request);
	} catch (std::exception &error) {
		if (!IsTransferFailure(error)) {
			throw; // an interrupt, a setting refused: not the request's to retry
		}
		attempt.failure = std::current_exception();
		outcome = OutcomeOfStatus(HttpStatusOf(error), string(), true);
	}
	if (outcome == AttemptOutcome::DONE) {
		pool.GiveBack(std::move(attempt.client));
	}
	return outcome;
}

unique_ptr<duckdb::HTTPResponse> UploadRequests::SendAttempts(const MakeRequest &make, const string &what,
                                                              uint64_t min_attempts, bool &in_doubt) {
	return SendUntil(make, what, min_attempts, in_doubt, nullptr);
}

unique_ptr<duckdb::HTTPResponse> UploadRequests::SendCleanup(const MakeRequest &make, const string &what,
                                                             uint64_t min_attempts, bool &in_doubt) {
	return SendUntil(make, what, min_attempts, in_doubt, nullptr, false);
}

unique_ptr<duckdb::HTTPResponse> UploadRequests::SendUntil(const MakeRequest &make, const string &what,
                                                           uint64_t min_attempts, bool &in_doubt,
                                                           const std::function<bool()> &until, bool paced) {
	RequestAttempts attempts(RetryBackoffOf(*params, MAX_RETRY_WAIT_MS),
	                         std::max<uint64_t>(params->retries + 1, min_attempts), throttle_listeners);
	if (!paced) {
		attempts.Unpaced();
	}
	attempts.ReportDoubtTo(in_doubt);
	if (until) {
		attempts.CancelWith(until);
	}
	Attempt attempt;
	auto send = [&](Attempt &sent) {
		return Send(make, sent);
	};
	auto refresh = [&](const Attempt &refused) {
		return refresh_credentials && refresh_credentials(refused.signed_with);
	};
	if (attempts.Run(attempt, send, refresh) == AttemptOutcome::DONE) {
		return std::move(attempt.response);
	}
	if (attempts.Cancelled()) {
		throw duckdb::InterruptException();
	}
	if (!attempt.failure) {
		Check(attempt.response.get(), *attempt.request, what); // throws: the answer is a refusal
	}
	try {
		std::rethrow_exception(attempt.failure);
	} catch (std::exception &error) {
		Rethrow(error, *attempt.request, what);
	}
}

unique_ptr<duckdb::HTTPResponse> UploadRequests::SendIdempotent(const MakeRequest &make, const string &what) {
	bool in_doubt = false; // the same bytes under the same name, whichever attempt arrived
	return SendAttempts(make, what, 1, in_doubt);
}

unique_ptr<duckdb::HTTPResponse> UploadRequests::SendData(const MakeRequest &make, const string &what) {
	bool in_doubt = false; // as SendIdempotent's
	return SendUntil(make, what, 1, in_doubt, cancelled);
}

AttemptOutcome UploadRequests::Judge(const duckdb::HTTPResponse *response, const duckdb::BaseRequest &request) {
	if (!response) {
		return AttemptOutcome::FAILED;
	}
	if (response->Success()) {
		return AttemptOutcome::DONE;
	}
	// Answered, not thrown: httpfs would not retry it either.
	return OutcomeOfStatus(static_cast<int>(response->status), XmlElement(AnswerBody(*response, request), "Code"),
	                       false);
}

void UploadRequests::Rethrow(const std::exception &error, duckdb::BaseRequest &request, const string &what) {
	RethrowWithContext(error, "httpfs2: " + what + " of '" + path + "' failed: ", request.url);
}

const string &UploadRequests::AnswerBody(const duckdb::HTTPResponse &response, const duckdb::BaseRequest &request) {
	// httpfs's httplib client leaves a POST's answer in the request's buffer, and in 2a6481d (DuckDB 2.0) puts the
	// POST's own body (a CompleteMultipartUpload's list of parts) in the response's.
	if (request.type == duckdb::RequestType::POST_REQUEST) {
		auto &answer = static_cast<const duckdb::PostRequestInfo &>(request).buffer_out;
		if (!answer.empty()) {
			return answer;
		}
	}
	return response.body;
}

void UploadRequests::Check(duckdb::HTTPResponse *response, const duckdb::BaseRequest &request, const string &what) {
	if (!response) {
		throw duckdb::IOException("httpfs2: %s of '%s' failed: no answer", what, path);
	}
	if (!response->Success()) {
		// The store's error code (NoSuchUpload, AccessDenied...), as httpfs's own messages carry it.
		auto code = XmlElement(AnswerBody(*response, request), "Code");
		throw duckdb::HTTPException(*response, "httpfs2: %s of '%s' failed: HTTP %d%s", what, path,
		                            static_cast<int>(response->status), code.empty() ? string() : " " + code);
	}
}

} // namespace httpfs2
