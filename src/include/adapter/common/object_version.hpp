//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/common/object_version.hpp
//
// The version of a remote object (size, Last-Modified, ETag) and how it is read from the answer to a range request
// httpfs2 signs itself: the tail GET of an s3:// object, the one-byte GET of an az:// blob.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/prefetch/prediction.hpp"
#include "core/read_ahead/version_key.hpp"
#include "core/requests/range_answer.hpp"
#include "core/split/range_planner.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/types/timestamp.hpp"

#include <functional>
#include <string>

namespace duckdb {
class HTTPResponse;
}

namespace httpfs2 {

//! One version of a remote object, as an open of it reports it.
struct ObjectVersion {
	duckdb::idx_t size = 0;
	duckdb::timestamp_t last_modified = duckdb::timestamp_t(0);
	std::string etag;

	//! An ETag names the version, so that another open can tell it is the same one. Without one (a server that sends
	//! none), an object replaced within the same second by one of the same size looks the same: such a version is
	//! its open's alone, and nothing fetched for it (bytes, footer, layout, handle) is offered to other opens.
	bool Recognizable() const {
		return !etag.empty();
	}
	//! The ETag is strong, so it names the bytes; a weak one (W/"...") promises equivalent content only.
	bool NamesBytes() const {
		return IsStrongEtag(etag);
	}
	//! The ETag has the form of S3's: the hex MD5 of the bytes, or of the parts' MD5s with "-<parts>" (so it is strong:
	//! NamesBytes). A gateway that makes its ETags of size and modification time gives another form.
	bool IsContentHash() const;
};

//! The version as the block cache records it (core/cache/version_records): size, Last-Modified and ETag, one a line.
std::string EncodeVersion(const ObjectVersion &version);
//! The version EncodeVersion wrote; false when `text` is not one.
bool DecodeVersion(const std::string &text, ObjectVersion &version);

//! The same version in the core's terms (a prediction's), and back.
PredictedVersion ToKnown(const ObjectVersion &version);
ObjectVersion FromKnown(const PredictedVersion &version);

//! The last bytes of an object and its version, as one GET answered them.
struct ObjectTail {
	ObjectVersion version;
	ByteRange range {0, 0};
	std::string bytes;
	//! Seconds from sending the request to its answer's headers (a first-byte latency), and to its last byte.
	double first_byte_seconds = 0;
	double seconds = 0;
	//! The answer said which version it is of (NamesItsVersion): its bytes may be joined to other answers' bytes.
	//! Without that, the version (size, Last-Modified) is all it gives.
	bool names_version = true;
};

//! What a store's lookup of an object's version found.
enum class VersionLookup {
	//! The object exists; its version is filled in.
	FOUND,
	//! The object does not exist (404).
	MISSING,
	//! httpfs2 cannot tell (no credentials it signs with, a path form it does not address, another status, a network
	//! error): the caller does what it would do without httpfs2.
	UNKNOWN
};

//! A file a listing names: its path in the form of the path listed after, and its version.
struct ListedFile {
	std::string path;
	ObjectVersion version;
};

//! A tail GET prepared and ready to send, later, on any thread while the database lives (a tail fetched ahead of the
//! file's open): false when it gave no tail.
using TailSend = std::function<bool(ObjectTail &tail)>;

//! What read-ahead of `version` of `path` is shared under: a version without ETag by the opens of the query `opener`
//! belongs to (VersionKey::scope), or by none without a query.
VersionKey KeyOf(const std::string &path, const ObjectVersion &version,
                 duckdb::optional_ptr<duckdb::FileOpener> opener);

//! From a 206 answer with Content-Range and Last-Modified: the object's version (its size is the range's total, its
//! ETag empty when the answer has none) and the range the body holds. False when the status is another or a header is
//! missing or malformed; what else makes the answer usable (the range reaching the end, the body's length, a strong
//! ETag) is each caller's to check.
bool VersionOfRangeAnswer(const duckdb::HTTPResponse &response, ObjectVersion &version, ByteRange &range);

//! What the range checks read of `response` (core/requests/range_answer): its status and headers, absent ones empty.
RangeAnswer RangeAnswerOf(const duckdb::HTTPResponse &response);

} // namespace httpfs2
