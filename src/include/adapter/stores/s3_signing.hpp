//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/s3_signing.hpp
//
// What requests httpfs2 sends to S3 itself (range GETs, a Parquet file's tail, an upload's parts) share: the path
// forms of httpfs's S3 filesystem that httpfs2 addresses itself (s3://, s3a://, s3n://, r2://), the credentials and
// endpoint httpfs would use for a path, read from the secret that matches it with the same fallback to its s3_*
// settings, and the headers of a request signed with them (Signature Version 4, DuckDB's mbedtls).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/io_stats.hpp"
#include "core/requests/credential_replacements.hpp"
#include "core/requests/s3_request.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"

#include <memory>
#include <mutex>
#include <string>

namespace httpfs2 {

struct S3Credentials {
	std::string key_id;
	std::string secret;
	std::string session_token;
	std::string region;
	std::string endpoint;
	std::string url_style;
	std::string kms_key_id;
	bool use_ssl = true;
	//! The secret they were read from (its storage, type, name and scope): no credential, what tells the replacements
	//! of one secret's keys from another's (CredentialReplacements).
	std::string secret_identity;

	//! The credentials of the secret matching `path` (of the types httpfs looks up for S3 paths: s3, r2, gcs, aws).
	//! False for what httpfs2 leaves to httpfs: gcs:// and gs:// paths, no secret (the settings or environment alone),
	//! requester pays, URL compatibility mode, no region, a key without a secret.
	static bool Read(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener, S3Credentials &out);
};

//! The credentials and address of the s3:// object `path` as httpfs would reach it; false for what httpfs2 leaves to
//! httpfs (S3Credentials::Read, S3Address::Resolve).
bool ResolveS3Object(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener,
                     S3Credentials &credentials, S3Address &address);

//! The credentials the requests of one reader or upload of an s3:// path are signed with (from any of its threads), and
//! their lookup again after the store refused them: an expired session token, a secret the user replaced, a
//! credential chain that has fresh ones. Credentials the database's requests found refused are not sent again: a source
//! made with them, or holding them, takes what replaced them (the database's CredentialReplacements, which refreshes
//! record), so that the readers and uploads a query makes after a rotation are not refused once each.
class S3CredentialSource {
public:
	//! `credentials` as ResolveS3Object read them for `path` through `opener`, whose connection is where they are
	//! looked up again (and whose database's replacements they follow).
	S3CredentialSource(std::string path, S3Credentials credentials, duckdb::optional_ptr<duckdb::FileOpener> opener);

	//! What to sign with now, and its generation (how often they were replaced).
	S3Credentials Current(uint64_t &generation) const;
	//! After the store refused credentials of generation `signed_with`: true when they changed since (replaced by
	//! another request's refresh meanwhile, or looked up again here as DuckDB resolves the path's secret now), and
	//! requests sign with the new ones from now on; a lookup here is counted in `stats` and recorded as the refused
	//! credentials' replacement when it comes from the same secret and signs for the same endpoint and region.
	bool Refresh(uint64_t signed_with, IoStats &stats);

private:
	//! Takes the newest replacement of `credentials` recorded since this source last looked; true when there was one.
	bool FollowReplacementsLocked() const;

	const std::string path;
	duckdb::weak_ptr<duckdb::ClientContext> client_context;
	std::shared_ptr<CredentialReplacements> replacements;
	mutable std::mutex lock;
	// Mutable: Current follows replacements recorded meanwhile.
	mutable S3Credentials credentials;
	mutable uint64_t generation = 0;
	//! CredentialReplacements::Changes when this source last followed them.
	mutable uint64_t replacements_seen = 0;
};

//! The headers of a GET of `range` ("bytes=...") of the object at `address`, signed now.
duckdb::HTTPHeaders SignedS3RangeGet(const S3Credentials &credentials, const S3Address &address,
                                     const std::string &range);

//! `request` signed with `credentials` (unsigned for a secret without key: a public bucket), as the headers to send;
//! the Host header is left to the HTTP client, which sends the URL's. Never log these: they carry the signature.
duckdb::HTTPHeaders SignedS3Headers(const S3Credentials &credentials, SigV4Request &request);

} // namespace httpfs2
