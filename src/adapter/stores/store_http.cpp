#include "adapter/stores/store_http.hpp"

#include "adapter/common/extension_state.hpp"
#include "adapter/common/session_settings.hpp"
#include "core/requests/url_redaction.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/logging/logger.hpp"
#include "duckdb/main/client_context.hpp"

#include <algorithm>

namespace httpfs2 {

RequestLog::RequestLog(duckdb::HTTPParams &params, duckdb::optional_ptr<duckdb::FileOpener> opener)
    : logger(params.logger) {
	auto client_context = duckdb::FileOpener::TryGetClientContext(opener);
	if (client_context) {
		context = client_context->shared_from_this();
	} else {
		logger = nullptr;
	}
}

duckdb::HTTPHeaders RequestLog::Redacted(const duckdb::HTTPHeaders &headers) {
	duckdb::HTTPHeaders redacted;
	for (auto &header : headers) {
		auto name = duckdb::StringUtil::Lower(header.first);
		bool secret = name == "authorization" || name == "x-amz-security-token" || name == "proxy-authorization" ||
		              name == "x-ms-copy-source-authorization";
		redacted.Insert(header.first, secret ? "REDACTED" : header.second);
	}
	return redacted;
}

void RequestLog::Write(duckdb::BaseRequest &request, duckdb::optional_ptr<duckdb::HTTPResponse> response,
                       const compat::RequestClock &clock) const {
	auto alive = context.lock();
	if (!alive || !logger->ShouldLog(duckdb::HTTPLogType::NAME, duckdb::HTTPLogType::LEVEL)) {
		return;
	}
	duckdb::BaseRequest logged(request.type, RedactUrl(request.url), Redacted(request.headers), request.params);
	logged.request_body_length = request.request_body_length;
	clock.Stamp(logged);
	logger->WriteLog(duckdb::HTTPLogType::NAME, duckdb::HTTPLogType::LEVEL, compat::HttpLogMessage(logged, response));
}

duckdb::unique_ptr<duckdb::HTTPResponse> RequestLog::Send(duckdb::HTTPUtil &http, duckdb::BaseRequest &request,
                                                          duckdb::unique_ptr<duckdb::HTTPClient> *client) const {
	if (!logger) {
		return client ? http.Request(request, *client) : http.Request(request);
	}
	compat::RequestClock clock;
	duckdb::unique_ptr<duckdb::HTTPResponse> response;
	try {
		response = client ? http.Request(request, *client) : http.Request(request);
	} catch (...) {
		Write(request, nullptr, clock);
		throw;
	}
	Write(request, response.get(), clock);
	return response;
}

duckdb::unique_ptr<duckdb::HTTPParams> QuietParams(duckdb::HTTPUtil &http, const std::string &path,
                                                   duckdb::optional_ptr<duckdb::FileOpener> opener, RequestLog *log) {
	duckdb::FileOpenerInfo info {path};
	auto params = http.InitializeParameters(opener, &info);
	if (log) {
		*log = RequestLog(*params, opener);
	}
	params->logger = nullptr;
	return params;
}

ThrottleListeners ReadThrottleListeners(duckdb::ClientContext &context, IoStats &stats, StreamController *streams,
                                        const std::string &path) {
	auto state = ExtensionState::Get(*context.db);
	ThrottleListeners listeners;
	listeners.stats = &stats;
	listeners.streams = streams;
	listeners.hedges = &state->hedges;
	listeners.gate = state->request_gates.For(path, StreamController::Now());
	return listeners;
}

bool HeadsBeforeBody(duckdb::HTTPUtil &http) {
	return http.GetName() == "HTTPFS";
}

ReadHedging ReadHedging::For(duckdb::ClientContext &context, duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto state = ExtensionState::Get(*context.db);
	ReadHedging hedging;
	if (SettingsFor(opener, *state).hedge_reads) {
		hedging.policy = &state->hedges;
		hedging.threads = &state->request_threads;
		hedging.model = &state->cost_model;
		hedging.heads_before_body = HeadsBeforeBody(duckdb::HTTPUtil::Get(*context.db));
	}
	return hedging;
}

constexpr double ReadHedging::COLD_BYTES_PER_SECOND;

double ReadHedging::BodySeconds(uint64_t bytes) const {
	double seconds = 0;
	if (heads_before_body || !model || model->BodySeconds(bytes, seconds)) {
		return seconds;
	}
	if (bytes < CostModel::MIN_BANDWIDTH_SAMPLE_BYTES) {
		return 0;
	}
	return std::min(static_cast<double>(bytes) / COLD_BYTES_PER_SECOND, HedgePolicy::COLD_SECONDS);
}

std::function<bool()> QueryCancelled(duckdb::ClientContext &context) {
	duckdb::weak_ptr<duckdb::ClientContext> connection = context.shared_from_this();
	return [connection]() {
		auto live = connection.lock();
		return !live || compat::Interrupted(*live);
	};
}

int HttpStatusOf(const std::exception &error) {
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

bool IsTransferFailure(const std::exception &error) {
	auto type = duckdb::ErrorData(error).Type();
	return type == duckdb::ExceptionType::IO || type == duckdb::ExceptionType::HTTP;
}

RetryBackoff RetryBackoffOf(const duckdb::HTTPParams &params, uint64_t max_wait_ms) {
	RetryBackoff backoff;
	backoff.wait_ms = params.retry_wait_ms;
	backoff.backoff = static_cast<double>(params.retry_backoff);
	backoff.max_wait_ms = max_wait_ms;
	backoff.throttled_wait_ms = compat::ThrottledWaitMs(params);
	return backoff;
}

std::shared_ptr<HostClientPools> UploadConnections::For(duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto context = duckdb::FileOpener::TryGetClientContext(opener);
	if (!context) {
		return nullptr;
	}
	return context->registered_state->GetOrCreate<UploadConnections>("httpfs2_upload_connections")->Current();
}

std::shared_ptr<ClientPool> UploadConnections::ForUrl(duckdb::optional_ptr<duckdb::FileOpener> opener,
                                                      const std::string &url) {
	auto pools = For(opener);
	if (!pools) {
		return std::make_shared<ClientPool>();
	}
	std::string path, proto_host_port;
	duckdb::HTTPUtil::DecomposeURL(url, path, proto_host_port);
	return pools->Shared(proto_host_port);
}

std::shared_ptr<HostClientPools> UploadConnections::Current() {
	std::lock_guard<std::mutex> guard(lock);
	if (!pools) {
		pools = std::make_shared<HostClientPools>();
	}
	return pools;
}

void UploadConnections::Drop() {
	std::lock_guard<std::mutex> guard(lock);
	pools.reset(); // uploads still sending keep theirs
}

void UploadConnections::TransactionBegin(duckdb::MetaTransaction &, duckdb::ClientContext &) {
	Drop();
}

void UploadConnections::TransactionCommit(duckdb::MetaTransaction &, duckdb::ClientContext &) {
	Drop();
}

void UploadConnections::TransactionRollback(duckdb::MetaTransaction &, duckdb::ClientContext &) {
	Drop();
}

} // namespace httpfs2
