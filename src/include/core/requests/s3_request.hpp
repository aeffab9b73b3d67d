//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/s3_request.hpp
//
// What httpfs2 needs to send one GET of an s3:// object itself (to fetch a Parquet file's tail and learn its version
// in the round trip httpfs's HEAD would take): the URL httpfs would address, as its S3 secret settings resolve it,
// the AWS Signature Version 4 canonical request and string to sign, and the answer's Content-Range. The HMACs and
// hashes are computed by the adapter (DuckDB's mbedtls).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/requests/http_parts.hpp"

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

namespace httpfs2 {

//! Where a request for an s3:// object goes.
struct S3Address {
	//! "http://" or "https://".
	std::string scheme;
	//! host[:port], as the Host header carries it.
	std::string host;
	//! The percent-encoded path (the bucket first in path style).
	std::string path;
	//! The bucket's own path, for requests about the bucket (ListMultipartUploads): "/" or, in path style, "/bucket".
	std::string bucket_path;
	//! The object's key, not encoded.
	std::string key;

	//! Resolves `url` (s3://bucket/key, or another scheme of httpfs's S3 filesystem) as httpfs does with these secret
	//! settings; false for what httpfs2 does not address itself (no scheme, a query string, an endpoint with a scheme
	//! or a path, a bucket with dots in virtual-host style over TLS).
	static bool Resolve(const std::string &url, const std::string &endpoint, const std::string &url_style, bool use_ssl,
	                    S3Address &out);
	std::string Url() const {
		return scheme + host + path;
	}
};

//! A request as Signature Version 4 signs it for the `s3` service.
struct SigV4Request {
	std::string method;
	std::string host;
	std::string path;
	//! The query's parameters, not encoded (`uploads` with an empty value, `partNumber`, `uploadId`...).
	std::vector<HttpHeader> query;
	std::string region;
	//! YYYYMMDD'T'HHMMSS'Z', the request's x-amz-date.
	std::string amz_date;
	//! Headers besides host, x-amz-date and x-amz-content-sha256 that are signed (range, x-amz-security-token...);
	//! names in lower case.
	std::vector<HttpHeader> headers;

	//! The request's x-amz-content-sha256: the hex SHA-256 of its body, or UNSIGNED_PAYLOAD.
	std::string payload_sha256 = EMPTY_PAYLOAD_SHA256;

	//! The hex SHA-256 of an empty payload.
	static const char *const EMPTY_PAYLOAD_SHA256;
	//! A body left out of the signature, which S3 accepts instead of its hash: no pass over the bytes before sending.
	static const char *const UNSIGNED_PAYLOAD;
	//! `seconds` since the epoch as x-amz-date writes it.
	static std::string AmzDate(std::time_t seconds);

	//! All signed headers, sorted by name: host, x-amz-content-sha256, x-amz-date and `headers`.
	std::vector<HttpHeader> SignedHeaders() const;
	//! The signed header names, ';'-separated.
	std::string SignedHeaderNames() const;
	//! The query as signed and sent: parameters encoded, sorted by name, '&'-separated (without the '?').
	std::string CanonicalQuery() const;
	std::string CanonicalRequest() const;
	//! date/region/s3/aws4_request
	std::string CredentialScope() const;
	//! AWS4-HMAC-SHA256, the date, the scope and the canonical request's hex SHA-256.
	std::string StringToSign(const std::string &canonical_request_sha256_hex) const;
	//! The Authorization header's value for `signature_hex`.
	std::string Authorization(const std::string &key_id, const std::string &signature_hex) const;
};

//! The text of the first `<name>` element of an S3 XML answer (entities left as they are); empty when there is none.
std::string XmlElement(const std::string &xml, const std::string &name);

//! The ids of the multipart uploads of exactly `key` that a ListMultipartUploads answer lists as initiated from
//! `from` to `to` (seconds since the epoch by the store's clock, both included).
std::vector<std::string> UploadsInitiatedBetween(const std::string &xml, const std::string &key, std::time_t from,
                                                 std::time_t to);

//! One object a ListObjectsV2 answer lists.
struct ListedObject {
	//! The object's key, its XML character references replaced.
	std::string key;
	uint64_t size = 0;
	//! As an answer's ETag header carries it (with its quotes).
	std::string etag;
	//! Seconds since the epoch, to the second.
	std::time_t last_modified = 0;
};

//! The objects a ListObjectsV2 answer lists, in its order (the keys' byte order), and whether more keys follow them
//! (`truncated`). False when `xml` is no such answer or an object in it lacks its key, size, ETag or time.
bool ParseObjectListing(const std::string &xml, std::vector<ListedObject> &objects, bool &truncated);

//! The parts of `Content-Range: bytes <first>-<last>/<total>`; false for any other form (`*`, an unknown total).
bool ParseContentRange(const std::string &value, uint64_t &first, uint64_t &last, uint64_t &total);

} // namespace httpfs2
