#include "adapter/stores/s3_signing.hpp"

#include "adapter/common/extension_state.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/client_data.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/main/secret/secret_manager.hpp"
#include "mbedtls_wrapper.hpp"

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using duckdb::Value;
using std::string;
using Tls = duckdb_mbedtls::MbedTlsWrapper;

namespace {
//! A path form httpfs's S3 filesystem serves, and whether httpfs2 sends requests for it itself.
struct S3PathForm {
	const char *prefix;
	//! gcs:// and gs:// are left to httpfs: it forces Google's endpoint and path style unless a secret sets them, and
	//! authorizes with OAuth bearer tokens as well as HMAC keys.
	bool sent_by_httpfs2;
};

//! The forms in httpfs 1.5's order (S3FileSystem::TryGetPrefix); r2:// is S3's protocol at Cloudflare's endpoint,
//! which the r2 secret sets.
const S3PathForm S3_PATH_FORMS[] = {{"s3://", true},   {"s3a://", true}, {"s3n://", true},
                                    {"gcs://", false}, {"gs://", false}, {"r2://", true}};

//! The secret types httpfs looks an S3 path's credentials up in, in its order (S3AuthParams::ReadFrom).
const char *const S3_SECRET_TYPES[] = {"s3", "r2", "gcs", "aws"};

bool SentByHttpfs2(const string &path) {
	auto lower = duckdb::StringUtil::Lower(path);
	for (auto &form : S3_PATH_FORMS) {
		if (duckdb::StringUtil::StartsWith(lower, form.prefix)) {
			return form.sent_by_httpfs2;
		}
	}
	return false;
}

const duckdb::KeyValueSecret *FindS3Secret(const string &path, optional_ptr<FileOpener> opener,
                                           duckdb::SecretMatch &match) {
	auto secret_manager = FileOpener::TryGetSecretManager(opener);
	auto transaction = FileOpener::TryGetCatalogTransaction(opener);
	if (!secret_manager || !transaction) {
		return nullptr;
	}
	for (auto type : S3_SECRET_TYPES) {
		match = secret_manager->LookupSecret(*transaction, path, type);
		if (match.HasMatch()) {
			return dynamic_cast<const duckdb::KeyValueSecret *>(&match.GetSecret());
		}
	}
	return nullptr;
}

//! `field` appended to `text` with its length in front, so that no two lists of fields read the same.
void AppendField(string &text, const string &field) {
	text += std::to_string(field.size());
	text += ':';
	text += field;
}

//! What tells the secret of `match` from another: its storage, type, name (case-insensitive, as DuckDB's) and scope.
string SecretIdentity(const duckdb::SecretMatch &match) {
	auto &secret = match.GetSecret();
	string identity;
	AppendField(identity, match.secret_entry->storage_mode);
	// A string on DuckDB 1.5, an Identifier on 2.0: both convert to one explicitly.
	AppendField(identity, duckdb::StringUtil::Lower(static_cast<const string &>(secret.GetType())));
	AppendField(identity, duckdb::StringUtil::Lower(static_cast<const string &>(secret.GetName())));
	for (auto &prefix : secret.GetScope()) {
		AppendField(identity, prefix);
	}
	return identity;
}

//! Whether credentials looked up again sign for what `refused` signed for: the same secret, endpoint and region.
bool SameUse(const S3Credentials &refused, const S3Credentials &fresh) {
	return refused.secret_identity == fresh.secret_identity && refused.endpoint == fresh.endpoint &&
	       refused.region == fresh.region && refused.url_style == fresh.url_style && refused.use_ssl == fresh.use_ssl &&
	       refused.kms_key_id == fresh.kms_key_id;
}

//! The SHA-256 of `credentials`' keys and use: how CredentialReplacements knows them, never in clear.
string Fingerprint(const S3Credentials &credentials) {
	string text;
	for (auto field : {&credentials.secret_identity, &credentials.endpoint, &credentials.region, &credentials.url_style,
	                   &credentials.kms_key_id, &credentials.key_id, &credentials.secret, &credentials.session_token}) {
		AppendField(text, *field);
	}
	text += credentials.use_ssl ? '1' : '0';
	return Tls::ComputeSha256Hash(text);
}
} // namespace

