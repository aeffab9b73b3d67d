#include "adapter/wrapped_file_system.hpp"

#include "adapter/settings.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/multi_file/multi_file_list.hpp"

#include <chrono>

namespace httpfs2 {

using duckdb::FileHandle;
using duckdb::FileOpener;
using duckdb::idx_t;
using duckdb::optional_ptr;
using duckdb::unique_ptr;
using std::string;

WrappedFileSystem::WrappedFileSystem(unique_ptr<duckdb::FileSystem> inner_p, std::shared_ptr<ExtensionState> state_p)
    : inner(std::move(inner_p)), state(std::move(state_p)), stats(state->StatsFor(inner->GetName())),
      reader(*state, *stats) {
}

WrappedFileHandle &WrappedFileSystem::Unwrap(FileHandle &handle) {
	return handle.Cast<WrappedFileHandle>();
}

// --- opening ---

unique_ptr<FileHandle> WrappedFileSystem::OpenFileExtended(const duckdb::OpenFileInfo &file,
                                                           duckdb::FileOpenFlags flags,
                                                           optional_ptr<FileOpener> opener) {
	auto settings = ReadSettings(opener, *state).Effective();
	auto start = std::chrono::steady_clock::now();
	auto inner_handle = inner->OpenFile(file, flags, opener);
	if (!inner_handle) {
		return nullptr;
	}
	// Without listing metadata the open made a metadata request (HEAD): a clean first-byte latency sample.
	bool had_metadata = file.extended_info && file.extended_info->options.count("file_size") > 0;
	if (!had_metadata && flags.OpenForReading()) {
		state->cost_model.ObserveRoundTrip(
		    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
	}
	stats->RecordOpen();
	auto handle = duckdb::make_uniq<WrappedFileHandle>(*this, std::move(inner_handle), settings);
	if (settings.enabled && flags.OpenForReading() && !flags.OpenForWriting()) {
		PrepareSubReads(*handle, opener);
		auto context = FileOpener::TryGetClientContext(opener);
		if (context) {
			handle->client_context = context->shared_from_this();
		}
	}
	return std::move(handle);
}

bool WrappedFileSystem::SupportsOpenFileExtended() const {
	return true;
}

void WrappedFileSystem::PrepareSubReads(WrappedFileHandle &handle, optional_ptr<FileOpener> opener) {
	auto &primary = *handle.inner;
	auto size = primary.file_system.GetFileSize(primary);
	if (size < 0 || static_cast<uint64_t>(size) < handle.settings.min_bytes) {
		return;
	}
	handle.file_size = static_cast<idx_t>(size);
	if (primary.flags.RequireParallelAccess() && !handle.settings.dedicated_handles) {
		handle.sub_read_handles = duckdb::make_uniq<SubReadHandles>(duckdb::vector<unique_ptr<FileHandle>>(), primary);
		return;
	}
	// Handing over size, modification time and ETag lets httpfs open these handles without a request: they cost
	// nothing until a read is split, and httpfs still checks every response against the ETag.
	duckdb::OpenFileInfo info(primary.path);
	info.extended_info = duckdb::make_shared_ptr<duckdb::ExtendedOpenFileInfo>();
	auto &options = info.extended_info->options;
	options["file_size"] = duckdb::Value::UBIGINT(handle.file_size);
	options["last_modified"] = duckdb::Value::TIMESTAMP(primary.file_system.GetLastModifiedTime(primary));
	options["etag"] = duckdb::Value(primary.file_system.GetVersionTag(primary));

	idx_t count = handle.settings.dedicated_handles ? handle.settings.max_fanout : 1;
	duckdb::FileOpenFlags sub_flags(duckdb::FileFlags::FILE_FLAGS_READ | duckdb::FileFlags::FILE_FLAGS_PARALLEL_ACCESS);
	duckdb::vector<unique_ptr<FileHandle>> owned;
	for (idx_t i = 0; i < count; i++) {
		owned.push_back(inner->OpenFile(info, sub_flags, opener));
	}
	handle.sub_read_handles = duckdb::make_uniq<SubReadHandles>(std::move(owned), nullptr);
}

// --- reading and writing ---

void WrappedFileSystem::ReadThrough(WrappedFileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	stats->RecordPassThrough(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	try {
		handle.inner->file_system.Read(*handle.inner, buffer, nr_bytes, location);
	} catch (...) {
		stats->RecordError();
		throw;
	}
}

void WrappedFileSystem::Read(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	auto &wrapped = Unwrap(handle);
	if (nr_bytes > 0 && wrapped.ShouldSplit(static_cast<idx_t>(nr_bytes), location) &&
	    reader.TryRead(wrapped, buffer, static_cast<idx_t>(nr_bytes), location)) {
		return;
	}
	ReadThrough(wrapped, buffer, nr_bytes, location);
}

int64_t WrappedFileSystem::Read(FileHandle &handle, void *buffer, int64_t nr_bytes) {
	auto &wrapped = Unwrap(handle);
	auto &primary = *wrapped.inner;
	if (wrapped.CanSplit() && nr_bytes > 0) {
		// A sequential read is a positional read at the current position, clamped to the end of the file.
		idx_t position = primary.file_system.SeekPosition(primary);
		idx_t available = position < wrapped.file_size ? wrapped.file_size - position : 0;
		idx_t to_read = std::min<idx_t>(static_cast<idx_t>(nr_bytes), available);
		if (wrapped.ShouldSplit(to_read, position) && reader.TryRead(wrapped, buffer, to_read, position)) {
			primary.file_system.Seek(primary, position + to_read);
			return static_cast<int64_t>(to_read);
		}
	}
	stats->RecordPassThrough(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	try {
		return primary.file_system.Read(primary, buffer, nr_bytes);
	} catch (...) {
		stats->RecordError();
		throw;
	}
}

void WrappedFileSystem::Write(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	auto &primary = *Unwrap(handle).inner;
	stats->RecordWrite(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	primary.file_system.Write(primary, buffer, nr_bytes, location);
}

int64_t WrappedFileSystem::Write(FileHandle &handle, void *buffer, int64_t nr_bytes) {
	auto &primary = *Unwrap(handle).inner;
	stats->RecordWrite(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	return primary.file_system.Write(primary, buffer, nr_bytes);
}

// --- everything else passes through to the wrapped filesystem, with its own handle ---

bool WrappedFileSystem::Trim(FileHandle &handle, idx_t offset_bytes, idx_t length_bytes) {
	auto &primary = *Unwrap(handle).inner;
	return primary.file_system.Trim(primary, offset_bytes, length_bytes);
}

int64_t WrappedFileSystem::GetFileSize(FileHandle &handle) {
	auto &primary = *Unwrap(handle).inner;
	return primary.file_system.GetFileSize(primary);
}

duckdb::timestamp_t WrappedFileSystem::GetLastModifiedTime(FileHandle &handle) {
	auto &primary = *Unwrap(handle).inner;
	return primary.file_system.GetLastModifiedTime(primary);
}

string WrappedFileSystem::GetVersionTag(FileHandle &handle) {
	auto &primary = *Unwrap(handle).inner;
	return primary.file_system.GetVersionTag(primary);
}

duckdb::FileType WrappedFileSystem::GetFileType(FileHandle &handle) {
	auto &primary = *Unwrap(handle).inner;
	return primary.file_system.GetFileType(primary);
}

duckdb::FileMetadata WrappedFileSystem::Stats(FileHandle &handle) {
	auto &primary = *Unwrap(handle).inner;
	return primary.file_system.Stats(primary);
}

void WrappedFileSystem::Truncate(FileHandle &handle, int64_t new_size) {
	auto &primary = *Unwrap(handle).inner;
	primary.file_system.Truncate(primary, new_size);
}

void WrappedFileSystem::FileSync(FileHandle &handle) {
	auto &primary = *Unwrap(handle).inner;
	primary.file_system.FileSync(primary);
}

void WrappedFileSystem::Seek(FileHandle &handle, idx_t location) {
	auto &primary = *Unwrap(handle).inner;
	primary.file_system.Seek(primary, location);
}

void WrappedFileSystem::Reset(FileHandle &handle) {
	auto &primary = *Unwrap(handle).inner;
	primary.file_system.Reset(primary);
}

idx_t WrappedFileSystem::SeekPosition(FileHandle &handle) {
	auto &primary = *Unwrap(handle).inner;
	return primary.file_system.SeekPosition(primary);
}

bool WrappedFileSystem::OnDiskFile(FileHandle &handle) {
	auto &primary = *Unwrap(handle).inner;
	return primary.file_system.OnDiskFile(primary);
}

bool WrappedFileSystem::DirectoryExists(const string &directory, optional_ptr<FileOpener> opener) {
	return inner->DirectoryExists(directory, opener);
}

void WrappedFileSystem::CreateDirectory(const string &directory, optional_ptr<FileOpener> opener) {
	inner->CreateDirectory(directory, opener);
}

void WrappedFileSystem::CreateDirectoriesRecursive(const string &path, optional_ptr<FileOpener> opener) {
	inner->CreateDirectoriesRecursive(path, opener);
}

void WrappedFileSystem::RemoveDirectory(const string &directory, optional_ptr<FileOpener> opener) {
	inner->RemoveDirectory(directory, opener);
}

bool WrappedFileSystem::ListFiles(const string &directory, const std::function<void(const string &, bool)> &callback,
                                  FileOpener *opener) {
	return inner->ListFiles(directory, callback, opener);
}

bool WrappedFileSystem::ListFilesExtended(const string &directory,
                                          const std::function<void(duckdb::OpenFileInfo &info)> &callback,
                                          optional_ptr<FileOpener> opener) {
	return inner->ListFiles(directory, callback, opener);
}

bool WrappedFileSystem::SupportsListFilesExtended() const {
	return true;
}

void WrappedFileSystem::MoveFile(const string &source, const string &target, optional_ptr<FileOpener> opener) {
	inner->MoveFile(source, target, opener);
}

bool WrappedFileSystem::FileExists(const string &filename, optional_ptr<FileOpener> opener) {
	return inner->FileExists(filename, opener);
}

bool WrappedFileSystem::IsPipe(const string &filename, optional_ptr<FileOpener> opener) {
	return inner->IsPipe(filename, opener);
}

void WrappedFileSystem::RemoveFile(const string &filename, optional_ptr<FileOpener> opener) {
	inner->RemoveFile(filename, opener);
}

bool WrappedFileSystem::TryRemoveFile(const string &filename, optional_ptr<FileOpener> opener) {
	return inner->TryRemoveFile(filename, opener);
}

void WrappedFileSystem::RemoveFiles(const duckdb::vector<string> &filenames, optional_ptr<FileOpener> opener) {
	inner->RemoveFiles(filenames, opener);
}

duckdb::vector<duckdb::OpenFileInfo> WrappedFileSystem::Glob(const string &path, FileOpener *opener) {
	return inner->Glob(path, opener);
}

unique_ptr<duckdb::MultiFileList> WrappedFileSystem::GlobFilesExtended(const string &path,
                                                                       const duckdb::FileGlobInput &input,
                                                                       optional_ptr<FileOpener> opener) {
	return inner->Glob(path, input, opener);
}

bool WrappedFileSystem::SupportsGlobExtended() const {
	return true;
}

string WrappedFileSystem::GetHomeDirectory() {
	return inner->GetHomeDirectory();
}

string WrappedFileSystem::ExpandPath(const string &path) {
	return inner->ExpandPath(path);
}

string WrappedFileSystem::PathSeparator(const string &path) {
	return inner->PathSeparator(path);
}

bool WrappedFileSystem::IsPathAbsolute(const string &path) {
	return inner->IsPathAbsolute(path);
}

bool WrappedFileSystem::CanHandleFile(const string &fpath) {
	return inner->CanHandleFile(fpath);
}

bool WrappedFileSystem::IsManuallySet() {
	return inner->IsManuallySet();
}

bool WrappedFileSystem::CanSeek() {
	return inner->CanSeek();
}

bool WrappedFileSystem::IsLocalFileSystem() const {
	return inner->IsLocalFileSystem();
}

string WrappedFileSystem::GetName() const {
	return inner->GetName();
}

string WrappedFileSystem::CanonicalizePath(const string &path, optional_ptr<FileOpener> opener) {
	return inner->CanonicalizePath(path, opener);
}

} // namespace httpfs2
