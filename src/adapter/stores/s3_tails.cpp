#include "adapter/stores/s3_tails.hpp"

#include "adapter/stores/s3_signing.hpp"
#include "core/requests/range_answer.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/common/http_util.hpp"

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;

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
                          StreamController &streams, uint64_t length) {
	try {
		auto context = FileOpener::TryGetClientContext(opener);
		S3Credentials credentials;
		S3Address address;
		if (!context || !ResolveS3Object(path, opener, credentials, address)) {
			return nullptr;
		}
		// It stands in for the HEAD, which the open makes if it fails. Logged while the connection lives: it may be
		// sent after the query that prepared it ended. Hedged as a range GET is: a tail late to begin holds the open.
		auto request = S3StandInGet::For(*context, path, opener, std::move(credentials), TAIL_TIMEOUT_SECONDS,
		                                 ReadThrottleListeners(*context, stats, &streams, path), stats,
		                                 Counter::VERSION_REQUESTS, true);
		return [address, request, length](ObjectTail &tail) {
			return SendTailGet(address, *request, length, tail);
		};
	} catch (std::exception &) {
		return nullptr;
	}
}

bool S3Tails::SendTailGet(const S3Address &address, S3StandInGet &request, uint64_t length, ObjectTail &tail) {
	auto answer = request.Send(
	    [address, length](const S3Credentials &credentials) {
		    return std::make_pair(address.Url(),
		                          SignedS3RangeGet(credentials, address, "bytes=-" + std::to_string(length)));
	    },
	    length);
	tail.first_byte_seconds = answer.first_byte_seconds;
	tail.seconds = answer.seconds;
	return answer.response && TailFromResponse(*answer.response, std::move(answer.body), tail);
}

bool S3Tails::Fetch(const string &path, optional_ptr<FileOpener> opener, IoStats &stats, StreamController &streams,
                    uint64_t length, ObjectTail &tail) {
	auto send = Prepare(path, opener, stats, streams, length);
	return send && send(tail);
}

} // namespace httpfs2
