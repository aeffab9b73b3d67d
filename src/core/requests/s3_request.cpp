#include "core/requests/s3_request.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <iterator>

namespace httpfs2 {

static const char *const DEFAULT_ENDPOINT = "s3.amazonaws.com";

bool S3Address::Resolve(const std::string &url, const std::string &endpoint, const std::string &url_style, bool use_ssl,
                        S3Address &out) {
	// The scheme (s3, s3a, r2, ...) is the caller's to check: httpfs addresses them all alike.
	auto scheme_end = url.find("://");
	if (scheme_end == std::string::npos || scheme_end == 0 || url.find('?') != std::string::npos) {
		return false;
	}
	auto bucket_start = scheme_end + 3;
	auto slash = url.find('/', bucket_start);
	if (slash == std::string::npos || slash == bucket_start || slash + 1 == url.size()) {
		return false;
	}
	auto bucket = url.substr(bucket_start, slash - bucket_start);
	auto key = url.substr(slash);
	auto host = endpoint.empty() ? std::string(DEFAULT_ENDPOINT) : endpoint;
	if (host.find('/') != std::string::npos) {
		return false;
	}
	bool vhost = url_style.empty() || url_style == "vhost" || url_style == "virtual";
	if (!vhost && url_style != "path") {
		return false;
	}
	if (vhost && use_ssl && bucket.find('.') != std::string::npos) {
		return false; // not addressable by virtual host over TLS; httpfs versions differ in what they do instead
	}
	out.scheme = use_ssl ? "https://" : "http://";
	out.host = vhost ? bucket + "." + host : host;
	out.path = PercentEncodePath(vhost ? key : "/" + bucket + key);
	out.bucket_path = vhost ? "/" : PercentEncodePath("/" + bucket);
	out.key = key.substr(1);
	return true;
}

const char *const SigV4Request::EMPTY_PAYLOAD_SHA256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const char *const SigV4Request::UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD";

std::string SigV4Request::AmzDate(std::time_t seconds) {
	std::tm utc {};
	gmtime_r(&seconds, &utc);
	char text[32];
	std::strftime(text, sizeof(text), "%Y%m%dT%H%M%SZ", &utc);
	return text;
}

std::vector<HttpHeader> SigV4Request::SignedHeaders() const {
	std::vector<HttpHeader> all {{"host", host}, {"x-amz-content-sha256", payload_sha256}, {"x-amz-date", amz_date}};
	all.insert(all.end(), headers.begin(), headers.end());
	std::sort(all.begin(), all.end());
	return all;
}

std::string SigV4Request::SignedHeaderNames() const {
	std::string names;
	for (auto &header : SignedHeaders()) {
		names += (names.empty() ? "" : ";") + header.first;
	}
	return names;
}

std::string SigV4Request::CanonicalQuery() const {
	std::vector<HttpHeader> encoded;
	for (auto &parameter : query) {
		encoded.emplace_back(PercentEncode(parameter.first), PercentEncode(parameter.second));
	}
	std::sort(encoded.begin(), encoded.end());
	std::string text;
	for (auto &parameter : encoded) {
		text += (text.empty() ? "" : "&") + parameter.first + "=" + parameter.second;
	}
	return text;
}

std::string SigV4Request::CanonicalRequest() const {
	// Method, path, query string, one line per header, the signed names, the payload's hash.
	std::string request = method + "\n" + path + "\n" + CanonicalQuery() + "\n";
	for (auto &header : SignedHeaders()) {
		request += header.first + ":" + header.second + "\n";
	}
	return request + "\n" + SignedHeaderNames() + "\n" + payload_sha256;
}

std::string SigV4Request::CredentialScope() const {
	return amz_date.substr(0, 8) + "/" + region + "/s3/aws4_request";
}

std::string SigV4Request::StringToSign(const std::string &canonical_request_sha256_hex) const {
	return "AWS4-HMAC-SHA256\n" + amz_date + "\n" + CredentialScope() + "\n" + canonical_request_sha256_hex;
}

std::string SigV4Request::Authorization(const std::string &key_id, const std::string &signature_hex) const {
	return "AWS4-HMAC-SHA256 Credential=" + key_id + "/" + CredentialScope() +
	       ", SignedHeaders=" + SignedHeaderNames() + ", Signature=" + signature_hex;
}

std::string XmlElement(const std::string &xml, const std::string &name) {
	auto open = "<" + name + ">";
	auto start = xml.find(open);
	if (start == std::string::npos) {
		return std::string();
	}
	start += open.size();
	auto end = xml.find("</" + name + ">", start);
	return end == std::string::npos ? std::string() : xml.substr(start, end - start);
}

//! `text` as XML character data writes it.
static std::string XmlEscaped(const std::string &text) {
	std::string escaped;
	for (char c : text) {
		switch (c) {
		case '&':
			escaped += "&amp;";
			break;
		case '<':
			escaped += "&lt;";
			break;
		case '>':
			escaped += "&gt;";
			break;
		case '"':
			escaped += "&quot;";
			break;
		case '\'':
			escaped += "&apos;";
			break;
		default:
			escaped += c;
		}
	}
	return escaped;
}

//! An ISO 8601 time in UTC as S3 lists it (2026-11-24T22:05:31.000Z), to the second.
static bool ParseIsoTime(const std::string &text, std::time_t &seconds) {
	std::tm parts {};
	if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d", &parts.tm_year, &parts.tm_mon, &parts.tm_mday, &parts.tm_hour,
	                &parts.tm_min, &parts.tm_sec) != 6) {
		return false;
	}
	parts.tm_year -= 1900;
	parts.tm_mon -= 1;
	seconds = timegm(&parts);
	return true;
}

