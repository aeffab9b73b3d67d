#include "adapter/handles/upload_handle.hpp"

#include <chrono>

namespace httpfs2 {

UploadHandle::UploadHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags,
                           std::unique_ptr<ObjectUpload> upload_p, std::shared_ptr<IoStats> stats_p,
                           std::unique_ptr<UploadingPaths::Mark> uploading_p,
                           duckdb::shared_ptr<StatementUploads> statement_p, const IoSettings &settings)
    : WrappedFileHandle(wrapper, path, flags, Kind::UPLOAD, settings), upload(std::move(upload_p)),
      stats(std::move(stats_p)), uploading(std::move(uploading_p)), statement(std::move(statement_p)) {
}

UploadHandle::~UploadHandle() = default;

void UploadHandle::Close() {
	if (closed) {
		return;
	}
	closed = true;
	if (statement) {
		// The last parts and the completion go on on the IO pool; the transaction's commit waits for them.
		auto completion = upload->CloseInBackground();
		stats->Add(Counter::UPLOAD_BYTES_SPILLED, upload->BytesSpilled());
		statement->Add(path, std::move(completion), std::move(uploading), stats, completed);
		return;
	}
	auto start = std::chrono::steady_clock::now();
	try {
		upload->Close();
	} catch (UploadCancelled &) {
		throw duckdb::InterruptException();
	}
	stats->Add(
	    Counter::UPLOAD_CLOSE_MICROS,
	    static_cast<uint64_t>(
	        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count()));
	uploading.reset();
	stats->Add(Counter::FILES_UPLOADED);
	if (completed) {
		completed();
	}
	stats->Add(Counter::UPLOAD_BYTES_SPILLED, upload->BytesSpilled());
}

} // namespace httpfs2
