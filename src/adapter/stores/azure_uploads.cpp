#include "adapter/stores/azure_uploads.hpp"

#include "adapter/stores/azure_signing.hpp"
#include "adapter/stores/upload_requests.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/common/types/blob.hpp"

#include <cstdio>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;

namespace {

class AzureUploadTarget : public UploadTarget {
public:
	AzureUploadTarget(std::unique_ptr<UploadRequests> requests_p, AzureConnection connection_p, string url_p,
	                  IoStats &stats_p)
	    : requests(std::move(requests_p)), path(requests->path), connection(std::move(connection_p)),
	      url(std::move(url_p)), stats(stats_p) {
	}

	//! A block blob's blocks may differ in size.
	bool EqualPartsOnly() const override {
		return false;
	}

	//! Blocks need no request to begin: they are staged under the blob's name.
	string Begin() override {
		return "blocks";
	}

	string SendPart(const string &, uint64_t number, const char *data, uint64_t size) override {
		auto what = "uploading block " + std::to_string(number) + " (" + std::to_string(size) + " bytes)";
		if (number > MAX_BLOCKS) {
			throw duckdb::IOException("httpfs2: %s of '%s' failed: a blob has at most %llu blocks; raise "
			                          "httpfs2_write_part_size_bytes",
			                          what, path, static_cast<unsigned long long>(MAX_BLOCKS));
		}
		auto id = BlockId(number);
		Put({{"comp", "block"}, {"blockid", id}}, {}, data, size, OCTET_STREAM, what);
		stats.Add(Counter::UPLOAD_PARTS);
		stats.Add(Counter::UPLOAD_BYTES, size);
		return id;
	}

	void Complete(const string &, const std::vector<string> &parts) override {
		auto xml = AzureBlockListXml(parts);
		auto what = "committing the list of " + std::to_string(parts.size()) + " blocks";
		auto response = Put({{"comp", "blocklist"}}, {}, xml.data(), xml.size(), XML, what, true);
		// Put Block List answers 201 Created with the new blob's ETag; anything else did not make it.
		if (response->status != duckdb::HTTPStatusCode::Created_201 || !response->HasHeader("ETag")) {
			throw duckdb::IOException(
			    "httpfs2: %s of '%s' failed: the store's answer (HTTP %d) is not a committed blob", what, path,
			    static_cast<int>(response->status));
		}
	}

	//! Azure has no request that drops staged blocks: with no block list committed, the blob keeps what it had, and
	//! the blocks expire.
	void Abort(const string &) noexcept override {
		stats.Add(Counter::UPLOADS_ABORTED);
	}

	void PutWhole(const char *data, uint64_t size) override {
		Put({}, {{"x-ms-blob-type", "BlockBlob"}}, data, size, OCTET_STREAM,
		    "uploading the blob (" + std::to_string(size) + " bytes)");
		stats.Add(Counter::UPLOAD_PARTS);
		stats.Add(Counter::UPLOAD_BYTES, size);
	}

private:
	//! Azure's limit on the blocks of one blob.
	static constexpr uint64_t MAX_BLOCKS = 50000;
	static const string OCTET_STREAM;
	static const string XML;

	//! All ids of a blob must be of one length: base64 of the 6-digit part number is 8 characters, as long as the
	//! azure extension's ids (base64 of 4 bytes), so that blocks either writer left staged never clash in length.
	static string BlockId(uint64_t number) {
		char digits[16];
		std::snprintf(digits, sizeof(digits), "%06llu", static_cast<unsigned long long>(number));
		return duckdb::Blob::ToBase64(duckdb::string_t(digits));
	}

	//! A block or a whole blob is data (UploadRequests::SendData); the block list `ends` the upload.
	duckdb::unique_ptr<duckdb::HTTPResponse> Put(std::vector<HttpHeader> query, std::vector<HttpHeader> ms_headers,
	                                             const char *data, uint64_t size, const string &content_type,
	                                             const string &what, bool ends = false) {
		AzureRequest request;
		request.verb = "PUT";
		request.url = url;
		request.query = std::move(query);
		request.ms_headers = std::move(ms_headers);
		request.content_length = size;
		request.content_type = content_type;
		duckdb::unique_ptr<duckdb::PutRequestInfo> info;
		UploadRequests::MakeRequest make = [&](duckdb::HTTPParams &params, uint64_t &) -> duckdb::BaseRequest & {
			// Signed afresh for each attempt (its x-ms-date): a throttled one may wait seconds.
			auto authorized = AuthorizeAzureRequest(connection, request);
			info = duckdb::make_uniq<duckdb::PutRequestInfo>(authorized.first, authorized.second, params,
			                                                 reinterpret_cast<duckdb::const_data_ptr_t>(data), size,
			                                                 content_type);
			return *info;
		};
		return ends ? requests->SendIdempotent(make, what) : requests->SendData(make, what);
	}

	const std::unique_ptr<UploadRequests> requests;
	const string &path;
	const AzureConnection connection;
	//! The blob's URL, without a query.
	const string url;
	IoStats &stats;
};

const string AzureUploadTarget::OCTET_STREAM = "application/octet-stream";
const string AzureUploadTarget::XML = "application/xml";

} // namespace

std::shared_ptr<UploadTarget> AzureUploads::TargetFor(const string &path, optional_ptr<FileOpener> opener,
                                                      IoStats &stats) {
	AzureBlobPath blob;
	AzureConnection connection;
	if (!AzureBlobPath::Parse(path, blob) || !AzureConnectionFor(path, opener, connection)) {
		return nullptr;
	}
	auto requests = UploadRequests::For(path, opener, stats);
	if (!requests) {
		return nullptr;
	}
	auto url = AzureBlobUrl(connection, blob);
	return std::make_shared<AzureUploadTarget>(std::move(requests), std::move(connection), std::move(url), stats);
}

} // namespace httpfs2
