#include "adapter/stores/s3_uploads.hpp"

#include "adapter/stores/s3_signing.hpp"
#include "adapter/stores/upload_requests.hpp"
#include "duckdb/common/crypto/md5.hpp"
#include "duckdb/common/exception.hpp"
#include "mbedtls_wrapper.hpp"

#include <vector>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;
using Tls = duckdb_mbedtls::MbedTlsWrapper;

namespace {

//! The text of the first `<name>` element of an S3 XML answer; empty when there is none.
string XmlElement(const string &xml, const string &name) {
	auto open = "<" + name + ">";
	auto start = xml.find(open);
	if (start == string::npos) {
		return string();
	}
	start += open.size();
	auto end = xml.find("</" + name + ">", start);
	return end == string::npos ? string() : xml.substr(start, end - start);
}

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
	S3UploadTarget(std::unique_ptr<UploadRequests> requests_p, S3Credentials credentials_p, S3Address address_p,
	               ReadStats &stats_p)
	    : requests(std::move(requests_p)), path(requests->path), credentials(std::move(credentials_p)),
	      address(std::move(address_p)), stats(stats_p) {
	}

	string Begin() override {
		auto body = Post({{"uploads", ""}}, string(), "beginning the upload");
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
		auto body = Post({{"uploadId", upload_id}}, xml, context);
		// CompleteMultipartUpload can answer 200 and report its failure in the body.
		if (body.find("<Error>") != string::npos || body.find("<CompleteMultipartUploadResult") == string::npos) {
			auto code = XmlElement(body, "Code");
			throw duckdb::IOException("httpfs2: %s of '%s' failed: %s", context, path,
			                          code.empty() ? string("the store's answer is not a completion") : code);
		}
	}

	//! httpfs retries a completion whose answer was lost, and S3 answers the retry that no such upload is left: the
	//! object is then the one these parts make when its ETag is theirs.
	bool Completed(const std::vector<string> &parts) noexcept override {
		try {
			auto expected = MultipartETag(parts);
			if (expected.empty()) {
				return false;
			}
			auto request = Signed("HEAD", {}, SigV4Request::EMPTY_PAYLOAD_SHA256);
			duckdb::HeadRequestInfo info(request.first, request.second, requests->Params());
			auto response = requests->Send(info, "checking the object after its completion failed");
			return response->HasHeader("ETag") && Unquoted(response->GetHeaderValue("ETag")) == expected;
		} catch (...) {
			return false;
		}
	}

	void Abort(const string &upload_id) noexcept override {
		try {
			auto request = Signed("DELETE", {{"uploadId", upload_id}}, SigV4Request::EMPTY_PAYLOAD_SHA256);
			duckdb::DeleteRequestInfo info(request.first, request.second, requests->Params());
			if (requests->TrySend(info)) {
				stats.Add(Counter::UPLOADS_ABORTED);
			}
		} catch (...) { // nothing more to do: S3's lifecycle rules remove what is left
		}
	}

	void PutWhole(const char *data, uint64_t size) override {
		Put({}, data, size, "uploading the object (" + std::to_string(size) + " bytes)");
		stats.Add(Counter::UPLOAD_PARTS);
		stats.Add(Counter::UPLOAD_BYTES, size);
	}

private:
	using Query = std::vector<HttpHeader>;

	//! The URL and headers of a signed request.
	std::pair<string, duckdb::HTTPHeaders> Signed(const string &method, const Query &query, const string &payload) {
		SigV4Request request;
		request.method = method;
		request.host = address.host;
		request.path = address.path;
		request.query = query;
		request.region = credentials.region;
		request.amz_date = SigV4Request::AmzDate(std::time(nullptr));
		request.payload_sha256 = payload;
		auto headers = SignedS3Headers(credentials, request);
		auto url = address.Url();
		if (!query.empty()) {
			url += "?" + request.CanonicalQuery();
		}
		return {url, std::move(headers)};
	}

	duckdb::unique_ptr<duckdb::HTTPResponse> Put(const Query &query, const char *data, uint64_t size,
	                                             const string &context) {
		auto request = Signed("PUT", query, SigV4Request::UNSIGNED_PAYLOAD);
		duckdb::PutRequestInfo info(request.first, request.second, requests->Params(),
		                            reinterpret_cast<duckdb::const_data_ptr_t>(data), size, CONTENT_TYPE);
		return requests->Send(info, context);
	}

	//! The answer's body.
	string Post(const Query &query, const string &body, const string &context) {
		auto request = Signed("POST", query, Sha256Hex(body));
		duckdb::PostRequestInfo info(request.first, request.second, requests->Params(),
		                             reinterpret_cast<duckdb::const_data_ptr_t>(body.data()), body.size());
		requests->Send(info, context);
		return std::move(info.buffer_out);
	}

	//! S3's limit on the parts of one multipart upload.
	static constexpr uint64_t MAX_PARTS = 10000;
	static const string CONTENT_TYPE;
	const std::unique_ptr<UploadRequests> requests;
	const string &path;
	const S3Credentials credentials;
	const S3Address address;
	ReadStats &stats;
};

const string S3UploadTarget::CONTENT_TYPE = "application/octet-stream";

} // namespace

std::shared_ptr<UploadTarget> S3Uploads::TargetFor(const string &path, optional_ptr<FileOpener> opener,
                                                   ReadStats &stats) {
	S3Credentials credentials;
	S3Address address;
	if (!S3Credentials::Read(path, opener, credentials) || !credentials.kms_key_id.empty() ||
	    !S3Address::Resolve(path, credentials.endpoint, credentials.url_style, credentials.use_ssl, address)) {
		return nullptr;
	}
	auto requests = UploadRequests::For(path, opener);
	if (!requests) {
		return nullptr;
	}
	return std::make_shared<S3UploadTarget>(std::move(requests), std::move(credentials), std::move(address), stats);
}

} // namespace httpfs2
