#include "adapter/stores/s3_uploads.hpp"

#include "adapter/filesystem/error_context.hpp"
#include "adapter/stores/s3_signing.hpp"
#include "duckdb/common/exception/http_exception.hpp"
#include "duckdb/main/client_context.hpp"
#include "mbedtls_wrapper.hpp"

#include <mutex>
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

string Sha256Hex(const string &bytes) {
	auto digest = Tls::ComputeSha256Hash(bytes);
	string text(digest.size() * 2, '0');
	Tls::ToBase16(&digest[0], &text[0], digest.size());
	return text;
}

class S3UploadTarget : public UploadTarget {
public:
	S3UploadTarget(string path_p, S3Credentials credentials_p, S3Address address_p, duckdb::HTTPUtil &http_p,
	               duckdb::unique_ptr<duckdb::HTTPParams> params_p, ReadStats &stats_p)
	    : path(std::move(path_p)), credentials(std::move(credentials_p)), address(std::move(address_p)), http(http_p),
	      params(std::move(params_p)), stats(stats_p) {
		// DuckDB's HTTP log records headers: the signature and the session token must not reach it.
		params->logger = nullptr;
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

	void Abort(const string &upload_id) noexcept override {
		try {
			auto request = Signed("DELETE", {{"uploadId", upload_id}}, SigV4Request::EMPTY_PAYLOAD_SHA256);
			duckdb::DeleteRequestInfo info(request.first, request.second, *params);
			auto client = TakeClient();
			http.Request(info, client);
			stats.Add(Counter::UPLOADS_ABORTED);
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
		duckdb::PutRequestInfo info(request.first, request.second, *params,
		                            reinterpret_cast<duckdb::const_data_ptr_t>(data), size, CONTENT_TYPE);
		return Send(info, context);
	}

	//! The answer's body.
	string Post(const Query &query, const string &body, const string &context) {
		auto request = Signed("POST", query, Sha256Hex(body));
		duckdb::PostRequestInfo info(request.first, request.second, *params,
		                             reinterpret_cast<duckdb::const_data_ptr_t>(body.data()), body.size());
		Send(info, context);
		return std::move(info.buffer_out);
	}

	//! Sends on a kept-alive connection; httpfs's error (type, status code) with httpfs2's context on failure.
	duckdb::unique_ptr<duckdb::HTTPResponse> Send(duckdb::BaseRequest &info, const string &context) {
		auto client = TakeClient();
		duckdb::unique_ptr<duckdb::HTTPResponse> response;
		try {
			response = http.Request(info, client);
		} catch (std::exception &error) {
			RethrowWithContext(error, "httpfs2: " + context + " of '" + path + "' failed: ", address.Url());
		}
		if (!response) {
			throw duckdb::IOException("httpfs2: %s of '%s' failed: no answer", context, path);
		}
		if (!response->Success()) {
			throw duckdb::HTTPException(*response, "httpfs2: %s of '%s' failed: HTTP %d", context, path,
			                            static_cast<int>(response->status));
		}
		GiveBack(std::move(client));
		return response;
	}

	duckdb::unique_ptr<duckdb::HTTPClient> TakeClient() {
		std::lock_guard<std::mutex> guard(lock);
		if (idle.empty()) {
			return nullptr;
		}
		auto client = std::move(idle.back());
		idle.pop_back();
		return client;
	}

	void GiveBack(duckdb::unique_ptr<duckdb::HTTPClient> client) {
		if (client) {
			std::lock_guard<std::mutex> guard(lock);
			idle.push_back(std::move(client));
		}
	}

	static const string CONTENT_TYPE;
	const string path;
	const S3Credentials credentials;
	const S3Address address;
	duckdb::HTTPUtil &http;
	const duckdb::unique_ptr<duckdb::HTTPParams> params;
	ReadStats &stats;
	std::mutex lock;
	std::vector<duckdb::unique_ptr<duckdb::HTTPClient>> idle;
};

const string S3UploadTarget::CONTENT_TYPE = "application/octet-stream";

} // namespace

std::shared_ptr<UploadTarget> S3Uploads::TargetFor(const string &path, optional_ptr<FileOpener> opener,
                                                   ReadStats &stats) {
	auto context = FileOpener::TryGetClientContext(opener);
	S3Credentials credentials;
	S3Address address;
	if (!context || !S3Credentials::Read(path, opener, credentials) || !credentials.kms_key_id.empty() ||
	    !S3Address::Resolve(path, credentials.endpoint, credentials.url_style, credentials.use_ssl, address)) {
		return nullptr;
	}
	auto &http = duckdb::HTTPUtil::Get(*context->db);
	duckdb::FileOpenerInfo info {path};
	return std::make_shared<S3UploadTarget>(path, std::move(credentials), std::move(address), http,
	                                        http.InitializeParameters(opener, &info), stats);
}

} // namespace httpfs2
