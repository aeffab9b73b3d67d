#include "adapter/stores/s3_uploads.hpp"

#include "adapter/common/error_context.hpp"
#include "adapter/stores/s3_signing.hpp"
#include "adapter/stores/upload_requests.hpp"
#include "duckdb/common/crypto/md5.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "mbedtls_wrapper.hpp"

#include <ctime>
#include <new>
#include <vector>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;
using Tls = duckdb_mbedtls::MbedTlsWrapper;

namespace {

string Unquoted(const string &etag) {
	return etag.size() >= 2 && etag.front() == '"' && etag.back() == '"' ? etag.substr(1, etag.size() - 2) : etag;
}

//! S3's ETag of a multipart object: the MD5 of its parts' MD5s (their ETags, as bytes), then "-<parts>". Empty when
//! a part's ETag is not an MD5 (SSE-KMS, other stores): then nothing can be told from it.
string MultipartETag(const std::vector<string> &parts) {
	auto nibble = [](char c) {
		return c >= '0' && c <= '9'   ? c - '0'
		       : c >= 'a' && c <= 'f' ? c - 'a' + 10
		       : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                              : -1;
	};
	string digests;
	for (auto &etag : parts) {
		auto hex = Unquoted(etag);
		if (hex.size() != 2 * duckdb::MD5Context::MD5_HASH_LENGTH_BINARY) {
			return string();
		}
		for (size_t i = 0; i < hex.size(); i += 2) {
			int high = nibble(hex[i]), low = nibble(hex[i + 1]);
			if (high < 0 || low < 0) {
				return string();
			}
			digests.push_back(static_cast<char>(high * 16 + low));
		}
	}
	duckdb::MD5Context md5;
	md5.Add(digests);
	return md5.FinishHex() + "-" + std::to_string(parts.size());
}

string Sha256Hex(const string &bytes) {
	auto digest = Tls::ComputeSha256Hash(bytes);
	string text(digest.size() * 2, '0');
	Tls::ToBase16(&digest[0], &text[0], digest.size());
	return text;
}

class S3UploadTarget : public UploadTarget {
public:
	S3UploadTarget(std::unique_ptr<UploadRequests> requests_p, std::shared_ptr<S3CredentialSource> credentials_p,
	               S3Address address_p, IoStats &stats_p)
	    : requests(std::move(requests_p)), path(requests->path), credentials(std::move(credentials_p)),
	      address(std::move(address_p)), stats(stats_p) {
		// An upload in flight keeps its id: only the signatures of its next requests change.
		auto source = credentials;
		requests->RefreshCredentialsWith(
		    [source, &stats_p](uint64_t signed_with) { return source->Refresh(signed_with, stats_p); });
	}

	//! R2 rejects a multipart upload whose parts but the last differ in size; S3 (and the others) take any sizes.
	bool EqualPartsOnly() const override {
		return path.rfind("r2://", 0) == 0 || address.host.find(".r2.cloudflarestorage.com") != string::npos;
	}

	string Begin() override {
		begin_from = std::time(nullptr);
		string body;
		try {
			body = Post({{"uploads", ""}}, string(), "beginning the upload", begin_in_doubt);
		} catch (...) {
			begin_to = std::time(nullptr);
			AbortLostBegins();
			throw;
		}
		begin_to = std::time(nullptr);
		auto id = XmlElement(body, "UploadId");
		if (id.empty()) {
			throw duckdb::IOException("httpfs2: the store's answer to CreateMultipartUpload of '%s' has no UploadId",
			                          path);
		}
		return id;
	}

	string SendPart(const string &upload_id, uint64_t number, const char *data, uint64_t size) override {
		auto context = "uploading part " + std::to_string(number) + " (" + std::to_string(size) + " bytes)";
		if (number > MAX_PARTS) {
			throw duckdb::IOException("httpfs2: %s of '%s' failed: an S3 object has at most %llu parts; raise "
			                          "httpfs2_write_part_size_bytes",
			                          context, path, static_cast<unsigned long long>(MAX_PARTS));
		}
		auto response = Put({{"partNumber", std::to_string(number)}, {"uploadId", upload_id}}, data, size, context);
		if (!response->headers.HasHeader("ETag")) {
			throw duckdb::IOException("httpfs2: %s of '%s': the store's answer has no ETag", context, path);
		}
		stats.Add(Counter::UPLOAD_PARTS);
		stats.Add(Counter::UPLOAD_BYTES, size);
		return response->headers.GetHeaderValue("ETag");
	}

