//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/azure_shared_key.hpp
//
// What httpfs2 needs to send Azure Blob Storage requests itself (a blob's ETag, which the azure extension does not
// report; the requests of a block blob's upload): the account and endpoint from a connection string, the blob URL of an
// az:// path, the string a SharedKey request signs and a block list. The HMAC itself is computed by the adapter
// (DuckDB's mbedtls).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/requests/http_parts.hpp"

#include <cstdint>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

namespace httpfs2 {

//! The parts of an Azure Storage connection string that address and authorize a blob request.
struct AzureConnection {
	std::string account_name;
	//! Base64, as in the connection string; empty when the string carries a SAS token instead.
	std::string account_key;
	//! Without the leading '?'.
	std::string shared_access_signature;
	//! scheme://host[:port][/path], without a trailing '/'.
	std::string blob_endpoint;

	//! False when the string names no account or no usable credential (key or SAS).
	static bool Parse(const std::string &connection_string, AzureConnection &out);
};

//! `az://<container>/<blob>` or `azure://<container>/<blob>`: the forms whose account comes from the secret.
struct AzureBlobPath {
	std::string container;
	std::string blob;

	//! False for other forms (fully qualified `az://<account>.<endpoint>/...`, abfss://) and for directories.
	static bool Parse(const std::string &path, AzureBlobPath &out);
	//! Whether the blob name holds a glob wildcard, as the azure extension's Glob decides it.
	bool HasWildcard() const;
};

//! The blob's URL: endpoint, container, blob name percent-encoded except unreserved characters and '/'.
std::string AzureBlobUrl(const AzureConnection &connection, const AzureBlobPath &path);

//! The path of `url` (from the first '/' after the authority), as the canonicalized resource needs it.
std::string UrlPath(const std::string &url);

//! The string a SharedKey request without conditional or range headers signs (version 2015-02-21 on): the verb,
//! the eleven standard headers of which only Content-Length (empty for no body) and Content-Type are sent, the
//! sorted `x-ms-*` headers, `/<account><url path>`, then the query parameters (each name once, values decoded) sorted
//! by name as `\n<name>:<value>` lines.
std::string SharedKeyStringToSign(const std::string &verb, std::vector<HttpHeader> ms_headers,
                                  const std::string &account_name, const std::string &url_path,
                                  std::vector<HttpHeader> query = {}, uint64_t content_length = 0,
                                  const std::string &content_type = std::string());

//! The body of a Put Block List that commits `block_ids` (base64, as sent with Put Block) in this order, each the
//! latest block of that id: staged, or committed already when an earlier identical request took effect.
std::string AzureBlockListXml(const std::vector<std::string> &block_ids);

} // namespace httpfs2
