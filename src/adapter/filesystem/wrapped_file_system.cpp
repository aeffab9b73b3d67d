#include "adapter/filesystem/wrapped_file_system.hpp"

#include <chrono>

#include "adapter/compat/duckdb_api.hpp"
#include "adapter/stores/checked_range_reader.hpp"
#include "adapter/common/session_settings.hpp"
#include "adapter/handles/internal_opener.hpp"
#include "adapter/stores/store_http.hpp"
#include "core/requests/retry_policy.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/multi_file/multi_file_list.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/client_data.hpp"

namespace httpfs2 {

using duckdb::FileHandle;
using duckdb::FileOpener;
using duckdb::idx_t;
using duckdb::optional_ptr;
using duckdb::unique_ptr;
using std::string;

WrappedFileSystem::WrappedFileSystem(unique_ptr<duckdb::FileSystem> inner_p, std::shared_ptr<ExtensionState> state_p)
    : WrappedFileSystem(std::move(inner_p), std::move(state_p), [this](IoStats &stats) {
	      return RemoteStore::For(GetName(), stats, state->cost_model.streams);
      }) {
}

WrappedFileSystem::WrappedFileSystem(unique_ptr<duckdb::FileSystem> inner_p, std::shared_ptr<ExtensionState> state_p,
                                     const StoreFactory &make_store)
    : ForwardingFileSystem(std::move(inner_p)), state(std::move(state_p)), stats(state->StatsFor(inner->GetName())),
      store(make_store(*stats)), reader(*state, *stats), opens(*inner, *store, *stats),
      read_ahead(*state, *stats, *store, opens), prefetch(*state, *stats, *store, read_ahead),
      read_opener(*this, *inner, *state, *stats, *store, opens, read_ahead, prefetch) {
	state->AddFileSystem(*this);
}

WrappedFileSystem::~WrappedFileSystem() {
	state->RemoveFileSystem(*this);
}

void WrappedFileSystem::ReleaseHandles() {
	uploading->WaitForPrefix(""); // the database goes: what its statements closed is complete or aborted
	read_ahead.CloseAll();
	opens.ReleaseHandles();
}

// --- opening ---

unique_ptr<FileHandle> WrappedFileSystem::OpenFileExtended(const duckdb::OpenFileInfo &file,
                                                           duckdb::FileOpenFlags flags,
                                                           optional_ptr<FileOpener> opener) {
	auto settings = SettingsFor(opener, *state).Effective();
	bool read_only = flags.OpenForReading() && !flags.OpenForWriting();
	uploading->AwaitPath(file.path, opener); // what a statement closed in the background is complete first
	if (!read_only) {
		store->ForgetVersion(file.path, opener); // what this query looked up is not what it is writing
		auto upload = OpenUpload(file.path, flags, opener, settings);
		if (upload) {
			stats->Add(Counter::FILES_OPENED);
			return std::move(upload);
		}
	}
	duckdb::Value force_download;
	if (read_only && FileOpener::TryGetCurrentSetting(opener, "force_download", force_download) &&
	    !force_download.IsNull() && force_download.GetValue<bool>()) {
		settings.enabled = false; // httpfs holds the whole file in memory: nothing to split or read ahead
	}
	return read_opener.Open(file, flags, opener, settings, settings.enabled && read_only);
}

bool WrappedFileSystem::SupportsOpenFileExtended() const {
	return true;
}

unique_ptr<UploadHandle> WrappedFileSystem::OpenUpload(const string &path, duckdb::FileOpenFlags flags,
                                                       optional_ptr<FileOpener> opener, const IoSettings &settings) {
	// The uploader writes a whole new object in order: not an append, nor what must fail when the file exists.
	if (!store->Uploads() || !settings.UploadsActive() || !flags.OpenForWriting() || flags.OpenForReading() ||
	    flags.OpenForAppending() || flags.ExclusiveCreate() || flags.ReturnNullIfExists()) {
		return nullptr;
	}
	auto budget = state->upload_budget->Limit();
	if (settings.write_part_size_bytes > budget) {
		throw duckdb::InvalidInputException(
		    "httpfs2: cannot write '%s': httpfs2_write_part_size_bytes (%llu) is larger than "
		    "httpfs2_write_memory_limit_bytes (%llu), which must hold a part; lower the one or raise the other",
		    path, static_cast<unsigned long long>(settings.write_part_size_bytes),
		    static_cast<unsigned long long>(budget));
	}
	auto target = store->UploadTargetFor(path, opener);
	if (!target) {
		return nullptr;
	}
	UploadOptions options;
	options.part_size = settings.write_part_size_bytes;
	if (settings.hedge_uploads) {
		options.race_threads = &state->upload_request_threads;
		options.hedges = &state->upload_hedges;
		options.stats = stats.get();
		duckdb::Value timeout;
		if (FileOpener::TryGetCurrentSetting(opener, "http_timeout", timeout) && !timeout.IsNull()) {
			options.request_timeout_seconds = timeout.GetValue<double>();
		}
	}
	auto context = FileOpener::TryGetClientContext(opener);
	if (context) {
		// An interrupted query, or a closed connection, stops waiting for parts whose answers never end.
		options.cancelled = QueryCancelled(*context);
	}
	std::unique_ptr<ObjectUpload> upload(
	    new ObjectUpload(std::move(target), state->upload_pool, state->upload_budget, options));
	auto mark = std::unique_ptr<UploadingPaths::Mark>(new UploadingPaths::Mark(uploading, path));
	auto handle = duckdb::make_uniq<UploadHandle>(*this, path, flags, std::move(upload), stats, std::move(mark),
	                                              StatementUploads::For(opener), settings);
	string cache_error;
	auto cache = settings.cache_enabled ? state->CacheFor(settings, cache_error) : nullptr;
	if (cache) {
		// The object's old versions will never be served (keys carry the version): their blocks go, off the
		// writer's path, since finding them scans the cache. Blocks touched since the completion (the new version,
		// read at once) stay; 10 ms allow for file times, which lag the clock by a few ms. The version recorded for a
		// trust window goes at once, before the statement ends: the next open of the path proves its version.
		auto shared = state;
		handle->completed = [shared, cache, path]() {
			cache->Versions().Forget(path);
			auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
			               std::chrono::system_clock::now().time_since_epoch())
			               .count();
			auto before_ns = static_cast<int64_t>(now) - 10 * 1000 * 1000;
			shared->io_pool.Submit([cache, path, before_ns]() { cache->ClearPath(path, before_ns); });
		};
	}
	return handle;
}