std::vector<std::string> UploadsInitiatedBetween(const std::string &xml, const std::string &key, std::time_t from,
                                                 std::time_t to) {
	static const std::string OPEN = "<Upload>", CLOSE = "</Upload>";
	auto listed_key = XmlEscaped(key);
	std::vector<std::string> ids;
	for (auto start = xml.find(OPEN); start != std::string::npos; start = xml.find(OPEN, start)) {
		auto end = xml.find(CLOSE, start);
		if (end == std::string::npos) {
			break;
		}
		auto upload = xml.substr(start, end - start);
		start = end;
		std::time_t initiated = 0;
		auto id = XmlElement(upload, "UploadId");
		if (XmlElement(upload, "Key") == listed_key && !id.empty() &&
		    ParseIsoTime(XmlElement(upload, "Initiated"), initiated) && initiated >= from && initiated <= to) {
			ids.push_back(std::move(id));
		}
	}
	return ids;
}

//! `text` with XML's character references (&amp;, &#38;, &#x26; and the like) replaced; false for a malformed one.
static bool XmlUnescaped(const std::string &text, std::string &out) {
	static const std::pair<const char *, char> NAMED[] = {
	    {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
	out.clear();
	for (size_t at = 0; at < text.size(); at++) {
		if (text[at] != '&') {
			out += text[at];
			continue;
		}
		auto end = text.find(';', at);
		if (end == std::string::npos) {
			return false;
		}
		auto name = text.substr(at + 1, end - at - 1);
		at = end;
		if (name.size() > 1 && name[0] == '#') {
			char *parsed_end = nullptr;
			bool hex = name[1] == 'x';
			auto code = std::strtoul(name.c_str() + (hex ? 2 : 1), &parsed_end, hex ? 16 : 10);
			if (*parsed_end != '\0' || code == 0 || code > 0x7f) {
				return false; // keys outside ASCII come as UTF-8 bytes, not as references
			}
			out += static_cast<char>(code);
			continue;
		}
		auto named = std::find_if(std::begin(NAMED), std::end(NAMED),
		                          [&](const std::pair<const char *, char> &entry) { return name == entry.first; });
		if (named == std::end(NAMED)) {
			return false;
		}
		out += named->second;
	}
	return true;
}

bool ParseObjectListing(const std::string &xml, std::vector<ListedObject> &objects, bool &truncated) {
	static const std::string OPEN = "<Contents>", CLOSE = "</Contents>";
	if (xml.find("<ListBucketResult") == std::string::npos) {
		return false;
	}
	objects.clear();
	for (auto start = xml.find(OPEN); start != std::string::npos; start = xml.find(OPEN, start)) {
		auto end = xml.find(CLOSE, start);
		if (end == std::string::npos) {
			return false;
		}
		auto entry = xml.substr(start, end - start);
		start = end;
		ListedObject object;
		auto size = XmlElement(entry, "Size");
		char *size_end = nullptr;
		object.size = std::strtoull(size.c_str(), &size_end, 10);
		if (!XmlUnescaped(XmlElement(entry, "Key"), object.key) || object.key.empty() || size.empty() ||
		    *size_end != '\0' || !XmlUnescaped(XmlElement(entry, "ETag"), object.etag) ||
		    !ParseIsoTime(XmlElement(entry, "LastModified"), object.last_modified)) {
			return false;
		}
		objects.push_back(std::move(object));
	}
	truncated = XmlElement(xml, "IsTruncated") == "true";
	return true;
}

bool ParseContentRange(const std::string &value, uint64_t &first, uint64_t &last, uint64_t &total) {
	unsigned long long a = 0, b = 0, size = 0;
	int consumed = 0;
	if (std::sscanf(value.c_str(), "bytes %llu-%llu/%llu%n", &a, &b, &size, &consumed) != 3 ||
	    static_cast<size_t>(consumed) != value.size() || a > b || b >= size) {
		return false;
	}
	first = a;
	last = b;
	total = size;
	return true;
}

} // namespace httpfs2
