#include "adapter/stores/azure_signing.hpp"

#include "duckdb/common/types/blob.hpp"
#include "duckdb/main/secret/secret_manager.hpp"
#include "mbedtls_wrapper.hpp"

#include <ctime>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;

bool AzureConnectionFor(const string &path, optional_ptr<FileOpener> opener, AzureConnection &out) {
	duckdb::Value proxy;
	if (FileOpener::TryGetCurrentSetting(opener, "azure_http_proxy", proxy) && !proxy.IsNull() &&
	    !proxy.ToString().empty()) {
		return false; // the azure extension's requests go through it, httpfs's client would not
	}
	string connection_string;
	auto secret_manager = FileOpener::TryGetSecretManager(opener);
	auto transaction = FileOpener::TryGetCatalogTransaction(opener);
	auto match = secret_manager && transaction ? secret_manager->LookupSecret(*transaction, path, "azure")
	                                           : duckdb::SecretMatch();
	if (match.HasMatch()) {
		auto secret = dynamic_cast<const duckdb::KeyValueSecret *>(&match.GetSecret());
		if (!secret || secret->GetProvider() != "config" || !secret->TryGetValue("http_proxy").IsNull()) {
			return false;
		}
		auto value = secret->TryGetValue("connection_string");
		connection_string = value.IsNull() ? string() : value.ToString();
	} else {
		duckdb::Value setting;
		if (FileOpener::TryGetCurrentSetting(opener, "azure_storage_connection_string", setting) && !setting.IsNull()) {
			connection_string = setting.ToString();
		}
	}
	return AzureConnection::Parse(connection_string, out);
}

static string SharedKeyAuthorization(const AzureConnection &connection, const string &string_to_sign) {
	auto key = duckdb::Blob::FromBase64(duckdb::string_t(connection.account_key));
	char digest[duckdb_mbedtls::MbedTlsWrapper::SHA256_HASH_LENGTH_BYTES];
	duckdb_mbedtls::MbedTlsWrapper::Hmac256(key.data(), key.size(), string_to_sign.data(), string_to_sign.size(),
	                                        digest);
	auto signature = duckdb::Blob::ToBase64(duckdb::string_t(digest, sizeof(digest)));
	return "SharedKey " + connection.account_name + ":" + signature;
}

std::pair<string, duckdb::HTTPHeaders> AuthorizeAzureRequest(const AzureConnection &connection,
                                                             const AzureRequest &request) {
	auto ms_headers = request.ms_headers;
	ms_headers.emplace_back("x-ms-date", FormatHttpDate(std::time(nullptr)));
	ms_headers.emplace_back("x-ms-version", AZURE_STORAGE_API_VERSION);
	duckdb::HTTPHeaders headers;
	for (auto &header : ms_headers) {
		headers[header.first] = header.second;
	}
	string query;
	for (auto &parameter : request.query) {
		query += (query.empty() ? "" : "&") + PercentEncode(parameter.first) + "=" + PercentEncode(parameter.second);
	}
	if (connection.account_key.empty()) {
		query = connection.shared_access_signature + (query.empty() ? "" : "&") + query;
	} else {
		auto string_to_sign =
		    SharedKeyStringToSign(request.verb, ms_headers, connection.account_name, UrlPath(request.url),
		                          request.query, request.content_length, request.content_type);
		headers["Authorization"] = SharedKeyAuthorization(connection, string_to_sign);
	}
	return {query.empty() ? request.url : request.url + "?" + query, std::move(headers)};
}

} // namespace httpfs2
