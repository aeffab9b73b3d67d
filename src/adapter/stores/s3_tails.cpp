#include "adapter/stores/s3_tails.hpp"

#include "core/requests/s3_request.hpp"
#include "duckdb/common/http_util.hpp"
#include "duckdb/main/secret/secret_manager.hpp"
#include "mbedtls_wrapper.hpp"

#include <chrono>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using duckdb::Value;
using std::string;
using Tls = duckdb_mbedtls::MbedTlsWrapper;

constexpr uint64_t S3Tails::TAIL_BYTES;

//! What httpfs reads from an S3 secret, with the same fallback to its s3_* settings.
struct S3Credentials {
	string key_id;
	string secret;
	string session_token;
	string region;
	string endpoint;
	string url_style;
	bool use_ssl = true;
	bool unusual = false; // requester pays or URL compatibility mode: left to httpfs

	static bool Read(const string &path, optional_ptr<FileOpener> opener, S3Credentials &out) {
		auto secret_manager = FileOpener::TryGetSecretManager(opener);
		auto transaction = FileOpener::TryGetCatalogTransaction(opener);
		if (!secret_manager || !transaction) {
			return false;
		}
		auto match = secret_manager->LookupSecret(*transaction, path, "s3");
		if (!match.HasMatch()) {
			return false; // settings or environment only: left to httpfs
		}
		auto secret = dynamic_cast<const duckdb::KeyValueSecret *>(&match.GetSecret());
		if (!secret) {
			return false;
		}
		auto text = [&](const char *key, const char *setting) {
			auto value = secret->TryGetValue(key);
			if (value.IsNull() && !FileOpener::TryGetCurrentSetting(opener, setting, value)) {
				return string();
			}
			return value.IsNull() ? string() : value.ToString();
		};
		auto flag = [&](const char *key, const char *setting, bool otherwise) {
			auto value = text(key, setting);
			return value.empty() ? otherwise : duckdb::StringUtil::Lower(value) == "true";
		};
		out.key_id = text("key_id", "s3_access_key_id");
		out.secret = text("secret", "s3_secret_access_key");
		out.session_token = text("session_token", "s3_session_token");
		out.region = text("region", "s3_region");
		out.endpoint = text("endpoint", "s3_endpoint");
		out.url_style = text("url_style", "s3_url_style");
		out.use_ssl = flag("use_ssl", "s3_use_ssl", true);
		out.unusual = flag("requester_pays", "s3_requester_pays", false) ||
		              flag("url_compatibility_mode", "s3_url_compatibility_mode", false);
		return !out.unusual && !out.region.empty() && out.key_id.empty() == out.secret.empty();
	}
};

static string Hmac(const string &key, const string &message) {
	char digest[Tls::SHA256_HASH_LENGTH_BYTES];
	Tls::Hmac256(key.data(), key.size(), message.data(), message.size(), digest);
	return string(digest, sizeof(digest));
}

static string Hex(string bytes) {
	string text(bytes.size() * 2, '0');
	Tls::ToBase16(&bytes[0], &text[0], bytes.size());
	return text;
}

//! The request's headers, signed with Signature Version 4 unless the secret has no key (a public bucket).
static duckdb::HTTPHeaders SignedHeaders(const S3Credentials &credentials, SigV4Request &request) {
	if (!credentials.session_token.empty()) {
		request.headers.emplace_back("x-amz-security-token", credentials.session_token);
	}
	duckdb::HTTPHeaders headers;
	for (auto &header : request.SignedHeaders()) {
		if (header.first != "host") { // the client sends the URL's
			headers[header.first] = header.second;
		}
	}
	if (credentials.key_id.empty()) {
		return headers;
	}
	auto key = Hmac("AWS4" + credentials.secret, request.amz_date.substr(0, 8));
	for (auto part : {request.region, string("s3"), string("aws4_request")}) {
		key = Hmac(key, part);
	}
	auto string_to_sign = request.StringToSign(Hex(Tls::ComputeSha256Hash(request.CanonicalRequest())));
	headers["Authorization"] = request.Authorization(credentials.key_id, Hex(Hmac(key, string_to_sign)));
	return headers;
}

static bool TailFromResponse(const duckdb::HTTPResponse &response, string body, ObjectTail &tail) {
	if (!VersionOfRangeAnswer(response, tail.version, tail.range) || tail.range.End() != tail.version.size ||
	    body.size() != tail.range.length) {
		return false;
	}
	tail.bytes = std::move(body);
	// Only a strong ETag lets the footer be served as this version's bytes.
	return tail.version.NamesBytes();
}

bool S3Tails::Fetch(const string &path, optional_ptr<FileOpener> opener, ReadStats &stats, ObjectTail &tail) {
	try {
		auto context = FileOpener::TryGetClientContext(opener);
		S3Credentials credentials;
		S3Address address;
		if (!context || !S3Credentials::Read(path, opener, credentials) ||
		    !S3Address::Resolve(path, credentials.endpoint, credentials.url_style, credentials.use_ssl, address)) {
			return false;
		}
		SigV4Request request;
		request.method = "GET";
		request.host = address.host;
		request.path = address.path;
		request.region = credentials.region;
		request.amz_date = SigV4Request::AmzDate(std::time(nullptr));
		request.headers = {{"range", "bytes=-" + std::to_string(TAIL_BYTES)}};
		auto headers = SignedHeaders(credentials, request);

		auto &http = duckdb::HTTPUtil::Get(*context->db);
		duckdb::FileOpenerInfo info {path};
		auto params = http.InitializeParameters(opener, &info);
		// DuckDB's HTTP log records headers: the signature and the session token must not reach it.
		params->logger = nullptr;
		string body;
		auto start = std::chrono::steady_clock::now();
		auto since_start = [start]() {
			return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
		};
		duckdb::GetRequestInfo get(
		    address.Url(), headers, *params,
		    [&](const duckdb::HTTPResponse &) {
			    tail.first_byte_seconds = since_start();
			    return true;
		    },
		    [&body](duckdb::const_data_ptr_t data, duckdb::idx_t length) {
			    if (body.size() + length > TAIL_BYTES) {
				    return false; // a server that ignored the range: not worth the whole object
			    }
			    body.append(reinterpret_cast<const char *>(data), length);
			    return true;
		    });
		stats.Add(Counter::VERSION_REQUESTS);
		auto response = http.Request(get);
		tail.seconds = since_start();
		return response && TailFromResponse(*response, std::move(body), tail);
	} catch (std::exception &) {
		return false;
	}
}

} // namespace httpfs2