bool S3Credentials::Read(const string &path, optional_ptr<FileOpener> opener, S3Credentials &out) {
	duckdb::SecretMatch match;
	auto secret = SentByHttpfs2(path) ? FindS3Secret(path, opener, match) : nullptr;
	if (!secret) {
		return false;
	}
	out.secret_identity = SecretIdentity(match);
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
	out.kms_key_id = text("kms_key_id", "s3_kms_key_id");
	out.use_ssl = flag("use_ssl", "s3_use_ssl", true);
	bool unusual = flag("requester_pays", "s3_requester_pays", false) ||
	               flag("url_compatibility_mode", "s3_url_compatibility_mode", false);
	return !unusual && !out.region.empty() && out.key_id.empty() == out.secret.empty();
}

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

duckdb::HTTPHeaders SignedS3Headers(const S3Credentials &credentials, SigV4Request &request) {
	if (!credentials.session_token.empty()) {
		request.headers.emplace_back("x-amz-security-token", credentials.session_token);
	}
	duckdb::HTTPHeaders headers;
	for (auto &header : request.SignedHeaders()) {
		if (header.first != "host") {
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

bool ResolveS3Object(const string &path, optional_ptr<FileOpener> opener, S3Credentials &credentials,
                     S3Address &address) {
	return S3Credentials::Read(path, opener, credentials) &&
	       S3Address::Resolve(path, credentials.endpoint, credentials.url_style, credentials.use_ssl, address);
}

duckdb::HTTPHeaders SignedS3RangeGet(const S3Credentials &credentials, const S3Address &address, const string &range) {
	SigV4Request request;
	request.method = "GET";
	request.host = address.host;
	request.path = address.path;
	request.region = credentials.region;
	request.amz_date = SigV4Request::AmzDate(std::time(nullptr));
	request.headers = {{"range", range}};
	return SignedS3Headers(credentials, request);
}

S3CredentialSource::S3CredentialSource(string path_p, S3Credentials credentials_p, optional_ptr<FileOpener> opener)
    : path(std::move(path_p)), credentials(std::move(credentials_p)) {
	auto context = FileOpener::TryGetClientContext(opener);
	if (context) {
		client_context = context->shared_from_this();
		replacements = ExtensionState::Get(*context->db)->credential_replacements;
		std::lock_guard<std::mutex> guard(lock);
		FollowReplacementsLocked();
	}
}

bool S3CredentialSource::FollowReplacementsLocked() const {
	if (!replacements || replacements->Changes() == replacements_seen) {
		return false;
	}
	replacements_seen = replacements->Changes();
	SigningKeys keys;
	if (!replacements->Follow(Fingerprint(credentials), keys)) {
		return false;
	}
	credentials.key_id = std::move(keys.key_id);
	credentials.secret = std::move(keys.secret);
	credentials.session_token = std::move(keys.session_token);
	generation++;
	return true;
}

S3Credentials S3CredentialSource::Current(uint64_t &generation_out) const {
	std::lock_guard<std::mutex> guard(lock);
	FollowReplacementsLocked();
	generation_out = generation;
	return credentials;
}

bool S3CredentialSource::Refresh(uint64_t signed_with, IoStats &stats) {
	{
		std::lock_guard<std::mutex> guard(lock);
		FollowReplacementsLocked();
		if (generation != signed_with) {
			return true; // another request's refusal refreshed them meanwhile (this source's or another's)
		}
	}
	auto context = client_context.lock();
	if (!context) {
		return false;
	}
	S3Credentials fresh;
	S3Address address;
	try {
		// In a transaction of its own: the query's sees the secrets as they were when it began, not one the user
		// replaced since (in another connection) or a credential chain refreshed.
		duckdb::Connection connection(*context->db);
		connection.BeginTransaction();
		bool resolved =
		    ResolveS3Object(path, duckdb::ClientData::Get(*connection.context).file_opener.get(), fresh, address);
		connection.Rollback();
		if (!resolved) {
			return false;
		}
	} catch (std::exception &) {
		return false;
	}
	std::lock_guard<std::mutex> guard(lock);
	if (generation != signed_with) {
		return true; // refreshed by another request while this one looked
	}
	if (fresh.key_id == credentials.key_id && fresh.secret == credentials.secret &&
	    fresh.session_token == credentials.session_token) {
		return false; // the same credentials: the refusal stands
	}
	if (replacements && SameUse(credentials, fresh)) {
		replacements->Record(Fingerprint(credentials), Fingerprint(fresh),
		                     SigningKeys {fresh.key_id, fresh.secret, fresh.session_token});
	}
	credentials = std::move(fresh);
	generation++;
	stats.Add(Counter::CREDENTIALS_REFRESHED);
	return true;
}

} // namespace httpfs2