	void Complete(const string &upload_id, const std::vector<string> &parts) override {
		string xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
		for (size_t i = 0; i < parts.size(); i++) {
			xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + parts[i] + "</ETag></Part>";
		}
		xml += "</CompleteMultipartUpload>";
		auto context = "completing the upload of " + std::to_string(parts.size()) + " parts";
		bool in_doubt = false; // a completion whose answer was lost: see Completed
		string body;
		try {
			body = Post({{"uploadId", upload_id}}, xml, context, in_doubt);
		} catch (std::exception &error) {
			if (!in_doubt) {
				throw;
			}
			// Unless Completed finds the object, the COPY fails with this: the key may hold the new object or the old.
			RethrowWithContext(error,
			                   "httpfs2: the completion of '" + path +
			                       "' may have taken effect (an earlier attempt's answer was lost, and the object at "
			                       "the key could not be checked to be this one): ",
			                   path);
		}
		// CompleteMultipartUpload can answer 200 and report its failure in the body.
		if (body.find("<Error>") != string::npos || body.find("<CompleteMultipartUploadResult") == string::npos) {
			auto code = XmlElement(body, "Code");
			throw duckdb::IOException("httpfs2: %s of '%s' failed: %s", context, path,
			                          code.empty() ? string("the store's answer is not a completion") : code);
		}
		AbortLostBegins();
	}

	//! A completion whose answer was lost is sent again, and S3 answers the retry that no such upload is left: the
	//! object is then the one these parts make when its ETag is theirs.
	bool Completed(const std::vector<string> &parts) noexcept override {
		try {
			auto expected = MultipartETag(parts);
			if (expected.empty()) {
				return false;
			}
			duckdb::unique_ptr<duckdb::HeadRequestInfo> info;
			auto response = requests->SendIdempotent(
			    [&](duckdb::HTTPParams &params, uint64_t &signed_with) -> duckdb::BaseRequest & {
				    auto request = Signed("HEAD", {}, SigV4Request::EMPTY_PAYLOAD_SHA256, signed_with);
				    info = duckdb::make_uniq<duckdb::HeadRequestInfo>(request.first, request.second, params);
				    return *info;
			    },
			    "checking the object after its completion failed");
			if (!response->HasHeader("ETag") || Unquoted(response->GetHeaderValue("ETag")) != expected) {
				return false;
			}
		} catch (...) {
			return false;
		}
		AbortLostBegins();
		return true;
	}

	void Abort(const string &upload_id) noexcept override {
		if (Delete(upload_id)) {
			stats.Add(Counter::UPLOADS_ABORTED);
		}
		AbortLostBegins();
	}

	void PutWhole(const char *data, uint64_t size) override {
		Put({}, data, size, "uploading the object (" + std::to_string(size) + " bytes)");
		stats.Add(Counter::UPLOAD_PARTS);
		stats.Add(Counter::UPLOAD_BYTES, size);
	}

private:
	using Query = std::vector<HttpHeader>;

	//! AbortMultipartUpload, tried harder than httpfs's policy asks: an upload left open is billed until a lifecycle
	//! rule removes it. Whether the upload is gone.
	bool Delete(const string &upload_id) noexcept {
		try {
			duckdb::unique_ptr<duckdb::DeleteRequestInfo> info;
			bool in_doubt = false;
			requests->SendCleanup(
			    [&](duckdb::HTTPParams &params, uint64_t &signed_with) -> duckdb::BaseRequest & {
				    auto request =
				        Signed("DELETE", {{"uploadId", upload_id}}, SigV4Request::EMPTY_PAYLOAD_SHA256, signed_with);
				    info = duckdb::make_uniq<duckdb::DeleteRequestInfo>(request.first, request.second, params);
				    return *info;
			    },
			    "aborting the upload", ABORT_ATTEMPTS, in_doubt);
			return true;
		} catch (std::exception &error) {
			// NoSuchUpload: an earlier attempt's answer was lost.
			duckdb::ErrorData data(error);
			auto status = data.ExtraInfo().find("status_code");
			return status != data.ExtraInfo().end() && status->second == "404";
		} catch (...) {
			return false;
		}
	}

	//! A CreateMultipartUpload whose answer was lost may have begun an upload nobody knows the id of: after one,
	//! the uploads of this key the store lists as initiated while Begin was sending (by the store's clock, with a
	//! margin) are aborted. Another writer's upload of the same key begun in those seconds would go too, and fail
	//! its COPY with NoSuchUpload: a race for the key that one of the two loses anyway.
	void AbortLostBegins() noexcept {
		if (!begin_in_doubt) {
			return;
		}
		begin_in_doubt = false;
		try {
			string body;
			duckdb::unique_ptr<duckdb::GetRequestInfo> info;
			bool in_doubt = false;
			// Tried as hard as an abort: what it finds is left open otherwise.
			auto response = requests->SendCleanup(
			    [&](duckdb::HTTPParams &params, uint64_t &signed_with) -> duckdb::BaseRequest & {
				    auto request = Signed("GET", {{"uploads", ""}, {"prefix", address.key}},
				                          SigV4Request::EMPTY_PAYLOAD_SHA256, signed_with, address.bucket_path);
				    body.clear();
				    // Both handlers are set: httpfs's httplib client calls the response handler unchecked.
				    info = duckdb::make_uniq<duckdb::GetRequestInfo>(
				        request.first, request.second, params, [](const duckdb::HTTPResponse &) { return true; },
				        [&body](duckdb::const_data_ptr_t data, duckdb::idx_t length) {
					        body.append(reinterpret_cast<const char *>(data), length);
					        return true;
				        });
				    return *info;
			    },
			    "listing the uploads a lost answer may have begun", ABORT_ATTEMPTS, in_doubt);
			// The store's clock against this machine's, from the answer's Date.
			std::time_t store_now = 0;
			auto skew = response->HasHeader("Date") && ParseHttpDate(response->GetHeaderValue("Date"), store_now)
			                ? store_now - std::time(nullptr)
			                : 0;
			for (auto &id : UploadsInitiatedBetween(body, address.key, begin_from + skew - CLOCK_MARGIN_SECONDS,
			                                        begin_to + skew + CLOCK_MARGIN_SECONDS)) {
				if (Delete(id)) {
					stats.Add(Counter::UPLOADS_ABORTED);
				}
			}
		} catch (duckdb::Exception &) { // the store refused or did not answer: its lifecycle rules remove what is left
		} catch (std::bad_alloc &) {
		}
	}

