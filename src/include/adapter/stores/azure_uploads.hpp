//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/azure_uploads.hpp
//
// The requests of an az:// block blob's upload, authorized by httpfs2 (SharedKey or the SAS token of the azure
// secret's connection string) and sent through httpfs's HTTP client: a Put Block per part, one Put Block List that
// commits them at close, one Put Blob for an object of one part. Azure has no call that drops staged blocks: an
// abandoned upload commits nothing, so the blob keeps what it had, and its staged blocks expire (after 7 days, or
// when another block list is committed).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/io_stats.hpp"
#include "core/upload/object_upload.hpp"
#include "duckdb/common/file_opener.hpp"

#include <memory>
#include <string>

namespace httpfs2 {

class AzureUploads {
public:
	//! The target of an upload of the blob at `path`, or null where httpfs2 leaves the write to the azure extension:
	//! a path form AzureBlobPath refuses, credentials it does not sign with (see AzureConnectionFor), httpfs not
	//! loaded.
	static std::shared_ptr<UploadTarget> TargetFor(const std::string &path,
	                                               duckdb::optional_ptr<duckdb::FileOpener> opener, IoStats &stats);
};

} // namespace httpfs2
