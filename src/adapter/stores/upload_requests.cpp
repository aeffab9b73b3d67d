#include "adapter/stores/upload_requests.hpp"

#include "adapter/common/error_context.hpp"
#include "adapter/common/extension_state.hpp"
#include "duckdb/common/error_data.hpp"
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
	requests->stats = &stats;
	requests->streams = &ExtensionState::Get(*context->db)->upload_budget->streams;
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

unique_ptr<duckdb::HTTPResponse> UploadRequests::Send(duckdb::BaseRequest &request, const string &what) {
	auto &pool = ClientsFor(request);
	auto client = pool.Take();
	unique_ptr<duckdb::HTTPResponse> response;
	try {
		response = log.Send(http, request, &client);
	} catch (std::exception &error) {
		Rethrow(error, request, what);
	}
	Check(response.get(), what);
	pool.GiveBack(std::move(client));
	return response;
}

unique_ptr<duckdb::HTTPResponse>
UploadRequests::SendAttempts(const std::function<duckdb::BaseRequest &(duckdb::HTTPParams &)> &make, const string &what,
                             uint64_t min_attempts, bool &in_doubt) {
	auto attempts = std::max<uint64_t>(params->retries + 1, min_attempts);
	for (uint64_t attempt = 1;; attempt++) {
		auto &request = make(*single_attempt);
		auto &pool = ClientsFor(request);
		auto client = pool.Take();
		unique_ptr<duckdb::HTTPResponse> response;
		// httpfs throws what it would retry (no answer, 5xx, 429...) and answers a refusal (403, 404...), which
		// Check throws: nothing was done, so nothing is retried.
		try {
			response = log.Send(http, request, &client);
		} catch (duckdb::IOException &error) {
			RetryOrRethrow(error, request, what, attempt, attempts, in_doubt);
			continue;
		} catch (duckdb::HTTPException &error) {
			RetryOrRethrow(error, request, what, attempt, attempts, in_doubt);
			continue;
		}
		Check(response.get(), what);
		pool.GiveBack(std::move(client));
		return response;
	}
}

unique_ptr<duckdb::HTTPResponse>
UploadRequests::SendIdempotent(const std::function<duckdb::BaseRequest &(duckdb::HTTPParams &)> &make,
                               const string &what) {
	bool in_doubt = false; // the same bytes under the same name, whichever attempt arrived
	return SendAttempts(make, what, 1, in_doubt);
}

namespace {
//! The HTTP status an error of httpfs's carries (an HTTPException's), else 0.
int StatusOf(const std::exception &error) {
	duckdb::ErrorData data(error);
	auto status = data.ExtraInfo().find("status_code");
	if (status == data.ExtraInfo().end()) {
		return 0;
	}
	try {
		return std::stoi(status->second);
	} catch (std::exception &) {
		return 0;
	}
}
} // namespace

void UploadRequests::RetryOrRethrow(const std::exception &error, duckdb::BaseRequest &request, const string &what,
                                    uint64_t attempt, uint64_t attempts, bool &in_doubt) {
	in_doubt = true;
	bool throttled = IsThrottling(StatusOf(error));
	if (throttled) {
		// Sent too fast for the store: fewer parts at once from now on, for every upload of the database.
		streams->Throttled();
		stats->Add(Counter::THROTTLED_ANSWERS);
	}
	if (attempt >= attempts) {
		Rethrow(error, request, what);
	}
	RetryBackoff backoff {params->retry_wait_ms, static_cast<double>(params->retry_backoff), MAX_RETRY_WAIT_MS};
	if (!throttled) {
		backoff.Sleep(attempt);
		return;
	}
	auto wait = backoff.Throttled(attempt, RetryJitter());
	std::this_thread::sleep_for(wait);
	stats->Add(Counter::THROTTLED_WAIT_MICROS, static_cast<uint64_t>(wait.count()) * 1000);
}

void UploadRequests::Rethrow(const std::exception &error, duckdb::BaseRequest &request, const string &what) {
	RethrowWithContext(error, "httpfs2: " + what + " of '" + path + "' failed: ", request.url);
}

void UploadRequests::Check(duckdb::HTTPResponse *response, const string &what) {
	if (!response) {
		throw duckdb::IOException("httpfs2: %s of '%s' failed: no answer", what, path);
	}
	if (!response->Success()) {
		// The store's error code (NoSuchUpload, AccessDenied...), as httpfs's own messages carry it.
		auto code = XmlElement(response->body, "Code");
		throw duckdb::HTTPException(*response, "httpfs2: %s of '%s' failed: HTTP %d%s", what, path,
		                            static_cast<int>(response->status), code.empty() ? string() : " " + code);
	}
}

} // namespace httpfs2
