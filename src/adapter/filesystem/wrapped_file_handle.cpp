#include "adapter/filesystem/wrapped_file_handle.hpp"

#include "adapter/filesystem/read_ahead_wiring.hpp"
#include "core/split/range_planner.hpp"

#include <chrono>

namespace httpfs2 {

using duckdb::FileHandle;
using duckdb::idx_t;

WrappedFileHandle::WrappedFileHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags,
                                     Kind kind_p, const IoSettings &settings_p)
    : FileHandle(wrapper, path, flags), kind(kind_p), settings(settings_p) {
}

ReadHandle::ReadHandle(duckdb::FileSystem &wrapper, duckdb::unique_ptr<FileHandle> inner_p, const IoSettings &settings)
    : WrappedFileHandle(wrapper, inner_p->path, inner_p->flags, Kind::READ, settings), inner(std::move(inner_p)),
      version_known(false) {
	logger = Inner().logger;
}

ReadHandle::ReadHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags,
                       LazyHandle::Opener open_inner, const ObjectVersion &version_p, const IoSettings &settings)
    : WrappedFileHandle(wrapper, path, flags, Kind::READ, settings), inner(std::move(open_inner)), version_known(true),
      version(version_p) {
}

ReadHandle::~ReadHandle() = default;

void ReadHandle::Close() {
	read_ahead.reset();
	if (sub_read_handles) {
		sub_read_handles->Close();
	}
	inner.Close();
}

idx_t ReadHandle::GetProgress() {
	// Nothing was read through a handle not opened yet: asking would cost a HEAD on Azure.
	return inner.IsOpen() ? Inner().GetProgress() : 0;
}

duckdb::FileCompressionType ReadHandle::GetFileCompressionType() {
	return inner.IsOpen() ? Inner().GetFileCompressionType() : duckdb::FileCompressionType::UNCOMPRESSED;
}

bool ReadHandle::Interrupted() const {
	auto context = client_context.lock();
	return context && context->interrupted.load();
}

bool ReadHandle::ShouldSplit(idx_t nr_bytes, idx_t location) const {
	// Reads past the end are left to the wrapped filesystem, so they fail exactly as they would without httpfs2.
	return sub_read_handles && !ReadsDeclined() && location <= file_size && nr_bytes <= file_size - location &&
	       RangePlanner(settings.chunk_size_bytes, settings.min_bytes).ShouldSplit(nr_bytes);
}

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
		statement->Add(path, std::move(completion), std::move(uploading), stats);
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
	stats->Add(Counter::UPLOAD_BYTES_SPILLED, upload->BytesSpilled());
}

} // namespace httpfs2
