//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/remote_store.hpp
//
// What httpfs2 does on one kind of remote store beyond passing calls to the store's filesystem, and how. One per
// wrapped filesystem, chosen from the name its extension registers it under (RemoteStore::For):
//
//   S3Store     httpfs's S3FileSystem (s3://, s3a://, s3n://, r2://; gcs:// and gs:// are left to httpfs): a Parquet
//               file's first open is a GET of its tail (S3Tails), range GETs are checked (CheckedRangeReader), a
//               folder is listed after a file (S3Listing), writes go to a multipart upload (S3Uploads).
//   AzureStore  the azure extension's blob filesystem (az://, azure://): versions looked up (AzureVersions, the
//               extension reports no ETag), handles kept per version (every open is a HEAD), writes as block blobs;
//               with the block cache on, reads are checked range GETs through the cache.
//   HttpStore   httpfs's HTTPFileSystem (http(s)://): range GETs checked; no versions of its own, no uploads.
//   RemoteStore itself: the other wrapped filesystems (hf://, Azure's DFS): parallel reads on their own handles only.
//
// Adding a store (GCS's XML API, an S3-compatible store with other rules) is a class here and a line in For.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/object_version.hpp"
#include "core/common/io_stats.hpp"
#include "core/common/stream_controller.hpp"
#include "core/upload/object_upload.hpp"
#include "duckdb/common/file_opener.hpp"

#include <memory>
#include <string>
#include <vector>

namespace httpfs2 {

//! Named only: its header holds S3's and Azure's signing, which the readers of this map need not compile against.
class CheckedRangeReader;

class RemoteStore {
public:
	virtual ~RemoteStore() = default;

	//! Whether httpfs2 wraps the filesystem its extension registers as `filesystem_name`.
	static bool Wraps(const std::string &filesystem_name);
	//! The store behind that filesystem (one that sends nothing of its own for a name it does not know); `stats` are
	//! the wrapper's and `streams` the database's, and both outlive the store.
	static std::unique_ptr<RemoteStore> For(const std::string &filesystem_name, IoStats &stats,
	                                        StreamController &streams);

	// --- how an open learns the file's version ---

	//! An open for reading asks the store for the version first (LookUpVersion), and FileExists and globs without
	//! wildcards are answered from it: the filesystem reports none.
	virtual bool LooksUpVersions() const {
		return false;
	}
	virtual VersionLookup LookUpVersion(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                    ObjectVersion &version) {
		return VersionLookup::UNKNOWN;
	}
	//! Forgets what the query looked up of `path` (it is being written).
	virtual void ForgetVersion(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener) {
	}
	//! A Parquet file's tail: DuckDB 1.5.5's largest first footer read (ParquetFooter::DuckDBTailReadSize).
	static constexpr uint64_t FOOTER_TAIL_BYTES = 256 * 1024;
	//! Another file's, where it opens from its tail (ReadOpener): its version, and all of a small file.
	static constexpr uint64_t OTHER_TAIL_BYTES = 64 * 1024;
	//! A Parquet file's first open in a query is a GET of its tail (FetchTail), whose answer gives the version.
	virtual bool OpensFromTail() const {
		return false;
	}
	//! The object's last `length` bytes (all of a smaller one). False (never throws) when the store cannot give it
	//! now; the open then goes to the filesystem.
	virtual bool FetchTail(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener, uint64_t length,
	                       ObjectTail &tail) {
		return false;
	}
	//! FetchTail's GET prepared now and sent later, on any thread (a tail fetched ahead of the file's open); null when
	//! the store cannot give it now.
	virtual TailSend TailFetcherFor(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener) {
		return nullptr;
	}
	//! Whether ListAfter lists.
	virtual bool ListsFolders() const {
		return false;
	}
	//! The files right in the folder of `path` whose names sort after its name, with their versions, in that order
	//! (one request); `truncated` when more follow. False (never throws) when the store cannot tell.
	virtual bool ListAfter(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener,
	                       std::vector<ListedFile> &files, bool &truncated) {
		return false;
	}
	//! The first `max_keys` files right in the folder of `path`, from the folder's start, as ListAfter gives them.
	virtual bool ListFolder(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener, uint64_t max_keys,
	                        std::vector<ListedFile> &files, bool &truncated) {
		return false;
	}
	//! Handles opened at a known version are kept across opens of it: an open costs a request on this store.
	virtual bool KeepsVersionHandles() const {
		return false;
	}
	//! Whether footer bytes read at `version` may be served to later opens of the same version: only where the ETag
	//! changes with the bytes.
	virtual bool FooterOutlivesOpen(const ObjectVersion &version) const {
		return false;
	}

	// --- reading ---

	//! Whether sub-reads and read-ahead send their range GETs themselves (RangeReaderFor).
	virtual bool ChecksRanges() const {
		return false;
	}
	//! Checked range GETs of `version` of `path`, or null where httpfs2 does not send them (see
	//! CheckedRangeReader::For). `ranges_confirmed`: the store answered a range of this object exactly already.
	virtual std::shared_ptr<CheckedRangeReader> RangeReaderFor(const std::string &path, const ObjectVersion &version,
	                                                           duckdb::optional_ptr<duckdb::FileOpener> opener,
	                                                           bool ranges_confirmed) {
		return nullptr;
	}
	//! Whether reads can go through the block cache, with the cache on: their range GETs sent by httpfs2
	//! (RangeReaderFor), on a store where they are otherwise not (az://: the azure extension's handles read).
	virtual bool CachesBlocks() const {
		return ChecksRanges();
	}
	//! Whether a version the store gave at open (a tail GET) came with an exact range answer.
	virtual bool VersionsConfirmRanges() const {
		return false;
	}

	// --- writing ---

	//! Whether files opened for writing may go to httpfs2's uploader (UploadTargetFor).
	virtual bool Uploads() const {
		return false;
	}
	//! The target of an upload of `path`, or null where the filesystem writes it itself.
	virtual std::shared_ptr<UploadTarget> UploadTargetFor(const std::string &path,
	                                                      duckdb::optional_ptr<duckdb::FileOpener> opener) {
		return nullptr;
	}

protected:
	explicit RemoteStore(IoStats &stats_p) : stats(stats_p) {
	}
	IoStats &stats;
};

} // namespace httpfs2
