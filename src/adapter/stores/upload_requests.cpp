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

unique_ptr<duckdb::HTTPResponse> UploadRequests::SendAttempts(const MakeRequest &make, const string &what,
                                                              uint64_t min_attempts, bool &in_doubt) {
	RequestAttempts attempts(RetryBackoffOf(*params, MAX_RETRY_WAIT_MS),
	                         std::max<uint64_t>(params->retries + 1, min_attempts), throttle_listeners);
	for (;;) {
		uint64_t signed_with = 0;
		auto &request = make(*single_attempt, signed_with);
		auto &pool = ClientsFor(request);
		auto client = pool.Take();
		unique_ptr<duckdb::HTTPResponse> response;
		std::exception_ptr failure;
		AttemptOutcome outcome;
		// httpfs throws what it would retry (no answer, 5xx, 429...) and answers a refusal (403, 404...).
		try {
			response = log.Send(http, request, &client);
			outcome = Judge(response.get(), request);
		} catch (duckdb::IOException &error) {
			failure = std::current_exception();
			outcome = IsThrottling(HttpStatusOf(error)) ? AttemptOutcome::THROTTLED : AttemptOutcome::FAILED;
		} catch (duckdb::HTTPException &error) {
			failure = std::current_exception();
			outcome = IsThrottling(HttpStatusOf(error)) ? AttemptOutcome::THROTTLED : AttemptOutcome::FAILED;
		}
		if (outcome == AttemptOutcome::DONE) {
			pool.GiveBack(std::move(client));
			return response;
		}
		auto refresh = [&]() {
			return refresh_credentials && refresh_credentials(signed_with);
		};
		bool again = attempts.Again(outcome, refresh);
		in_doubt = in_doubt || attempts.InDoubt();
		if (again) {
			continue;
		}
		if (!failure) {
			Check(response.get(), request, what); // throws: the answer is a refusal
		}
		try {
			std::rethrow_exception(failure);
		} catch (std::exception &error) {
			Rethrow(error, request, what);
		}
	}
}

unique_ptr<duckdb::HTTPResponse> UploadRequests::SendIdempotent(const MakeRequest &make, const string &what) {
	bool in_doubt = false; // the same bytes under the same name, whichever attempt arrived
	return SendAttempts(make, what, 1, in_doubt);
}

AttemptOutcome UploadRequests::Judge(const duckdb::HTTPResponse *response, const duckdb::BaseRequest &request) {
	if (!response) {
		return AttemptOutcome::FAILED;
	}
	if (response->Success()) {
		return AttemptOutcome::DONE;
	}
	auto status = static_cast<int>(response->status);
	if (RefusesCredentials(status, XmlElement(AnswerBody(*response, request), "Code"))) {
		return AttemptOutcome::CREDENTIALS_REFUSED;
	}
	// Answered, not thrown: httpfs would not retry it either.
	return IsThrottling(status) ? AttemptOutcome::THROTTLED : AttemptOutcome::REFUSED;
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