UploadHandle *WrappedFileSystem::AsUpload(FileHandle &handle) {
	auto &wrapped = handle.Cast<WrappedFileHandle>();
	return wrapped.kind == WrappedFileHandle::Kind::UPLOAD ? &handle.Cast<UploadHandle>() : nullptr;
}

ReadHandle &WrappedFileSystem::Readable(FileHandle &handle) {
	if (AsUpload(handle)) {
		throw duckdb::NotImplementedException(
		    "httpfs2: '%s' is open for writing by httpfs2's uploader, which only appends (set "
		    "httpfs2_write_enabled = false to write it with httpfs)",
		    handle.path);
	}
	return handle.Cast<ReadHandle>();
}

FileHandle &WrappedFileSystem::InnerOf(FileHandle &handle) {
	return Readable(handle).Inner();
}

// --- reading ---

void WrappedFileSystem::ReadForReader(ReadHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	if (nr_bytes > 0 && handle.ShouldSplit(static_cast<idx_t>(nr_bytes), location) &&
	    reader.TryRead(handle, buffer, static_cast<idx_t>(nr_bytes), location)) {
		return;
	}
	if (nr_bytes > 0 && handle.ReadsThroughRangeReader() && location <= handle.file_size &&
	    static_cast<idx_t>(nr_bytes) <= handle.file_size - location) {
		try {
			handle.ReadChecked(ByteRange {location, static_cast<idx_t>(nr_bytes)}, static_cast<char *>(buffer), *stats,
			                   state->cost_model);
			return;
		} catch (ReadsDeclined &) {
			// Read as the fallback says, below.
		} catch (...) {
			stats->Add(Counter::ERRORS);
			throw;
		}
	}
	stats->RecordPassThrough();
	bool whole = handle.ReadsWholeObject();
	try {
		PassThrough(handle, buffer, nr_bytes, location);
		return;
	} catch (std::exception &error) {
		if (whole || !InternalOpener::IsRangesIgnored(error) || !FallsBackToWholeObject(handle, nr_bytes, location)) {
			stats->Add(Counter::ERRORS);
			throw;
		}
	} catch (...) {
		stats->Add(Counter::ERRORS);
		throw;
	}
	// The server ignores ranges and the wrapped filesystem did not fall back to a full download itself, as the
	// connection's auto_fallback_to_full_download asks (httpfs 2a6481d on DuckDB 2.0 fails instead): httpfs2 does.
	if (!handle.ranges_ignored_by_wrapped.exchange(true)) {
		stats->Add(Counter::RANGE_ANSWERS_REFUSED);
	}
	try {
		PassThrough(handle, buffer, nr_bytes, location);
	} catch (...) {
		stats->Add(Counter::ERRORS);
		throw;
	}
}

