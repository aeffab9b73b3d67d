#include "adapter/wrapped_file_system.hpp"

#include "adapter/settings.hpp"
#include "duckdb/common/string_util.hpp"
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
	stats->Add(Counter::FILES_OPENED);
	auto handle = duckdb::make_uniq<WrappedFileHandle>(*this, std::move(inner_handle), settings);
	if (settings.enabled && flags.OpenForReading() && !flags.OpenForWriting()) {
		auto context = FileOpener::TryGetClientContext(opener);
		if (context) {
			handle->client_context = context->shared_from_this();
		}
		PrepareSubReads(*handle, opener);
		if (settings.ReadAheadActive()) {
			AttachReadAhead(*handle, opener);
			PrefetchFooters(listings.After(file.path), settings, opener);
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
	// These handles cost nothing until a read is split.
	auto info = SameVersion(primary, handle.file_size);
	idx_t count = handle.settings.dedicated_handles ? handle.settings.max_fanout : 1;
	duckdb::FileOpenFlags sub_flags(duckdb::FileFlags::FILE_FLAGS_READ | duckdb::FileFlags::FILE_FLAGS_PARALLEL_ACCESS);
	duckdb::vector<unique_ptr<FileHandle>> owned;
	for (idx_t i = 0; i < count; i++) {
		owned.push_back(inner->OpenFile(info, sub_flags, opener));
	}
	handle.sub_read_handles = duckdb::make_uniq<SubReadHandles>(std::move(owned), nullptr);
}

duckdb::OpenFileInfo WrappedFileSystem::SameVersion(FileHandle &primary, idx_t file_size) {
	duckdb::OpenFileInfo info(primary.path);
	info.extended_info = duckdb::make_shared_ptr<duckdb::ExtendedOpenFileInfo>();
	auto &options = info.extended_info->options;
	options["file_size"] = duckdb::Value::UBIGINT(file_size);
	options["last_modified"] = duckdb::Value::TIMESTAMP(primary.file_system.GetLastModifiedTime(primary));
	options["etag"] = duckdb::Value(primary.file_system.GetVersionTag(primary));
	return info;
}

std::string WrappedFileSystem::VersionKey(const string &path, const duckdb::Value &etag,
                                          const duckdb::Value &last_modified, idx_t file_size) {
	return path + "\n" + etag.ToString() + "\n" + last_modified.ToString() + "\n" + std::to_string(file_size);
}

std::shared_ptr<ObjectReadAhead> WrappedFileSystem::CreateReadAhead(const duckdb::OpenFileInfo &info, idx_t file_size,
                                                                    optional_ptr<FileOpener> opener) {
	duckdb::FileOpenFlags flags(duckdb::FileFlags::FILE_FLAGS_READ | duckdb::FileFlags::FILE_FLAGS_PARALLEL_ACCESS);
	std::shared_ptr<FileHandle> fetch_handle(inner->OpenFile(info, flags, opener).release());
	auto fetch = [fetch_handle](const ByteRange &range, char *destination) {
		fetch_handle->file_system.Read(*fetch_handle, destination, static_cast<int64_t>(range.length), range.offset);
	};
	auto object = std::make_shared<ObjectReadAhead>(state->io_pool, state->read_ahead_budget, *stats, state->cost_model,
	                                                file_size, std::move(fetch));
	// Files of one folder share a schema and, within a scan, the columns read.
	object->SharePatterns(patterns, info.path.substr(0, info.path.find_last_of('/') + 1));
	return object;
}

ReadAheadTuning WrappedFileSystem::TuningFor(const ParallelReadSettings &settings) const {
	return ReadAheadTuner::Tune(settings, state->cost_model.Snapshot(), state->io_pool.TargetSize(),
	                            state->read_ahead_budget.Limit());
}

void WrappedFileSystem::AttachReadAhead(WrappedFileHandle &handle, optional_ptr<FileOpener> opener) {
	auto &primary = *handle.inner;
	auto size = primary.file_system.GetFileSize(primary);
	if (size <= 0) {
		return;
	}
	handle.file_size = static_cast<idx_t>(size);
	auto info = SameVersion(primary, handle.file_size);
	auto &options = info.extended_info->options;
	auto key = VersionKey(primary.path, options["etag"], options["last_modified"], handle.file_size);
	std::shared_ptr<ObjectReadAhead> object;
	try {
		object = read_aheads.Attach(key, [&]() { return CreateReadAhead(info, handle.file_size, opener); });
	} catch (std::exception &) {
		// The file opened; only read-ahead's own handle did not. It is read without read-ahead.
		return;
	}
	handle.read_ahead = duckdb::make_uniq<ReadAheadAttachment>(read_aheads, key, std::move(object));
}

static bool IsParquetPath(const string &path) {
	auto lower = duckdb::StringUtil::Lower(path);
	return duckdb::StringUtil::EndsWith(lower, ".parquet");
}

void WrappedFileSystem::PrefetchFooters(const std::vector<duckdb::OpenFileInfo> &files,
                                        const ParallelReadSettings &settings, optional_ptr<FileOpener> opener) {
	ReadAheadTuning tuning = TuningFor(settings);
	for (auto &file : files) {
		if (!file.extended_info || !IsParquetPath(file.path)) {
			continue;
		}
		auto &options = file.extended_info->options;
		auto size = options.find("file_size");
		auto etag = options.find("etag");
		auto last_modified = options.find("last_modified");
		if (size == options.end() || etag == options.end() || last_modified == options.end()) {
			continue;
		}
		try {
			auto file_size = size->second.GetValue<uint64_t>();
			auto modified = duckdb::Value::TIMESTAMP(last_modified->second.GetValue<duckdb::timestamp_t>());
			auto tail = ParquetFooter::DuckDBTailReadSize(file_size);
			if (tail == 0) {
				continue;
			}
			// The same key an open of this file with the listing's metadata computes from its handle.
			auto key = VersionKey(file.path, duckdb::Value(etag->second.ToString()), modified, file_size);
			auto object = read_aheads.Pin(key, [&]() { return CreateReadAhead(file, file_size, opener); });
			if (object) {
				object->Prefetch({ByteRange {file_size - tail, tail}}, tuning);
			}
		} catch (std::exception &) {
			// Metadata of a type we do not know, or a handle that would not open: the file is read without it.
			continue;
		}
	}
}

void WrappedFileSystem::RememberListing(std::vector<duckdb::OpenFileInfo> files, optional_ptr<FileOpener> opener) {
	auto settings = ReadSettings(opener, *state).Effective();
	if (!settings.ReadAheadActive() || files.size() < 2) {
		return;
	}
	std::vector<duckdb::OpenFileInfo> first(files.begin(),
	                                        files.begin() + std::min<size_t>(ListingMemory::DEPTH, files.size()));
	listings.Remember(std::move(files));
	PrefetchFooters(first, settings, opener);
}

// --- reading and writing ---

void WrappedFileSystem::ReadForReader(WrappedFileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	if (nr_bytes > 0 && handle.ShouldSplit(static_cast<idx_t>(nr_bytes), location) &&
	    reader.TryRead(handle, buffer, static_cast<idx_t>(nr_bytes), location)) {
		return;
	}
	stats->RecordPassThrough();
	try {
		handle.inner->file_system.Read(*handle.inner, buffer, nr_bytes, location);
	} catch (...) {
		stats->Add(Counter::ERRORS);
		throw;
	}
}

void WrappedFileSystem::ReadWithReadAhead(WrappedFileHandle &handle, char *buffer, idx_t nr_bytes, idx_t location) {
	auto &object = *handle.read_ahead->object;
	ByteRange read {location, nr_bytes};
	if (!handle.Interrupted()) {
		handle.read_ahead->reader.Observe(read, TuningFor(handle.settings));
	}
	auto served = object.Serve(read, buffer);
	if (served.served_bytes == nr_bytes) {
		stats->Add(Counter::READS_SERVED_WHOLE);
	} else if (served.served_bytes > 0) {
		stats->Add(Counter::READS_SERVED_PARTLY);
	}
	if (served.waited) {
		stats->Add(Counter::READS_WAITED);
	}
	for (auto &gap : served.gaps) {
		ReadForReader(handle, buffer + (gap.offset - location), static_cast<int64_t>(gap.length), gap.offset);
	}
	if (object.Inspect(read, buffer)) {
		read_aheads.RememberLayout(handle.read_ahead->key, object.Layout());
	}
}

void WrappedFileSystem::Read(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	auto &wrapped = Unwrap(handle);
	stats->RecordRead(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	// Reads past the end go to the wrapped filesystem unchanged, so they fail exactly as they would without httpfs2.
	bool inside = location <= wrapped.file_size && static_cast<idx_t>(nr_bytes) <= wrapped.file_size - location;
	if (nr_bytes > 0 && wrapped.read_ahead && inside) {
		ReadWithReadAhead(wrapped, static_cast<char *>(buffer), static_cast<idx_t>(nr_bytes), location);
		return;
	}
	ReadForReader(wrapped, buffer, nr_bytes, location);
}

int64_t WrappedFileSystem::Read(FileHandle &handle, void *buffer, int64_t nr_bytes) {
	auto &wrapped = Unwrap(handle);
	auto &primary = *wrapped.inner;
	if ((wrapped.read_ahead || wrapped.CanSplit()) && nr_bytes > 0) {
		// A sequential read is a positional read at the current position, clamped to the end of the file.
		idx_t position = primary.file_system.SeekPosition(primary);
		idx_t available = position < wrapped.file_size ? wrapped.file_size - position : 0;
		idx_t to_read = std::min<idx_t>(static_cast<idx_t>(nr_bytes), available);
		if (to_read > 0 && (wrapped.read_ahead || wrapped.ShouldSplit(to_read, position))) {
			stats->RecordRead(to_read);
			if (wrapped.read_ahead) {
				ReadWithReadAhead(wrapped, static_cast<char *>(buffer), to_read, position);
			} else {
				ReadForReader(wrapped, buffer, static_cast<int64_t>(to_read), position);
			}
			primary.file_system.Seek(primary, position + to_read);
			return static_cast<int64_t>(to_read);
		}
	}
	stats->RecordRead(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	stats->RecordPassThrough();
	try {
		return primary.file_system.Read(primary, buffer, nr_bytes);
	} catch (...) {
		stats->Add(Counter::ERRORS);
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
	auto files = inner->Glob(path, opener);
	RememberListing(std::vector<duckdb::OpenFileInfo>(files.begin(), files.end()), opener);
	return files;
}

unique_ptr<duckdb::MultiFileList> WrappedFileSystem::GlobFilesExtended(const string &path,
                                                                       const duckdb::FileGlobInput &input,
                                                                       optional_ptr<FileOpener> opener) {
	auto list = inner->Glob(path, input, opener);
	if (list && ReadSettings(opener, *state).Effective().ReadAheadActive()) {
		// Expands a lazy listing up to MAX_FILES now: DuckDB opens the files in this order right after.
		std::vector<duckdb::OpenFileInfo> files;
		duckdb::MultiFileListScanData scan;
		list->InitializeScan(scan);
		duckdb::OpenFileInfo file;
		while (files.size() < ListingMemory::MAX_FILES && list->Scan(scan, file)) {
			files.push_back(file);
		}
		RememberListing(std::move(files), opener);
	}
	return list;
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
