//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/handles/upload_handle.hpp
//
// A remote file written by httpfs2's uploader (see wrapped_file_handle.hpp).
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/handles/wrapped_file_handle.hpp"
#include "adapter/upload/statement_uploads.hpp"
#include "adapter/upload/uploading_paths.hpp"
#include "core/common/io_stats.hpp"
#include "core/upload/object_upload.hpp"

#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace httpfs2 {

class UploadHandle : public WrappedFileHandle {
public:
	//! `statement`: where the close goes on in the background (null: Close waits for the object).
	UploadHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags,
	             std::unique_ptr<ObjectUpload> upload, std::shared_ptr<IoStats> stats,
	             std::unique_ptr<UploadingPaths::Mark> uploading, duckdb::shared_ptr<StatementUploads> statement,
	             const IoSettings &settings);
	//! Called once the object is complete (the block cache drops the path's blocks); may be empty. Set before Close.
	std::function<void()> completed;
	//! An upload not closed successfully is aborted here (ObjectUpload's destructor): the key keeps what it had.
	~UploadHandle() override;

	//! Appends `size` bytes at the end.
	void Append(const char *data, uint64_t size);
	//! Appends `size` bytes written at `location`, which must be the end of what was appended. Where DuckDB hands a
	//! file's writes to several threads at once in order (compat::WRITES_MAY_OVERLAP), a write that comes before the
	//! writes ahead of it is kept (a copy) and appended once they are: it never waits for them, since DuckDB, when a
	//! statement fails, cancels the writes not started yet and waits for those that started.
	void AppendAt(const char *data, uint64_t size, uint64_t location);
	uint64_t BytesWritten() const {
		return written.load();
	}

	//! The object is complete and visible once Close returns, or, closed in the background, once the transaction
	//! that wrote it commits (StatementUploads).
	void Close() override;
	//! Drops the upload (DuckDB's AbortFileWrite): waits for its parts in flight and aborts it, so the key keeps what
	//! it had; later writes fail, naming the file.
	void Abort();

protected:
	//! The uploader only appends.
	bool Seekable() override;

private:
	//! Appends at `location`, the end of what was appended; the caller holds `order`.
	void AppendLocked(const char *data, uint64_t size, uint64_t location);

	std::unique_ptr<ObjectUpload> upload;
	std::shared_ptr<IoStats> stats;
	//! Held until the object is complete or the handle dropped: DuckDB removes a failed COPY's file before it drops
	//! the handle, and that removal is skipped (UploadingPaths).
	std::unique_ptr<UploadingPaths::Mark> uploading;
	duckdb::shared_ptr<StatementUploads> statement;
	bool closed = false;

	//! Admits the writes in order of their location, one at a time.
	std::mutex order;
	std::atomic<uint64_t> written {0};
	//! Writes that came before the writes ahead of them: their bytes by location, until those are appended.
	std::map<uint64_t, std::string> early;
	//! The first failure of an append: the writes after it fail with it.
	std::exception_ptr failure;
};

} // namespace httpfs2