	//! The URL and headers of a request signed now; `signed_with` gets the credentials' generation.
	std::pair<string, duckdb::HTTPHeaders> Signed(const string &method, const Query &query, const string &payload,
	                                              uint64_t &signed_with, const string &path_p = string()) {
		auto now = credentials->Current(signed_with);
		SigV4Request request;
		request.method = method;
		request.host = address.host;
		request.path = path_p.empty() ? address.path : path_p;
		request.query = query;
		request.region = now.region;
		request.amz_date = SigV4Request::AmzDate(std::time(nullptr));
		request.payload_sha256 = payload;
		auto headers = SignedS3Headers(now, request);
		auto url = address.scheme + address.host + request.path;
		if (!query.empty()) {
			url += "?" + request.CanonicalQuery();
		}
		return {url, std::move(headers)};
	}

	duckdb::unique_ptr<duckdb::HTTPResponse> Put(const Query &query, const char *data, uint64_t size,
	                                             const string &context) {
		duckdb::unique_ptr<duckdb::PutRequestInfo> info;
		return requests->SendData(
		    [&](duckdb::HTTPParams &params, uint64_t &signed_with) -> duckdb::BaseRequest & {
			    // Signed afresh for each attempt: a throttled one may wait seconds, and credentials may be refreshed.
			    auto request = Signed("PUT", query, SigV4Request::UNSIGNED_PAYLOAD, signed_with);
			    info = duckdb::make_uniq<duckdb::PutRequestInfo>(request.first, request.second, params,
			                                                     reinterpret_cast<duckdb::const_data_ptr_t>(data), size,
			                                                     CONTENT_TYPE);
			    return *info;
		    },
		    context);
	}

	//! The answer's body. The attempts are counted here: `in_doubt` tells whether one whose answer was lost may
	//! have taken effect.
	string Post(const Query &query, const string &body, const string &context, bool &in_doubt) {
		auto signature = Sha256Hex(body);
		duckdb::unique_ptr<duckdb::PostRequestInfo> info;
		requests->SendAttempts(
		    [&](duckdb::HTTPParams &params, uint64_t &signed_with) -> duckdb::BaseRequest & {
			    auto request = Signed("POST", query, signature, signed_with);
			    info = duckdb::make_uniq<duckdb::PostRequestInfo>(
			        request.first, request.second, params, reinterpret_cast<duckdb::const_data_ptr_t>(body.data()),
			        body.size());
			    return *info;
		    },
		    context, 1, in_doubt);
		return std::move(info->buffer_out);
	}

	//! S3's limit on the parts of one multipart upload.
	static constexpr uint64_t MAX_PARTS = 10000;
	static constexpr uint64_t ABORT_ATTEMPTS = 6;
	//! The store's clock is read from a Date header (whole seconds) a round trip after the fact.
	static constexpr std::time_t CLOCK_MARGIN_SECONDS = 2;
	static const string CONTENT_TYPE;
	const std::unique_ptr<UploadRequests> requests;
	const string &path;
	//! Shared with the refresh UploadRequests calls.
	const std::shared_ptr<S3CredentialSource> credentials;
	const S3Address address;
	IoStats &stats;
	//! Whether a CreateMultipartUpload of this upload failed in a way that may have begun an upload all the same,
	//! and when Begin sent (this machine's clock).
	bool begin_in_doubt = false;
	std::time_t begin_from = 0;
	std::time_t begin_to = 0;
};

const string S3UploadTarget::CONTENT_TYPE = "application/octet-stream";

} // namespace

std::shared_ptr<UploadTarget> S3Uploads::TargetFor(const string &path, optional_ptr<FileOpener> opener,
                                                   IoStats &stats) {
	S3Credentials credentials;
	S3Address address;
	if (!ResolveS3Object(path, opener, credentials, address) || !credentials.kms_key_id.empty()) {
		return nullptr;
	}
	auto requests = UploadRequests::For(path, opener, stats);
	if (!requests) {
		return nullptr;
	}
	auto source = std::make_shared<S3CredentialSource>(path, std::move(credentials), opener);
	return std::make_shared<S3UploadTarget>(std::move(requests), std::move(source), std::move(address), stats);
}

} // namespace httpfs2
