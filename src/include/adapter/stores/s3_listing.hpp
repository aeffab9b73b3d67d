//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/s3_listing.hpp
//
// The objects of an s3:// folder, with their versions: one ListObjectsV2 request httpfs2 signs itself (the folder as
// prefix, '/' as delimiter). After one of its files (start-after its key): a query that opens a folder's files by name
// one after another (read_parquet of a list of paths) opens them in the list's order, which for a folder's files is
// most often the listing's, so the answer tells the next files and their versions. From the folder's start: the
// versions of all files of a small folder in one request, which prove a warm query's files held in the block cache
// (ReadOpener) where each would otherwise be proven by a request of its own.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/object_version.hpp"
#include "core/common/io_stats.hpp"
#include "core/common/stream_controller.hpp"
#include "duckdb/common/file_opener.hpp"

#include <string>
#include <vector>

namespace httpfs2 {

class S3Listing {
public:
	//! Keys asked for at most (S3's own most per answer).
	static constexpr uint64_t MAX_KEYS = 1000;
	//! How long the listing may take, a throttled answer's retries aside: it stands in for a tail GET, and a store that
	//! stalls it must not make the open wait httpfs's http_timeout.
	static constexpr uint64_t LIST_TIMEOUT_SECONDS = 5;
	//! An answer longer than this is not read (S3 keys are at most 1 KiB: MAX_KEYS entries stay far under it).
	static constexpr uint64_t MAX_ANSWER_BYTES = 8 * 1024 * 1024;

	//! The objects right in the folder of the s3:// file at `path` whose keys sort after its key, in key order, at
	//! most MAX_KEYS, with the credentials and endpoint httpfs would use from the S3 secret that matches it;
	//! `truncated` when more follow them. False (never throws) when httpfs2 cannot tell: no S3 secret, a form or
	//! setting it does not address itself, any answer but a listing, a network error. Sent as S3StandInGet sends (a
	//! throttled answer told to `streams`, the reads', and sent again after a wait; a refusal of its credentials
	//! signed again once with the secret's fresh ones).
	static bool After(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener, IoStats &stats,
	                  StreamController &streams, std::vector<ListedFile> &files, bool &truncated);
	//! As After, but the first `max_keys` objects of the folder of `path`, from its start.
	static bool Folder(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener, IoStats &stats,
	                   StreamController &streams, uint64_t max_keys, std::vector<ListedFile> &files, bool &truncated);

private:
	//! One listing of the folder of `path`: after its key when `after_path`, else from the folder's start.
	static bool List(const std::string &path, bool after_path, uint64_t max_keys,
	                 duckdb::optional_ptr<duckdb::FileOpener> opener, IoStats &stats, StreamController &streams,
	                 std::vector<ListedFile> &files, bool &truncated);
};

} // namespace httpfs2