void WrappedFileSystem::PassThrough(ReadHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	if (handle.ReadsWholeObject()) {
		auto &whole = handle.whole_object->Get();
		whole.file_system.Read(whole, buffer, nr_bytes, location);
		return;
	}
	if (handle.version_known && !handle.inner.IsOpen() && !handle.ReadsDeclined()) {
		// The version's shared handle, rather than an open (a HEAD on Azure) of this handle's own.
		auto &shared = handle.version_handle->Get();
		shared.file_system.Read(shared, buffer, nr_bytes, location);
		return;
	}
	auto &primary = handle.Inner();
	primary.file_system.Read(primary, buffer, nr_bytes, location);
}

bool WrappedFileSystem::FallsBackToWholeObject(ReadHandle &handle, int64_t nr_bytes, idx_t location) {
	if (!handle.whole_object || location > handle.file_size ||
	    static_cast<idx_t>(nr_bytes) > handle.file_size - location) {
		return false; // no connection to open it with, or a read past the end: its answer is short for that
	}
	auto connection = handle.client_context.lock();
	duckdb::Value fallback;
	return connection &&
	       FileOpener::TryGetCurrentSetting(duckdb::ClientData::Get(*connection).file_opener.get(),
	                                        "auto_fallback_to_full_download", fallback) &&
	       !fallback.IsNull() && fallback.GetValue<bool>();
}

void WrappedFileSystem::ReadWithReadAhead(ReadHandle &handle, char *buffer, idx_t nr_bytes, idx_t location) {
	ByteRange read {location, nr_bytes};
	if (location == 0 && nr_bytes == handle.file_size && handle.settings.host_reads.streams <= 1 &&
	    !handle.Interrupted()) {
		// A scan that reads its files whole (read_blob): the next files of its glob are fetched while this one is.
		// Not where the host reads side by side on its own pool (DuckDB 2.0 opens and reads the next files itself).
		auto context = handle.client_context.lock();
		if (context) {
			prefetch.ReadWhole(handle.path, handle.settings, duckdb::ClientData::Get(*context).file_opener.get());
		}
	}
	auto served = read_ahead.Serve(handle, read, buffer);
	try {
		for (auto &gap : served.gaps) {
			ReadForReader(handle, buffer + (gap.offset - location), static_cast<int64_t>(gap.length), gap.offset);
		}
	} catch (...) {
		read_ahead.EndReading(handle, served);
		throw;
	}
	read_ahead.EndReading(handle, served);
	read_ahead.Learn(handle, read, buffer);
}

