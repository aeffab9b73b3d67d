#include "adapter/stores/upload_requests.hpp"

#include "adapter/common/error_context.hpp"
#include "adapter/stores/store_http.hpp"
#include "core/requests/retry_policy.hpp"
#include "core/requests/s3_request.hpp"
#include "duckdb/common/exception/http_exception.hpp"
#include "duckdb/main/client_context.hpp"

#include <chrono>

namespace httpfs2 {

using duckdb::unique_ptr;
using std::string;

std::unique_ptr<UploadRequests> UploadRequests::For(const string &path,
                                                    duckdb::optional_ptr<duckdb::FileOpener> opener) {
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

void UploadRequests::RetryOrRethrow(const std::exception &error, duckdb::BaseRequest &request, const string &what,
                                    uint64_t attempt, uint64_t attempts, bool &in_doubt) {
	in_doubt = true;
	if (attempt >= attempts) {
		Rethrow(error, request, what);
	}
	RetryBackoff {params->retry_wait_ms, static_cast<double>(params->retry_backoff), MAX_RETRY_WAIT_MS}.Sleep(attempt);
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
