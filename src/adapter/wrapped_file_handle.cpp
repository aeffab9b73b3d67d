#include "adapter/wrapped_file_handle.hpp"

#include "core/range_planner.hpp"

namespace httpfs2 {

using duckdb::FileHandle;
using duckdb::idx_t;

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
	return *owner.handles[index];
}

SubReadHandles::SubReadHandles(duckdb::vector<duckdb::unique_ptr<FileHandle>> owned_p,
                               duckdb::optional_ptr<FileHandle> borrowed)
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
                                         std::shared_ptr<ObjectReadAhead> object_p)
    : registry(registry_p), key(std::move(key_p)), object(std::move(object_p)), reader(object) {
}

ReadAheadAttachment::~ReadAheadAttachment() {
	registry.Detach(key);
}

WrappedFileHandle::WrappedFileHandle(duckdb::FileSystem &wrapper, duckdb::unique_ptr<FileHandle> inner_p,
                                     const ParallelReadSettings &settings_p)
    : FileHandle(wrapper, inner_p->path, inner_p->flags), inner(std::move(inner_p)), settings(settings_p) {
	logger = inner->logger;
}

WrappedFileHandle::~WrappedFileHandle() = default;

void WrappedFileHandle::Close() {
	read_ahead.reset();
	if (sub_read_handles) {
		sub_read_handles->Close();
	}
	inner->Close();
}

idx_t WrappedFileHandle::GetProgress() {
	return inner->GetProgress();
}

duckdb::FileCompressionType WrappedFileHandle::GetFileCompressionType() {
	return inner->GetFileCompressionType();
}

bool WrappedFileHandle::Interrupted() const {
	auto context = client_context.lock();
	return context && context->interrupted.load();
}

bool WrappedFileHandle::ShouldSplit(idx_t nr_bytes, idx_t location) const {
	// Reads past the end are left to the wrapped filesystem, so they fail exactly as they would without httpfs2.
	return sub_read_handles && location <= file_size && nr_bytes <= file_size - location &&
	       RangePlanner(settings.chunk_size_bytes, settings.min_bytes).ShouldSplit(nr_bytes);
}

} // namespace httpfs2
