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

#include "adapter/stores/s3_stand_in_get.hpp"

#include "adapter/common/object_version.hpp"
#include "core/common/io_stats.hpp"
#include "core/common/stream_controller.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"

#include <functional>
#include <string>

namespace httpfs2 {

class S3Tails {
public:
	//! How long an attempt of the tail may take: it replaces a HEAD, and a store that stalls it must not make the open
	//! wait httpfs's http_timeout before the HEAD is sent.
	static constexpr uint64_t TAIL_TIMEOUT_SECONDS = 2;

	//! The tail of the s3:// object at `path`, with the credentials and endpoint httpfs would use from the S3 secret
	//! that matches it. False (never throws) when httpfs2 cannot tell: no S3 secret, a form or setting it does not
	//! address itself, any answer but a byte range with a Last-Modified and an ETag of S3's MD5 form or none, a network
	//! error. The caller then opens the file as it would without httpfs2, and httpfs reports what is wrong.
	//! Sent as S3StandInGet sends (a throttled answer told to `streams`, the reads', and sent again after a wait; a
	//! refusal of its credentials signed again once with the secret's fresh ones; hedged when its answer is late).
	//! `length`: the bytes asked for (RemoteStore::FOOTER_TAIL_BYTES for a Parquet footer).
	static bool Fetch(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener, IoStats &stats,
	                  StreamController &streams, uint64_t length, ObjectTail &tail);

	//! Fetch's request signed and ready to send (TailSend); `stats` and `streams` must outlive it. Null where Fetch
	//! would return false before sending anything.
	static TailSend Prepare(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener, IoStats &stats,
	                        StreamController &streams, uint64_t length);

private:
	static bool SendTailGet(const S3Address &address, S3StandInGet &request, uint64_t length, ObjectTail &tail);
};

} // namespace httpfs2