void WrappedFileSystem::Read(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	auto &readable = Readable(handle);
	read_ahead.AttachDeferred(readable);
	stats->RecordRead(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	// Reads past the end go to the wrapped filesystem unchanged, so they fail exactly as they would without httpfs2.
	bool inside = location <= readable.file_size && static_cast<idx_t>(nr_bytes) <= readable.file_size - location;
	if (nr_bytes > 0 && readable.read_ahead && inside) {
		ReadWithReadAhead(readable, static_cast<char *>(buffer), static_cast<idx_t>(nr_bytes), location);
		return;
	}
	ReadForReader(readable, buffer, nr_bytes, location);
}

int64_t WrappedFileSystem::Read(FileHandle &handle, void *buffer, int64_t nr_bytes) {
	auto &readable = Readable(handle);
	read_ahead.AttachDeferred(readable);
	bool positional = readable.read_ahead || readable.ReadsWholeObject() || readable.ReadsThroughRangeReader();
	if ((positional && nr_bytes >= 0) || (readable.CanSplit() && nr_bytes > 0)) {
		// A sequential read is a positional read at the current position, clamped to the end of the file.
		idx_t position = readable.inner.SeekPosition();
		idx_t available = position < readable.file_size ? readable.file_size - position : 0;
		idx_t to_read = std::min<idx_t>(static_cast<idx_t>(nr_bytes), available);
		if (to_read == 0 && positional) {
			return 0; // nothing (more) of the version read: nothing to ask the wrapped filesystem, nor open it for
		}
		if (to_read > 0 && (positional || readable.ShouldSplit(to_read, position))) {
			stats->RecordRead(to_read);
			if (readable.read_ahead) {
				ReadWithReadAhead(readable, static_cast<char *>(buffer), to_read, position);
			} else {
				ReadForReader(readable, buffer, static_cast<int64_t>(to_read), position);
			}
			readable.inner.Seek(position + to_read);
			return static_cast<int64_t>(to_read);
		}
	}
	stats->RecordRead(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	stats->RecordPassThrough();
	try {
		auto &primary = readable.Inner();
		return primary.file_system.Read(primary, buffer, nr_bytes);
	} catch (...) {
		stats->Add(Counter::ERRORS);
		throw;
	}
}

// --- writing ---

void WrappedFileSystem::Write(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	stats->RecordWrite(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	if (auto upload = AsUpload(handle)) {
		upload->AppendAt(static_cast<const char *>(buffer), static_cast<uint64_t>(nr_bytes), location);
		return;
	}
	auto &primary = InnerOf(handle);
	primary.file_system.Write(primary, buffer, nr_bytes, location);
}

int64_t WrappedFileSystem::Write(FileHandle &handle, void *buffer, int64_t nr_bytes) {
	stats->RecordWrite(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	if (auto upload = AsUpload(handle)) {
		upload->Append(static_cast<const char *>(buffer), static_cast<uint64_t>(nr_bytes));
		return nr_bytes;
	}
	auto &primary = InnerOf(handle);
	return primary.file_system.Write(primary, buffer, nr_bytes);
}

void WrappedFileSystem::FileSync(FileHandle &handle) {
	if (AsUpload(handle)) {
		return; // an object is made visible whole, at Close
	}
	auto &primary = InnerOf(handle);
	primary.file_system.FileSync(primary);
}

// --- what a handle reports: the version httpfs2 knew, else the wrapped filesystem's answer ---

namespace {
//! The version httpfs2 knew for `handle`, or null.
const ObjectVersion *KnownVersion(FileHandle &handle) {
	auto &wrapped = handle.Cast<WrappedFileHandle>();
	if (wrapped.kind != WrappedFileHandle::Kind::READ || !handle.Cast<ReadHandle>().version_known) {
		return nullptr;
	}
	return &handle.Cast<ReadHandle>().version;
}
} // namespace

int64_t WrappedFileSystem::GetFileSize(FileHandle &handle) {
	if (auto upload = AsUpload(handle)) {
		return static_cast<int64_t>(upload->BytesWritten());
	}
	if (auto version = KnownVersion(handle)) {
		return static_cast<int64_t>(version->size);
	}
	auto &primary = InnerOf(handle);
	return primary.file_system.GetFileSize(primary);
}

duckdb::timestamp_t WrappedFileSystem::GetLastModifiedTime(FileHandle &handle) {
	if (auto version = KnownVersion(handle)) {
		return version->last_modified;
	}
	auto &primary = InnerOf(handle);
	return primary.file_system.GetLastModifiedTime(primary);
}

string WrappedFileSystem::GetVersionTag(FileHandle &handle) {
	if (auto version = KnownVersion(handle)) {
		return version->etag;
	}
	auto &primary = InnerOf(handle);
	return primary.file_system.GetVersionTag(primary);
}

duckdb::FileType WrappedFileSystem::GetFileType(FileHandle &handle) {
	if (KnownVersion(handle) || AsUpload(handle)) {
		return duckdb::FileType::FILE_TYPE_REGULAR;
	}
	auto &primary = InnerOf(handle);
	return primary.file_system.GetFileType(primary);
}

duckdb::FileMetadata WrappedFileSystem::Stats(FileHandle &handle) {
	if (auto version = KnownVersion(handle)) {
		duckdb::FileMetadata metadata;
		metadata.file_size = static_cast<int64_t>(version->size);
		metadata.last_modification_time = version->last_modified;
		metadata.file_type = duckdb::FileType::FILE_TYPE_REGULAR;
		compat::SetVersionTag(metadata, version->etag);
		return metadata;
	}
	auto &primary = InnerOf(handle);
	return primary.file_system.Stats(primary);
}

bool WrappedFileSystem::OnDiskFile(FileHandle &handle) {
	if (KnownVersion(handle) || AsUpload(handle)) {
		return false;
	}
	auto &primary = InnerOf(handle);
	return primary.file_system.OnDiskFile(primary);
}

// A seek never opens a handle that is not open yet (LazyHandle); an upload only appends, so it has nothing to seek.

void WrappedFileSystem::Seek(FileHandle &handle, idx_t location) {
	if (!AsUpload(handle)) {
		handle.Cast<ReadHandle>().inner.Seek(location);
	}
}

void WrappedFileSystem::Reset(FileHandle &handle) {
	if (!AsUpload(handle)) {
		handle.Cast<ReadHandle>().inner.Reset();
	}
}

idx_t WrappedFileSystem::SeekPosition(FileHandle &handle) {
	if (auto upload = AsUpload(handle)) {
		return upload->BytesWritten();
	}
	return handle.Cast<ReadHandle>().inner.SeekPosition();
}

// --- paths: existence, removal and globs ---

VersionLookup WrappedFileSystem::LookUpVersion(const string &path, optional_ptr<FileOpener> opener) {
	auto settings = SettingsFor(opener, *state).Effective();
	if (!store->LooksUpVersions() || !settings.enabled) {
		return VersionLookup::UNKNOWN;
	}
	ObjectVersion version;
	if (read_opener.TrustedVersion(path, opener, settings, version)) {
		return VersionLookup::FOUND; // within the trust window the user chose: no request
	}
	return store->LookUpVersion(path, opener, version);
}

bool WrappedFileSystem::FileExists(const string &filename, optional_ptr<FileOpener> opener) {
	uploading->AwaitPath(filename, opener);
	switch (LookUpVersion(filename, opener)) {
	case VersionLookup::FOUND:
		return true;
	case VersionLookup::MISSING:
		return false;
	default:
		return inner->FileExists(filename, opener);
	}
}

// A file being written is not there yet: its removal (DuckDB's, after a failed COPY) is skipped. One completing is
// complete first.

void WrappedFileSystem::RemoveFile(const string &filename, optional_ptr<FileOpener> opener) {
	if (uploading->AwaitRemovable(filename, opener)) {
		inner->RemoveFile(filename, opener);
	}
}

bool WrappedFileSystem::TryRemoveFile(const string &filename, optional_ptr<FileOpener> opener) {
	return !uploading->AwaitRemovable(filename, opener) || inner->TryRemoveFile(filename, opener);
}

void WrappedFileSystem::RemoveFiles(const duckdb::vector<string> &filenames, optional_ptr<FileOpener> opener) {
	duckdb::vector<string> written;
	for (auto &filename : filenames) {
		if (uploading->AwaitRemovable(filename, opener)) {
			written.push_back(filename);
		}
	}
	inner->RemoveFiles(written, opener);
}

bool WrappedFileSystem::TryGlobOneFile(const string &path, optional_ptr<FileOpener> opener,
                                       duckdb::vector<duckdb::OpenFileInfo> &files) {
	// The azure extension answers a glob without wildcards with an open of the blob (a HEAD of its own) that this
	// query's version lookup has made, or will make, anyway.
	switch (LookUpVersion(path, opener)) {
	case VersionLookup::FOUND:
		files.emplace_back(path);
		return true;
	case VersionLookup::MISSING:
		return true;
	default:
		return false;
	}
}

duckdb::vector<duckdb::OpenFileInfo> WrappedFileSystem::Glob(const string &path, FileOpener *opener) {
	uploading->AwaitGlob(path, opener);
	duckdb::vector<duckdb::OpenFileInfo> one_file;
	if (TryGlobOneFile(path, opener, one_file)) {
		return one_file;
	}
	auto files = inner->Glob(path, opener);
	prefetch.Listed(std::vector<duckdb::OpenFileInfo>(files.begin(), files.end()),
	                SettingsFor(opener, *state).Effective(), opener, false);
	return files;
}

unique_ptr<duckdb::MultiFileList> WrappedFileSystem::GlobFilesExtended(const string &path,
                                                                       const duckdb::FileGlobInput &input,
                                                                       optional_ptr<FileOpener> opener) {
	uploading->AwaitGlob(path, opener);
	duckdb::vector<duckdb::OpenFileInfo> one_file;
	if (TryGlobOneFile(path, opener, one_file)) {
		return duckdb::make_uniq<duckdb::SimpleMultiFileList>(std::move(one_file));
	}
	auto settings = SettingsFor(opener, *state).Effective();
	if (!settings.ReadAheadActive()) {
		return inner->Glob(path, input, opener);
	}
	// Expands a lazy listing up to FILES_PER_LISTING now: DuckDB opens the files in this order right after.
	ExpandedGlob expanded;
	ExpandGlob(path, input, opener, expanded);
	if (expanded.list) {
		// A reader names the files' format (read_parquet: "parquet"); glob() and plain listings do not.
		prefetch.Listed(std::move(expanded.files), settings, opener, !input.extension.empty());
	}
	return std::move(expanded.list);
}

void WrappedFileSystem::ExpandGlob(const string &path, const duckdb::FileGlobInput &input,
                                   optional_ptr<FileOpener> opener, ExpandedGlob &expanded) {
	auto context = FileOpener::TryGetClientContext(opener);
	auto params = context ? QuietParams(duckdb::HTTPUtil::Get(*context->db), path, opener) : nullptr;
	// httpfs on DuckDB 2.0 fails a glob whose listing is throttled (503 SlowDown) at once: the listing is sent again
	// through the one retry policy, as httpfs2's own requests are.
	RequestAttempts attempts(params ? RetryBackoffOf(*params) : RetryBackoff(), params ? params->retries + 1 : 1,
	                         context ? ReadThrottleListeners(*context, *stats, &state->cost_model.streams, path)
	                                 : ThrottleListeners());
	if (context) {
		attempts.CancelWith(QueryCancelled(*context));
	}
	auto send = [&](ExpandedGlob &attempt) {
		try {
			attempt.list = inner->Glob(path, input, opener);
			if (!attempt.list) {
				return AttemptOutcome::DONE;
			}
			duckdb::MultiFileListScanData scan;
			attempt.list->InitializeScan(scan);
			duckdb::OpenFileInfo file;
			while (attempt.files.size() < PrefetchLimits::FILES_PER_LISTING && attempt.list->Scan(scan, file)) {
				attempt.files.push_back(file);
			}
			return AttemptOutcome::DONE;
		} catch (std::exception &error) {
			// Told by its status, not its type: httpfs throws a listing's error again from its ErrorData, as DuckDB's
			// Exception of type HTTP, not as an HTTPException.
			attempt.failure = std::current_exception();
			return IsThrottling(HttpStatusOf(error)) ? AttemptOutcome::THROTTLED : AttemptOutcome::REFUSED;
		}
	};
	if (attempts.Run(expanded, send, [](const ExpandedGlob &) { return false; }) != AttemptOutcome::DONE) {
		if (attempts.Cancelled()) {
			throw duckdb::InterruptException();
		}
		std::rethrow_exception(expanded.failure);
	}
}

bool WrappedFileSystem::SupportsGlobExtended() const {
	return true;
}

} // namespace httpfs2
