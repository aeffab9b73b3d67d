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

#include <memory>

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

	//! The object is complete and visible once Close returns, or, closed in the background, once the transaction
	//! that wrote it commits (StatementUploads).
	void Close() override;

	const std::unique_ptr<ObjectUpload> upload;

private:
	std::shared_ptr<IoStats> stats;
	//! Held until the object is complete or the handle dropped: DuckDB removes a failed COPY's file before it drops
	//! the handle, and that removal is skipped (UploadingPaths).
	std::unique_ptr<UploadingPaths::Mark> uploading;
	duckdb::shared_ptr<StatementUploads> statement;
	bool closed = false;
};

} // namespace httpfs2
