//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/s3_tails.hpp
//
// The first open of an s3:// Parquet file costs httpfs two round trips before DuckDB reads any data: a HEAD for
// the size and version, then a GET of the footer. httpfs2 asks for the object's last bytes in one GET it signs
// itself (a suffix range needs no size); the answer carries the size, ETag and Last-Modified a HEAD would, so the
// file opens at that version without a HEAD and its footer read is served from those bytes.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/stores/object_version.hpp"
#include "core/common/io_stats.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"

#include <functional>
#include <string>

namespace httpfs2 {

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

class S3Tails {
public:
	//! Bytes asked for: DuckDB 1.5.5's largest first footer read (ParquetFooter::DuckDBTailReadSize).
	static constexpr uint64_t TAIL_BYTES = 256 * 1024;
	//! How long the tail may take, without retries: it replaces a HEAD, and a store that stalls it must not make the
	//! open wait httpfs's http_timeout before the HEAD is sent.
	static constexpr uint64_t TAIL_TIMEOUT_SECONDS = 2;

	//! The tail of the s3:// object at `path`, with the credentials and endpoint httpfs would use from the S3 secret
	//! that matches it. False (never throws) when httpfs2 cannot tell: no S3 secret, a form or setting it does not
	//! address itself, any answer but a byte range with a Last-Modified and an ETag of S3's MD5 form or none, a network
	//! error. The caller then opens the file as it would without httpfs2, and httpfs reports what is wrong.
	static bool Fetch(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener, IoStats &stats,
	                  ObjectTail &tail);

	//! A tail GET signed and ready to send: Fetch's request, to be sent later on any thread while the database lives
	//! (a tail fetched ahead of the file's open). Returns Fetch's answer. `stats` must outlive it.
	using Send = std::function<bool(ObjectTail &tail)>;
	//! Null where Fetch would return false before sending anything.
	static Send Prepare(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener, IoStats &stats);

private:
	static bool SendTailGet(const std::string &url, const duckdb::HTTPHeaders &headers, duckdb::HTTPParams &params,
	                        IoStats &stats, ObjectTail &tail);
};

} // namespace httpfs2
