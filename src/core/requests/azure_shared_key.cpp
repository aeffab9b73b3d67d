#include "core/requests/azure_shared_key.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace httpfs2 {

static std::string Lower(std::string text) {
	std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
	return text;
}

static std::string WithoutTrailingSlash(std::string text) {
	while (!text.empty() && text.back() == '/') {
		text.pop_back();
	}
	return text;
}

bool AzureConnection::Parse(const std::string &connection_string, AzureConnection &out) {
	std::string protocol = "https";
	std::string suffix = "core.windows.net";
	out = AzureConnection();
	size_t start = 0;
	while (start < connection_string.size()) {
		auto end = connection_string.find(';', start);
		if (end == std::string::npos) {
			end = connection_string.size();
		}
		auto part = connection_string.substr(start, end - start);
		start = end + 1;
		auto equals = part.find('=');
		if (equals == std::string::npos) {
			continue;
		}
		auto key = Lower(part.substr(0, equals));
		auto value = part.substr(equals + 1);
		if (key == "accountname") {
			out.account_name = value;
		} else if (key == "accountkey") {
			out.account_key = value;
		} else if (key == "sharedaccesssignature") {
			out.shared_access_signature = value.empty() || value[0] != '?' ? value : value.substr(1);
		} else if (key == "blobendpoint") {
			out.blob_endpoint = WithoutTrailingSlash(value);
		} else if (key == "defaultendpointsprotocol") {
			protocol = value;
		} else if (key == "endpointsuffix") {
			suffix = value;
		}
	}
	if (out.blob_endpoint.empty() && !out.account_name.empty()) {
		out.blob_endpoint = protocol + "://" + out.account_name + ".blob." + suffix;
	}
	bool has_credential = !out.account_key.empty() || !out.shared_access_signature.empty();
	// A SharedKey signature names the account; a SAS token needs only the endpoint.
	return has_credential && !out.blob_endpoint.empty() && (out.account_key.empty() || !out.account_name.empty());
}

bool AzureBlobPath::Parse(const std::string &path, AzureBlobPath &out) {
	std::string rest;
	for (auto prefix : {"az://", "azure://"}) {
		if (path.compare(0, std::strlen(prefix), prefix) == 0) {
			rest = path.substr(std::strlen(prefix));
		}
	}
	auto slash = rest.find('/');
	if (slash == std::string::npos || slash == 0) {
		return false;
	}
	out.container = rest.substr(0, slash);
	out.blob = rest.substr(slash + 1);
	// A dot in the first segment makes it `<account>.<endpoint>`, whose credentials the secret may not hold.
	bool fully_qualified = out.container.find('.') != std::string::npos;
	return !fully_qualified && !out.blob.empty() && out.blob.back() != '/';
}

bool AzureBlobPath::HasWildcard() const {
	return blob.find_first_of("*?[\\") != std::string::npos;
}

std::string AzureBlobUrl(const AzureConnection &connection, const AzureBlobPath &path) {
	return connection.blob_endpoint + "/" + PercentEncodePath(path.container) + "/" + PercentEncodePath(path.blob);
}

std::string UrlPath(const std::string &url) {
	auto scheme_end = url.find("://");
	auto authority_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
	auto path_start = url.find('/', authority_start);
	if (path_start == std::string::npos) {
		return "/";
	}
	auto query_start = url.find('?', path_start);
	return url.substr(path_start, query_start == std::string::npos ? std::string::npos : query_start - path_start);
}

std::string SharedKeyStringToSign(const std::string &verb, std::vector<HttpHeader> ms_headers,
                                  const std::string &account_name, const std::string &url_path,
                                  std::vector<HttpHeader> query, uint64_t content_length,
                                  const std::string &content_type) {
	// Content-Encoding, -Language, -Length, -MD5, -Type, Date, If-Modified-Since, If-Match, If-None-Match,
	// If-Unmodified-Since, Range: of these only Content-Length and Content-Type are sent (x-ms-date stands in for
	// Date), and a Content-Length of 0 is signed as empty.
	std::string result = verb + "\n\n\n";
	result += (content_length == 0 ? std::string() : std::to_string(content_length)) + "\n\n";
	result += content_type + "\n";
	for (int i = 0; i < 6; i++) {
		result += "\n";
	}
	for (auto &header : ms_headers) {
		header.first = Lower(header.first);
	}
	std::sort(ms_headers.begin(), ms_headers.end());
	for (auto &header : ms_headers) {
		result += header.first + ":" + header.second + "\n";
	}
	result += "/" + account_name + url_path;
	for (auto &parameter : query) {
		parameter.first = Lower(parameter.first);
	}
	std::sort(query.begin(), query.end());
	for (auto &parameter : query) {
		result += "\n" + parameter.first + ":" + parameter.second;
	}
	return result;
}

std::string AzureBlockListXml(const std::vector<std::string> &block_ids) {
	std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>";
	for (auto &id : block_ids) {
		xml += "<Latest>" + id + "</Latest>";
	}
	return xml + "</BlockList>";
}

} // namespace httpfs2
