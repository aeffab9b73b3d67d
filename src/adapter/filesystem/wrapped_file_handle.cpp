#include "adapter/filesystem/wrapped_file_handle.hpp"

#include "core/split/range_planner.hpp"

#include <chrono>

namespace httpfs2 {

using duckdb::FileHandle;
using duckdb::idx_t;

LazyHandle::LazyHandle(duckdb::unique_ptr<FileHandle> opened) : handle(opened.release()) {
	D_ASSERT(handle);
}

LazyHandle::LazyHandle(Opener open_p) : open([open_p]() { return std::shared_ptr<FileHandle>(open_p().release()); }) {
}

LazyHandle::LazyHandle(SharedOpener open_shared) : open(std::move(open_shared)), owned(false) {
}

FileHandle &LazyHandle::Get() {
	std::lock_guard<std::mutex> guard(lock);
	if (!handle) {
		auto opened = open();
		if (position != 0) {
			opened->file_system.Seek(*opened, position);
		}
		handle = std::move(opened);
	}
	return *handle;
}

void LazyHandle::Seek(idx_t location) {
	std::lock_guard<std::mutex> guard(lock);
	if (handle) {
		handle->file_system.Seek(*handle, location);
	} else {
		position = location;
	}
}

idx_t LazyHandle::SeekPosition() {
	std::lock_guard<std::mutex> guard(lock);
	return handle ? handle->file_system.SeekPosition(*handle) : position;
}

void LazyHandle::Reset() {
	std::lock_guard<std::mutex> guard(lock);
	if (handle) {
		handle->file_system.Reset(*handle);
	} else {
		position = 0;
	}
}

bool LazyHandle::IsOpen() {
	std::lock_guard<std::mutex> guard(lock);
	return handle != nullptr;
}

void LazyHandle::Close() {
	std::lock_guard<std::mutex> guard(lock);
	if (handle && owned) {
		handle->Close();
	}
}

SubReadHandles::Lease::Lease(SubReadHandles &owner_p) : owner(owner_p), index(0) {
	std::lock_guard<std::mutex> guard(owner.lock);
	for (size_t i = 1; i < owner.busy.size(); i++) {
		if (owner.busy[i] < owner.busy[index]) {
			index = i;
		}
	}
	owner.busy[index]++;
}

SubReadHandles::Lease::~Lease() {
	std::lock_guard<std::mutex> guard(owner.lock);
	owner.busy[index]--;
}

FileHandle &SubReadHandles::Lease::operator*() const {
	return owner.handles[index]->Get();
}

SubReadHandles::SubReadHandles(duckdb::vector<duckdb::unique_ptr<LazyHandle>> owned_p,
                               duckdb::optional_ptr<LazyHandle> borrowed)
    : owned(std::move(owned_p)) {
	for (auto &handle : owned) {
		handles.push_back(handle.get());
	}
	if (borrowed) {
		handles.push_back(borrowed.get());
	}
	D_ASSERT(!handles.empty());
	busy.resize(handles.size(), 0);
}

void SubReadHandles::Close() {
	for (auto &handle : owned) {
		handle->Close();
	}
}

ReadAheadAttachment::ReadAheadAttachment(ReadAheadRegistry &registry_p, std::string key_p,
                                         std::shared_ptr<ObjectReadAhead> object_p, const ObjectVersion &version,
                                         bool footer_outlives_open)
    : registry(registry_p), key(std::move(key_p)), object(std::move(object_p)), recognizable(version.Recognizable()),
      strong_etag(footer_outlives_open), reader(object) {
}

ReadAheadAttachment::~ReadAheadAttachment() {
	registry.Detach(key);
}

WrappedFileHandle::WrappedFileHandle(duckdb::FileSystem &wrapper, duckdb::unique_ptr<FileHandle> inner_p,
                                     const ParallelReadSettings &settings_p)
    : FileHandle(wrapper, inner_p->path, inner_p->flags), inner(std::move(inner_p)), settings(settings_p) {
	logger = Inner().logger;
}

WrappedFileHandle::WrappedFileHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags,
                                     LazyHandle::Opener open_inner, const ObjectVersion &version_p,
                                     const ParallelReadSettings &settings_p)
    : FileHandle(wrapper, path, flags), inner(std::move(open_inner)), version_known(true), version(version_p),
      settings(settings_p) {
}

WrappedFileHandle::WrappedFileHandle(duckdb::FileSystem &wrapper, const std::string &path, duckdb::FileOpenFlags flags,
                                     std::unique_ptr<ObjectUpload> upload_p, std::shared_ptr<ReadStats> stats,
                                     std::unique_ptr<UploadingPaths::Mark> uploading_p,
                                     const ParallelReadSettings &settings_p)
    : FileHandle(wrapper, path, flags), inner(LazyHandle::Opener([path]() -> duckdb::unique_ptr<FileHandle> {
	      throw duckdb::NotImplementedException(
	          "httpfs2: '%s' is open for writing by httpfs2's uploader, which only appends (set "
	          "httpfs2_write_enabled = false to write it with httpfs)",
	          path);
      })),
      settings(settings_p), upload(std::move(upload_p)), upload_stats(std::move(stats)),
      uploading(std::move(uploading_p)) {
}

WrappedFileHandle::~WrappedFileHandle() = default;

void WrappedFileHandle::Close() {
	if (upload && !upload_closed) {
		upload_closed = true;
		auto start = std::chrono::steady_clock::now();
		try {
			upload->Close();
		} catch (UploadCancelled &) {
			throw duckdb::InterruptException();
		}
		upload_stats->Add(Counter::UPLOAD_CLOSE_MICROS,
		                  static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
		                                            std::chrono::steady_clock::now() - start)
		                                            .count()));
		uploading.reset();
		upload_stats->Add(Counter::FILES_UPLOADED);
		upload_stats->Add(Counter::UPLOAD_BYTES_SPILLED, upload->BytesSpilled());
	}
	read_ahead.reset();
	if (sub_read_handles) {
		sub_read_handles->Close();
	}
	inner.Close();
}

idx_t WrappedFileHandle::GetProgress() {
	// Nothing was read through a handle not opened yet: asking would cost a HEAD on Azure.
	return inner.IsOpen() ? Inner().GetProgress() : 0;
}

duckdb::FileCompressionType WrappedFileHandle::GetFileCompressionType() {
	return inner.IsOpen() ? Inner().GetFileCompressionType() : duckdb::FileCompressionType::UNCOMPRESSED;
}

bool WrappedFileHandle::Interrupted() const {
	auto context = client_context.lock();
	return context && context->interrupted.load();
}

bool WrappedFileHandle::ShouldSplit(idx_t nr_bytes, idx_t location) const {
	// Reads past the end are left to the wrapped filesystem, so they fail exactly as they would without httpfs2.
	return sub_read_handles && !RangesIgnored() && location <= file_size && nr_bytes <= file_size - location &&
	       RangePlanner(settings.chunk_size_bytes, settings.min_bytes).ShouldSplit(nr_bytes);
}

} // namespace httpfs2
