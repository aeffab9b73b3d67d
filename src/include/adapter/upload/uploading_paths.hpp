//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/upload/uploading_paths.hpp
//
// The paths httpfs2's uploader is writing, or completing in the background, for all connections of a database.
// - Being written: when a COPY fails, DuckDB removes the file it was writing; with an upload that file never
//   existed (nothing is visible before its completion), and the object at the key is the one from before the COPY,
//   which must stay: its removal is skipped. The upload itself is aborted when its handle is dropped.
// - Completing (closed in the background, see StatementUploads): an open, an existence check, a listing or a
//   removal of the path waits for its completion first, so that nothing sees the key as it was before.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/upload/object_upload.hpp"
#include "duckdb/common/file_opener.hpp"

#include <list>
#include <memory>
#include <mutex>
#include <string>

namespace httpfs2 {

class UploadingPaths {
	struct Entry {
		std::string path;
		//! Set once the upload is closed in the background.
		std::shared_ptr<UploadCompletion> completion;
	};

public:
	//! Registers `path` for its lifetime.
	class Mark {
	public:
		Mark(std::shared_ptr<UploadingPaths> owner, std::string path);
		~Mark();
		Mark(const Mark &) = delete;
		Mark &operator=(const Mark &) = delete;
		//! The upload was closed in the background: the path is completing until `completion` is done.
		void Completing(std::shared_ptr<UploadCompletion> completion);

	private:
		const std::shared_ptr<UploadingPaths> owner;
		std::list<Entry>::iterator entry;
	};

	//! Whether `path` is being written (opened by the uploader and not closed).
	bool BeingWritten(const std::string &path);
	//! Waits until no upload of `path` is completing (its outcome is its writer's to report); false when `give_up`
	//! said so first.
	bool WaitFor(const std::string &path, const std::function<bool()> &give_up = nullptr);
	//! The same for every path that starts with `prefix` (all of them: an empty prefix).
	bool WaitForPrefix(const std::string &prefix, const std::function<bool()> &give_up = nullptr);
	//! Before `opener`'s query opens, checks, lists (a glob: the paths under its part before the first wildcard) or
	//! removes `path`: waits for its uploads completing; an interrupted query stops waiting (InterruptException).
	void AwaitPath(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener);
	void AwaitGlob(const std::string &pattern, duckdb::optional_ptr<duckdb::FileOpener> opener);
	//! Before `opener`'s query removes `path`: false when it is being written (the removal is skipped: the file is not
	//! there yet), else true once its uploads completing are done (AwaitPath).
	bool AwaitRemovable(const std::string &path, duckdb::optional_ptr<duckdb::FileOpener> opener);

private:
	bool WaitWhere(const std::function<bool(const std::string &)> &matches, const std::function<bool()> &give_up);

	std::mutex lock;
	std::list<Entry> entries;
};

} // namespace httpfs2
