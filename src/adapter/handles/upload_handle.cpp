#include "adapter/handles/upload_handle.hpp"

#include "adapter/compat/file_system_api.hpp"

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

void UploadHandle::Append(const char *data, uint64_t size) {
	std::lock_guard<std::mutex> guard(order);
	AppendLocked(data, size, written.load());
}

void UploadHandle::AppendAt(const char *data, uint64_t size, uint64_t location) {
	std::lock_guard<std::mutex> guard(order);
	if (compat::WRITES_MAY_OVERLAP && upload && !failure && location > written.load()) {
		early.emplace(location, std::string(data, size));
		return;
	}
	AppendLocked(data, size, location);
	while (!early.empty() && early.begin()->first == written.load()) {
		auto next = std::move(early.begin()->second);
		early.erase(early.begin());
		AppendLocked(next.data(), next.size(), written.load());
	}
}

void UploadHandle::AppendLocked(const char *data, uint64_t size, uint64_t location) {
	if (!upload) {
		throw duckdb::IOException("httpfs2: cannot write '%s': its upload was aborted", path);
	}
	if (failure) {
		std::rethrow_exception(failure);
	}
	if (location != written.load()) {
		throw duckdb::NotImplementedException(
		    "httpfs2: '%s' is written in order by httpfs2's uploader: a write at byte %llu after %llu bytes "
		    "(set httpfs2_write_enabled = false to write it with httpfs)",
		    path, static_cast<unsigned long long>(location), static_cast<unsigned long long>(written.load()));
	}
	try {
		try {
			upload->Write(data, size);
		} catch (duckdb::Exception &) {
			throw; // the store's error, as httpfs gave it
		} catch (std::exception &error) {
			throw duckdb::IOException("httpfs2: writing '%s': %s", path, error.what());
		}
	} catch (...) {
		failure = std::current_exception();
		throw;
	}
	written.store(upload->BytesWritten());
}

void UploadHandle::Close() {
	if (closed) {
		return;
	}
	{
		std::lock_guard<std::mutex> guard(order);
		if (!early.empty()) {
			// Never a truncated object: Abort (DuckDB's, or the destructor's) drops the upload.
			throw duckdb::IOException("httpfs2: cannot complete '%s': the bytes before byte %llu were never written",
			                          path, static_cast<unsigned long long>(early.begin()->first));
		}
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

void UploadHandle::Abort() {
	std::lock_guard<std::mutex> guard(order);
	if (closed) {
		return; // closed already: complete, or completing with its statement
	}
	closed = true;
	early.clear();
	upload.reset(); // waits for the parts in flight, then aborts the upload
	uploading.reset();
}

bool UploadHandle::Seekable() {
	return false;
}

} // namespace httpfs2
