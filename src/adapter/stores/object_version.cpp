#include "adapter/stores/object_version.hpp"

#include "core/requests/azure_shared_key.hpp"
#include "core/requests/s3_request.hpp"
#include "duckdb/common/http_util.hpp"

#include <ctime>

namespace httpfs2 {

bool VersionOfRangeAnswer(const duckdb::HTTPResponse &response, ObjectVersion &version, ByteRange &range) {
	if (response.status != duckdb::HTTPStatusCode::PartialContent_206) {
		return false;
	}
	for (auto header : {"Content-Range", "Last-Modified", "ETag"}) {
		if (!response.HasHeader(header)) {
			return false;
		}
	}
	uint64_t first, last, total;
	std::time_t modified;
	if (!ParseContentRange(response.GetHeaderValue("Content-Range"), first, last, total) ||
	    !ParseHttpDate(response.GetHeaderValue("Last-Modified"), modified)) {
		return false;
	}
	version.size = total;
	version.last_modified = duckdb::Timestamp::FromEpochSeconds(static_cast<int64_t>(modified));
	version.etag = response.GetHeaderValue("ETag");
	range = ByteRange {first, last - first + 1};
	return true;
}

} // namespace httpfs2
