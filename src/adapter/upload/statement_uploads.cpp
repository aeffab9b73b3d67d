#include "adapter/upload/statement_uploads.hpp"

#include "adapter/compat/duckdb_api.hpp"
#include "adapter/common/error_context.hpp"
#include "duckdb/catalog/catalog.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/transaction/meta_transaction.hpp"

#include <chrono>

namespace httpfs2 {

static const char *const STATE_KEY = "httpfs2_statement_uploads";

duckdb::shared_ptr<StatementUploads> StatementUploads::For(duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto context = duckdb::FileOpener::TryGetClientContext(opener);
	if (!context || !context->transaction.HasActiveTransaction()) {
		return nullptr;
	}
	for (auto &database : duckdb::MetaTransaction::Get(*context).OpenedTransactions()) {
		if (!database.get().GetCatalog().IsDuckCatalog()) {
			return nullptr; // DuckLake, Iceberg: their commit names the files before TransactionCommit runs
		}
	}
	return context->registered_state->GetOrCreate<StatementUploads>(STATE_KEY);
}

void StatementUploads::Add(std::string path, std::shared_ptr<UploadCompletion> completion,
                           std::unique_ptr<UploadingPaths::Mark> mark, std::shared_ptr<IoStats> stats,
                           std::function<void()> completed) {
	mark->Completing(completion);
	std::lock_guard<std::mutex> guard(lock);
	pending.push_back(
	    Pending {std::move(path), std::move(completion), std::move(mark), std::move(stats), std::move(completed)});
}

std::vector<StatementUploads::Pending> StatementUploads::Take() {
	std::lock_guard<std::mutex> guard(lock);
	std::vector<Pending> taken;
	taken.swap(pending);
	return taken;
}

void StatementUploads::TransactionCommit(duckdb::MetaTransaction &, duckdb::ClientContext &context) {
	auto uploads = Take();
	auto interrupted = [&context] {
		return compat::Interrupted(context);
	};
	std::exception_ptr first_failure;
	std::string failed_path;
	for (size_t i = 0; i < uploads.size(); i++) {
		auto &upload = uploads[i];
		auto start = std::chrono::steady_clock::now();
		auto failure = upload.completion->Wait(interrupted);
		upload.stats->Add(Counter::UPLOAD_CLOSE_MICROS,
		                  static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
		                                            std::chrono::steady_clock::now() - start)
		                                            .count()));
		if (!failure) {
			upload.stats->Add(Counter::FILES_UPLOADED);
			if (upload.completed) {
				upload.completed();
			}
			continue;
		}
		try {
			std::rethrow_exception(failure);
		} catch (UploadCancelled &) {
			for (size_t j = i + 1; j < uploads.size(); j++) {
				uploads[j].completion->Cancel();
			}
			throw duckdb::InterruptException();
		} catch (...) {
		}
		if (!first_failure) {
			first_failure = failure;
			failed_path = upload.path;
		}
	}
	if (!first_failure) {
		return;
	}
	auto context_text = "httpfs2: the upload of '" + failed_path + "' was not completed: ";
	try {
		std::rethrow_exception(first_failure);
	} catch (duckdb::Exception &error) {
		RethrowWithContext(error, context_text, failed_path); // the store's error, as httpfs gave it
	} catch (std::exception &error) {
		throw duckdb::IOException(context_text + error.what());
	}
}

void StatementUploads::TransactionRollback(duckdb::MetaTransaction &, duckdb::ClientContext &) {
	for (auto &upload : Take()) {
		upload.completion->Cancel();
	}
}

} // namespace httpfs2
