//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/s3_uploads.hpp
//
// The requests of an s3:// object's upload, signed by httpfs2 and sent through httpfs's HTTP client (its retry
// policy, its errors): CreateMultipartUpload, UploadPart, CompleteMultipartUpload (whose 200 may carry an error),
// AbortMultipartUpload, and one PutObject for an object of one part; after a CreateMultipartUpload whose answer was
// lost, ListMultipartUploads of the key, to abort what it began. Parts are sent with an unsigned payload
// (x-amz-content-sha256: UNSIGNED-PAYLOAD, which S3 accepts), so no pass over their bytes precedes the send.
// Connections are kept alive per upload and reused by its parts.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/io_stats.hpp"
#include "core/upload/object_upload.hpp"
#include "duckdb/common/file_opener.hpp"

#include <memory>
#include <string>

namespace httpfs2 {

class S3Uploads {
public:
	//! The target of an upload of the s3:// object at `path`, or null where httpfs2 leaves the write to httpfs: no S3
	//! secret it can use (see S3Credentials::Read), a KMS key, an address form it does not build itself.
	static std::shared_ptr<UploadTarget> TargetFor(const std::string &path,
	                                               duckdb::optional_ptr<duckdb::FileOpener> opener, IoStats &stats);
};

} // namespace httpfs2
