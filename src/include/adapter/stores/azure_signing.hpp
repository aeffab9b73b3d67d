//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/azure_signing.hpp
//
// What requests httpfs2 sends to Azure Blob Storage itself (a blob's version, an upload's blocks) share: the
// connection string the azure extension would use for a path, and a request authorized with its account key
// (SharedKey, DuckDB's mbedtls) or its SAS token.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/requests/azure_shared_key.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace httpfs2 {

//! The service version httpfs2's requests ask for; Azure and Azurite have answered such requests the same way since
//! long before it.
static constexpr const char *AZURE_STORAGE_API_VERSION = "2021-08-06";

//! The connection of the azure secret matching `path` (its `config` provider's connection string), else of the
//! azure_storage_connection_string setting. False for what httpfs2 leaves to the azure extension: another provider
//! (credential chain, service principal: tokens only the Azure SDK can get), no account key nor SAS token, a proxy.
bool AzureConnectionFor(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener, AzureConnection &out);

//! A request to one blob.
struct AzureRequest {
	std::string verb;
	//! The blob's URL (AzureBlobUrl), without a query.
	std::string url;
	//! Parameters, values not encoded.
	std::vector<HttpHeader> query;
	//! The x-ms-* headers besides x-ms-date and x-ms-version, which are added.
	std::vector<HttpHeader> ms_headers;
	uint64_t content_length = 0;
	//! The Content-Type the HTTP client sends (a PUT's), empty for none.
	std::string content_type;
};

//! The URL to send `request` to (its query, and the SAS token where that authorizes it) and its headers (with a
//! SharedKey Authorization where the account key does). Never log either.
std::pair<std::string, duckdb::HTTPHeaders> AuthorizeAzureRequest(const AzureConnection &connection,
                                                                  const AzureRequest &request);

} // namespace httpfs2
