#include "adapter/stores/query_versions.hpp"

#include "duckdb/main/client_context.hpp"

namespace httpfs2 {

duckdb::shared_ptr<QueryVersions> QueryVersions::Of(duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto context = duckdb::FileOpener::TryGetClientContext(opener);
	if (!context) {
		return nullptr;
	}
	return context->registered_state->GetOrCreate<QueryVersions>("httpfs2_query_versions");
}

void QueryVersions::QueryBegin(duckdb::ClientContext &) {
	Clear();
}

void QueryVersions::QueryEnd(duckdb::ClientContext &) {
	Clear();
}

void QueryVersions::Clear() {
	std::lock_guard<std::mutex> guard(lock);
	versions.clear();
}

bool QueryVersions::Find(const std::string &path, ObjectVersion &version) {
	std::lock_guard<std::mutex> guard(lock);
	auto found = versions.find(path);
	if (found == versions.end()) {
		return false;
	}
	version = found->second;
	return true;
}

void QueryVersions::Store(const std::string &path, const ObjectVersion &version) {
	std::lock_guard<std::mutex> guard(lock);
	versions[path] = version;
}

void QueryVersions::Forget(const std::string &path) {
	std::lock_guard<std::mutex> guard(lock);
	versions.erase(path);
}

} // namespace httpfs2
