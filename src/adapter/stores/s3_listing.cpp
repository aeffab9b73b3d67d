#include "adapter/stores/s3_listing.hpp"

#include "adapter/stores/s3_signing.hpp"
#include "adapter/stores/s3_stand_in_get.hpp"
#include "core/requests/s3_request.hpp"
#include "duckdb/common/http_util.hpp"
#include "duckdb/main/client_context.hpp"

#include <algorithm>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;

constexpr uint64_t S3Listing::MAX_KEYS;
constexpr uint64_t S3Listing::LIST_TIMEOUT_SECONDS;
constexpr uint64_t S3Listing::MAX_ANSWER_BYTES;

bool S3Listing::After(const string &path, optional_ptr<FileOpener> opener, IoStats &stats, StreamController &streams,
                      std::vector<ListedFile> &files, bool &truncated) {
	return List(path, true, MAX_KEYS, opener, stats, streams, files, truncated);
}

bool S3Listing::Folder(const string &path, optional_ptr<FileOpener> opener, IoStats &stats, StreamController &streams,
                       uint64_t max_keys, std::vector<ListedFile> &files, bool &truncated) {
	return List(path, false, std::min(max_keys, MAX_KEYS), opener, stats, streams, files, truncated);
}

bool S3Listing::List(const string &path, bool after_path, uint64_t max_keys, optional_ptr<FileOpener> opener,
                     IoStats &stats, StreamController &streams, std::vector<ListedFile> &files, bool &truncated) {
	try {
		auto context = FileOpener::TryGetClientContext(opener);
		S3Credentials credentials;
		S3Address address;
		if (!context || !ResolveS3Object(path, opener, credentials, address)) {
			return false;
		}
		// The listed keys take the path's own form: what precedes its key (s3://bucket/), then theirs.
		auto folder_end = address.key.rfind('/');
		if (path.size() < address.key.size() ||
		    path.compare(path.size() - address.key.size(), address.key.size(), address.key) != 0) {
			return false;
		}
		auto bucket_part = path.substr(0, path.size() - address.key.size());
		auto folder = folder_end == string::npos ? string() : address.key.substr(0, folder_end + 1);

		SigV4Request request;
		request.method = "GET";
		request.host = address.host;
		request.path = address.bucket_path;
		request.query = {{"list-type", "2"}, {"prefix", folder}, {"delimiter", "/"}};
		if (after_path) {
			request.query.emplace_back("start-after", address.key);
		}
		request.query.emplace_back("max-keys", std::to_string(max_keys));
		auto url = address.scheme + address.host + request.path + "?" + request.CanonicalQuery();
		auto list = S3StandInGet::For(*context, path, opener, std::move(credentials), LIST_TIMEOUT_SECONDS,
		                              ReadThrottleListeners(*context, stats, &streams, path), stats,
		                              Counter::FOLDER_LISTINGS, false);
		auto answer = list->Send(
		    [request, url](const S3Credentials &signing) {
			    auto signed_now = request;
			    signed_now.region = signing.region;
			    signed_now.amz_date = SigV4Request::AmzDate(std::time(nullptr));
			    return std::make_pair(url, SignedS3Headers(signing, signed_now));
		    },
		    MAX_ANSWER_BYTES);
		auto &response = answer.response;
		auto &body = answer.body;
		std::vector<ListedObject> objects;
		if (!response || response->status != duckdb::HTTPStatusCode::OK_200 ||
		    !ParseObjectListing(body, objects, truncated)) {
			return false;
		}
		files.clear();
		for (auto &object : objects) {
			ListedFile file;
			file.path = bucket_part + object.key;
			file.version.size = object.size;
			file.version.etag = object.etag;
			file.version.last_modified = duckdb::Timestamp::FromEpochSeconds(object.last_modified);
			files.push_back(std::move(file));
		}
		return true;
	} catch (std::exception &) {
		return false;
	}
}

} // namespace httpfs2
