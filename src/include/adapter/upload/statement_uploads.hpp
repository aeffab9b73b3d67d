//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/upload/statement_uploads.hpp
//
// Closes that do not wait in turn. DuckDB 1.5.5 closes the files a statement wrote one after another (the files of a
// PARTITION_BY at its end), and each close of an upload waits for its last parts and its completion: two round trips
// and a part's transfer per file, in sequence. Instead, a close hands the rest to the IO pool (ObjectUpload::
// CloseInBackground) and the connection's StatementUploads waits for every object the transaction wrote in DuckDB's
// commit of it (TransactionCommit: an exception there is the statement's error, or the COMMIT's): a failed
// completion fails the statement naming the object, with the store's error; the others are complete. A rollback (a
// failed or interrupted statement, ROLLBACK, a connection closed in a transaction) aborts the uploads not completed
// yet: each object written is complete, or absent with no upload left behind.
// Where the transaction writes a catalog of another kind (DuckLake, Iceberg), its commit records the files before
// this hook runs, so those closes wait as before: the catalog never names an object that failed.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/upload/uploading_paths.hpp"
#include "core/common/io_stats.hpp"
#include "core/upload/object_upload.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/main/client_context_state.hpp"

#include <memory>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace httpfs2 {

class StatementUploads : public duckdb::ClientContextState {
public:
	//! The uploads of the transaction `opener` runs in, where its closes may go on in the background; null where a
	//! close must wait (no client context or transaction, or a catalog of another kind in the transaction).
	static duckdb::shared_ptr<StatementUploads> For(duckdb::optional_ptr<duckdb::FileOpener> opener);

	//! An object closed in the background; `mark` keeps its path marked being uploaded until it is done; `completed`
	//! (may be empty) is called once it is complete.
	void Add(std::string path, std::shared_ptr<UploadCompletion> completion, std::unique_ptr<UploadingPaths::Mark> mark,
	         std::shared_ptr<IoStats> stats, std::function<void()> completed);

	//! Waits for every object the transaction wrote; throws the first failure, naming its object.
	void TransactionCommit(duckdb::MetaTransaction &transaction, duckdb::ClientContext &context) override;
	//! Aborts the uploads not completed yet.
	void TransactionRollback(duckdb::MetaTransaction &transaction, duckdb::ClientContext &context) override;

private:
	struct Pending {
		std::string path;
		std::shared_ptr<UploadCompletion> completion;
		std::unique_ptr<UploadingPaths::Mark> mark;
		std::shared_ptr<IoStats> stats;
		std::function<void()> completed;
	};
	std::vector<Pending> Take();

	std::mutex lock;
	std::vector<Pending> pending;
};

} // namespace httpfs2
