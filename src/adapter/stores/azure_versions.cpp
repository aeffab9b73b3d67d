#include "adapter/stores/azure_versions.hpp"

#include "core/requests/azure_shared_key.hpp"
#include "duckdb/common/http_util.hpp"
#include "duckdb/common/types/blob.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/client_context_state.hpp"
#include "duckdb/main/secret/secret_manager.hpp"
#include "mbedtls_wrapper.hpp"

#include <mutex>
#include <unordered_map>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;

//! The service version httpfs2's requests ask for; Azure and Azurite have answered such a request the same way
//! since long before it.
static constexpr const char *STORAGE_API_VERSION = "2021-08-06";

//! What this query learnt about blob versions; forgotten when the query ends, so each query sees changes, and when
//! one begins, so that what a bind outside any query looked up (the Python relation API's) is not taken for it.
class QueryVersionCache : public duckdb::ClientContextState {
public:
	void QueryBegin(duckdb::ClientContext &context) override {
		Clear();
	}
	using ClientContextState::QueryEnd;
	void QueryEnd(duckdb::ClientContext &context) override {
		Clear();
	}

	void Clear() {
		std::lock_guard<std::mutex> guard(lock);
		versions.clear();
	}

	bool Find(const string &path, ObjectVersion &version) {
		std::lock_guard<std::mutex> guard(lock);
		auto found = versions.find(path);
		if (found == versions.end()) {
			return false;
		}
		version = found->second;
		return true;
	}

	void Store(const string &path, const ObjectVersion &version) {
		std::lock_guard<std::mutex> guard(lock);
		versions[path] = version;
	}

	void Forget(const string &path) {
		std::lock_guard<std::mutex> guard(lock);
		versions.erase(path);
	}

private:
	std::mutex lock;
	std::unordered_map<string, ObjectVersion> versions;
};

static duckdb::shared_ptr<QueryVersionCache> CacheOf(optional_ptr<FileOpener> opener) {
	auto context = FileOpener::TryGetClientContext(opener);
	if (!context) {
		return nullptr;
	}
	return context->registered_state->GetOrCreate<QueryVersionCache>("httpfs2_azure_versions");
}

//! The connection string the azure extension would use for `path`: its `config` secret's, else the setting's.
static string ConnectionStringFor(const string &path, optional_ptr<FileOpener> opener) {
	auto secret_manager = FileOpener::TryGetSecretManager(opener);
	auto transaction = FileOpener::TryGetCatalogTransaction(opener);
	if (secret_manager && transaction) {
		auto match = secret_manager->LookupSecret(*transaction, path, "azure");
		if (match.HasMatch()) {
			auto secret = dynamic_cast<const duckdb::KeyValueSecret *>(&match.GetSecret());
			if (!secret || secret->GetProvider() != "config") {
				return string(); // credential chain, service principal...: tokens only the Azure SDK can get
			}
			auto value = secret->TryGetValue("connection_string");
			return value.IsNull() ? string() : value.ToString();
		}
	}
	duckdb::Value setting;
	if (FileOpener::TryGetCurrentSetting(opener, "azure_storage_connection_string", setting) && !setting.IsNull()) {
		return setting.ToString();
	}
	return string();
}

static string SharedKeyAuthorization(const AzureConnection &connection, const string &string_to_sign) {
	auto key = duckdb::Blob::FromBase64(duckdb::string_t(connection.account_key));
	char digest[duckdb_mbedtls::MbedTlsWrapper::SHA256_HASH_LENGTH_BYTES];
	duckdb_mbedtls::MbedTlsWrapper::Hmac256(key.data(), key.size(), string_to_sign.data(), string_to_sign.size(),
	                                        digest);
	auto signature = duckdb::Blob::ToBase64(duckdb::string_t(digest, sizeof(digest)));
	return "SharedKey " + connection.account_name + ":" + signature;
}

