//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/azure_versions.hpp
//
// The version (size, Last-Modified, ETag) of az:// blobs, from a request httpfs2 signs itself. The azure extension
// reports no ETag, so DuckDB's external file cache can only trust Last-Modified, which has 1-second resolution:
// it distrusts blobs modified in the last 10 s and re-reads them at every query. With the ETag it validates az://
// as it does s3://. Results are kept for the query, like httpfs's per-query metadata cache.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/object_version.hpp"
#include "core/common/io_stats.hpp"
#include "core/common/stream_controller.hpp"
#include "duckdb/common/file_opener.hpp"

#include <string>

namespace httpfs2 {

class AzureVersions {
public:
	//! The version of the blob at `path` (az://container/blob), asked with one GET of its first byte sent through the
	//! one retry policy (a throttled answer told to `stats` and `streams`, the reads', and sent again after a wait);
	//! never throws.
	static VersionLookup Lookup(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                            IoStats &stats, StreamController *streams, ObjectVersion &version);
	//! Forgets what this query learnt about `path` (it is being written).
	static void Forget(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener);
};

} // namespace httpfs2
