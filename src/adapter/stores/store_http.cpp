#include "adapter/stores/store_http.hpp"

#include "duckdb/main/client_context.hpp"

namespace httpfs2 {

duckdb::unique_ptr<duckdb::HTTPParams> QuietParams(duckdb::HTTPUtil &http, const std::string &path,
                                                   duckdb::optional_ptr<duckdb::FileOpener> opener) {
	duckdb::FileOpenerInfo info {path};
	auto params = http.InitializeParameters(opener, &info);
	params->logger = nullptr;
	return params;
}

duckdb::unique_ptr<duckdb::HTTPParams> StandInParams(duckdb::HTTPUtil &http, const std::string &path,
                                                     duckdb::optional_ptr<duckdb::FileOpener> opener,
                                                     uint64_t timeout_seconds) {
	auto params = QuietParams(http, path, opener);
	params->timeout = timeout_seconds;
	params->timeout_usec = 0;
	params->retries = 0;
	return params;
}

std::shared_ptr<HostClientPools> UploadConnections::For(duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto context = duckdb::FileOpener::TryGetClientContext(opener);
	if (!context) {
		return nullptr;
	}
	return context->registered_state->GetOrCreate<UploadConnections>("httpfs2_upload_connections")->Current();
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