//! A Get Blob of the first byte, signed with the account key or authorized by the SAS token: it answers with the
//! blob's ETag, Last-Modified and size like a HEAD does, and DuckDB's built-in HTTP client (used when httpfs is not
//! loaded) makes GET requests only.
static duckdb::unique_ptr<duckdb::HTTPResponse> ProbeBlob(const AzureConnection &connection, const AzureBlobPath &blob,
                                                          const string &path, optional_ptr<FileOpener> opener) {
	auto context = FileOpener::TryGetClientContext(opener);
	if (!context) {
		return nullptr;
	}
	auto &http = duckdb::HTTPUtil::Get(*context->db);
	duckdb::FileOpenerInfo info {path};
	auto params = http.InitializeParameters(opener, &info);
	// DuckDB's HTTP log records headers and URLs: the signature and the SAS token must not reach it.
	params->logger = nullptr;
	auto url = AzureBlobUrl(connection, blob);
	std::vector<HttpHeader> ms_headers {{"x-ms-date", FormatHttpDate(std::time(nullptr))},
	                                    {"x-ms-range", "bytes=0-0"},
	                                    {"x-ms-version", STORAGE_API_VERSION}};
	duckdb::HTTPHeaders headers;
	for (auto &header : ms_headers) {
		headers[header.first] = header.second;
	}
	if (!connection.account_key.empty()) {
		auto string_to_sign = SharedKeyStringToSign("GET", ms_headers, connection.account_name, UrlPath(url));
		headers["Authorization"] = SharedKeyAuthorization(connection, string_to_sign);
	} else {
		url += "?" + connection.shared_access_signature;
	}
	duckdb::GetRequestInfo request(url, headers, *params, nullptr, nullptr);
	return http.Request(request);
}

static bool VersionFromResponse(const duckdb::HTTPResponse &response, ObjectVersion &version) {
	// A directory marker of a hierarchical namespace: the azure extension decides what it is.
	if (response.HasHeader("x-ms-meta-hdi_isfolder") && response.GetHeaderValue("x-ms-meta-hdi_isfolder") == "true") {
		return false;
	}
	ByteRange first_byte;
	return VersionOfRangeAnswer(response, version, first_byte) && version.size > 0 && version.Recognizable();
}

VersionLookup AzureVersions::Lookup(const string &path, optional_ptr<FileOpener> opener, ReadStats &stats,
                                    ObjectVersion &version) {
	AzureBlobPath blob;
	if (!AzureBlobPath::Parse(path, blob) || blob.HasWildcard()) {
		return VersionLookup::UNKNOWN;
	}
	try {
		auto cache = CacheOf(opener);
		if (!cache) {
			return VersionLookup::UNKNOWN;
		}
		if (cache->Find(path, version)) {
			return VersionLookup::FOUND;
		}
		AzureConnection connection;
		if (!AzureConnection::Parse(ConnectionStringFor(path, opener), connection)) {
			return VersionLookup::UNKNOWN;
		}
		stats.Add(Counter::VERSION_REQUESTS);
		auto response = ProbeBlob(connection, blob, path, opener);
		if (!response) {
			return VersionLookup::UNKNOWN;
		}
		if (response->status == duckdb::HTTPStatusCode::NotFound_404) {
			return VersionLookup::MISSING;
		}
		// An empty blob answers 416 (no first byte): the azure extension opens those itself.
		if (!VersionFromResponse(*response, version)) {
			return VersionLookup::UNKNOWN;
		}
		cache->Store(path, version);
		return VersionLookup::FOUND;
	} catch (std::exception &) {
		// Whatever went wrong (no HTTP client, a network error), the azure extension's own open will tell.
		return VersionLookup::UNKNOWN;
	}
}

void AzureVersions::Forget(const string &path, optional_ptr<FileOpener> opener) {
	auto cache = CacheOf(opener);
	if (cache) {
		cache->Forget(path);
	}
}

} // namespace httpfs2
