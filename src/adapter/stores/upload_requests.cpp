#include "adapter/stores/upload_requests.hpp"

#include "adapter/filesystem/error_context.hpp"
#include "duckdb/common/exception/http_exception.hpp"
#include "duckdb/main/client_context.hpp"

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
	duckdb::FileOpenerInfo info {path};
	return std::unique_ptr<UploadRequests>(new UploadRequests(path, http, http.InitializeParameters(opener, &info)));
}

UploadRequests::UploadRequests(string path_p, duckdb::HTTPUtil &http_p, unique_ptr<duckdb::HTTPParams> params_p)
    : path(std::move(path_p)), http(http_p), params(std::move(params_p)) {
	params->logger = nullptr;
}

unique_ptr<duckdb::HTTPResponse> UploadRequests::Send(duckdb::BaseRequest &request, const string &what) {
	auto client = TakeClient();
	unique_ptr<duckdb::HTTPResponse> response;
	try {
		response = http.Request(request, client);
	} catch (std::exception &error) {
		RethrowWithContext(error, "httpfs2: " + what + " of '" + path + "' failed: ", request.url);
	}
	if (!response) {
		throw duckdb::IOException("httpfs2: %s of '%s' failed: no answer", what, path);
	}
	if (!response->Success()) {
		throw duckdb::HTTPException(*response, "httpfs2: %s of '%s' failed: HTTP %d", what, path,
		                            static_cast<int>(response->status));
	}
	GiveBack(std::move(client));
	return response;
}

bool UploadRequests::TrySend(duckdb::BaseRequest &request) noexcept {
	try {
		auto client = TakeClient();
		return http.Request(request, client) != nullptr;
	} catch (...) {
		return false;
	}
}

unique_ptr<duckdb::HTTPClient> UploadRequests::TakeClient() {
	std::lock_guard<std::mutex> guard(lock);
	if (idle.empty()) {
		return nullptr;
	}
	auto client = std::move(idle.back());
	idle.pop_back();
	return client;
}

void UploadRequests::GiveBack(unique_ptr<duckdb::HTTPClient> client) {
	if (client) {
		std::lock_guard<std::mutex> guard(lock);
		idle.push_back(std::move(client));
	}
}

} // namespace httpfs2
