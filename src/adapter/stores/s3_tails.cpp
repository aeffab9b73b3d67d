#include "adapter/stores/s3_tails.hpp"

#include "adapter/stores/s3_signing.hpp"
#include "adapter/stores/store_http.hpp"
#include "core/requests/range_answer.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/common/http_util.hpp"

#include <chrono>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;

constexpr uint64_t S3Tails::TAIL_BYTES;
constexpr uint64_t S3Tails::TAIL_TIMEOUT_SECONDS;

static bool TailFromResponse(const duckdb::HTTPResponse &response, string body, ObjectTail &tail) {
	if (!VersionOfRangeAnswer(response, tail.version, tail.range) || tail.range.End() != tail.version.size ||
	    body.size() != tail.range.length) {
		return false;
	}
	tail.bytes = std::move(body);
	string why;
	tail.names_version = NamesItsVersion(RangeAnswerOf(response), why);
	// An ETag that names the bytes lets the footer serve later queries; without one, it serves the query's opens alone
	// (VersionKey::scope). Any other ETag (weak, made of size and time) is left to the HEAD.
	return tail.version.etag.empty() || tail.version.IsContentHash();
}

TailSend S3Tails::Prepare(const string &path, optional_ptr<FileOpener> opener, IoStats &stats,
                          StreamController &streams) {
	try {
		auto context = FileOpener::TryGetClientContext(opener);
		S3Credentials credentials;
		S3Address address;
		if (!context || !ResolveS3Object(path, opener, credentials, address)) {
			return nullptr;
		}
		auto headers = SignedS3RangeGet(credentials, address, "bytes=-" + std::to_string(TAIL_BYTES));
		// It stands in for the HEAD, which the open makes if it fails. Logged while the connection lives: it may be
		// sent after the query that prepared it ended.
		auto request =
		    std::make_shared<StandInRequest>(duckdb::HTTPUtil::Get(*context->db), path, opener, TAIL_TIMEOUT_SECONDS,
		                                     ReadThrottleListeners(*context, stats, &streams));
		auto url = address.Url();
		return [url, headers, request, &stats](ObjectTail &tail) {
			return SendTailGet(url, headers, *request, stats, tail);
		};
	} catch (std::exception &) {
		return nullptr;
	}
}

bool S3Tails::SendTailGet(const string &url, const duckdb::HTTPHeaders &headers, const StandInRequest &request,
                          IoStats &stats, ObjectTail &tail) {
	try {
		string body;
		auto start = std::chrono::steady_clock::now();
		auto since_start = [start]() {
			return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
		};
		duckdb::unique_ptr<duckdb::GetRequestInfo> get;
		auto response = request.Send([&]() -> duckdb::BaseRequest & {
			body.clear();
			get = duckdb::make_uniq<duckdb::GetRequestInfo>(
			    url, headers, *request.params,
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
			return *get;
		});
		tail.seconds = since_start();
		return response && TailFromResponse(*response, std::move(body), tail);
	} catch (std::exception &) {
		return false;
	}
}

bool S3Tails::Fetch(const string &path, optional_ptr<FileOpener> opener, IoStats &stats, StreamController &streams,
                    ObjectTail &tail) {
	auto send = Prepare(path, opener, stats, streams);
	return send && send(tail);
}

} // namespace httpfs2
