#include "adapter/handles/lazy_handle.hpp"

#include "adapter/compat/file_system_api.hpp"

namespace httpfs2 {

using duckdb::FileHandle;
using duckdb::idx_t;

LazyHandle::LazyHandle(duckdb::unique_ptr<FileHandle> opened) : handle(opened.release()) {
	D_ASSERT(handle);
	compat::LeaveIoCountToWrapper(*handle);
}

LazyHandle::LazyHandle(Opener open_p) : open([open_p]() { return std::shared_ptr<FileHandle>(open_p().release()); }) {
}

LazyHandle::LazyHandle(SharedOpener open_shared) : open(std::move(open_shared)), owned(false) {
}

FileHandle &LazyHandle::Get() {
	std::lock_guard<std::mutex> guard(lock);
	if (!handle) {
		auto opened = open();
		compat::LeaveIoCountToWrapper(*opened);
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

} // namespace httpfs2
