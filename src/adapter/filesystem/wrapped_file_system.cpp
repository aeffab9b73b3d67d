#include "adapter/filesystem/wrapped_file_system.hpp"

#include "adapter/extension/settings.hpp"
#include "adapter/filesystem/internal_opener.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/multi_file/multi_file_list.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/client_context_state.hpp"
#include "duckdb/main/client_data.hpp"

#include <atomic>

namespace httpfs2 {

using duckdb::FileHandle;
using duckdb::FileOpener;
using duckdb::idx_t;
using duckdb::optional_ptr;
using duckdb::unique_ptr;
using std::string;

constexpr uint32_t WrappedFileSystem::MAX_FAILED_TAILS;
constexpr int64_t WrappedFileSystem::TAIL_PAUSE_SECONDS;

WrappedFileSystem::WrappedFileSystem(unique_ptr<duckdb::FileSystem> inner_p, std::shared_ptr<ExtensionState> state_p)
    : inner(std::move(inner_p)), state(std::move(state_p)), stats(state->StatsFor(inner->GetName())),
      reader(*state, *stats), versions_by_head(inner->GetName() == "AzureBlobStorageFileSystem"),
      tails_by_get(inner->GetName() == "S3FileSystem"),
      checks_ranges(tails_by_get || inner->GetName() == "HTTPFileSystem"),
      range_store(tails_by_get ? CheckedRangeReader::Store::S3 : CheckedRangeReader::Store::HTTP) {
	state->AddFileSystem(*this);
}

WrappedFileSystem::~WrappedFileSystem() {
	state->RemoveFileSystem(*this);
}

void WrappedFileSystem::ReleaseHandles() {
	read_aheads.CloseAll();
	version_handles.Clear();
}

WrappedFileHandle &WrappedFileSystem::Unwrap(FileHandle &handle) {
	return handle.Cast<WrappedFileHandle>();
}

// --- read-ahead ---

bool WrappedFileSystem::FooterOutlivesOpen(const ObjectVersion &version) const {
	// S3's ETag is the MD5 of the bytes (or of the parts' MD5s), Azure's changes at every write. A plain HTTP server's
	// is often made of size and modification time, which an overwrite of the same size within a second keeps.
	if (tails_by_get) {
		return version.IsContentHash();
	}
	return versions_by_head && version.NamesBytes();
}

bool WrappedFileSystem::IsParquetPath(const string &path) {
	return duckdb::StringUtil::EndsWith(duckdb::StringUtil::Lower(path), ".parquet");
}

std::string WrappedFileSystem::VersionKeyPrefix(const string &path) {
	return path + "\n";
}

std::string WrappedFileSystem::VersionKey(const string &path, const ObjectVersion &version) {
	auto key = VersionKeyPrefix(path) + version.etag + "\n" + std::to_string(version.last_modified.value) + "\n" +
	           std::to_string(version.size);
	if (!version.Recognizable()) {
		static std::atomic<uint64_t> opens {0};
		key += "\n#" + std::to_string(opens++);
	}
	return key;
}

std::shared_ptr<FileHandle> WrappedFileSystem::OpenFetchHandle(const string &path, const ObjectVersion &version,
                                                               optional_ptr<FileOpener> opener) {
	auto open = [&]() {
		return OpenAtVersion(OpenInfo(path, version), PARALLEL_READ_FLAGS, opener, version, true);
	};
	auto context = FileOpener::TryGetClientContext(opener);
	if (!versions_by_head || !context || !version.Recognizable()) {
		return std::shared_ptr<FileHandle>(open().release());
	}
	// Kept per connection: a handle carries the credentials of the connection that opened it.
	auto key = VersionKey(path, version) + "\n" + std::to_string(context->GetConnectionId());
	return version_handles.Get(key, open);
}

std::shared_ptr<FileHandle> WrappedFileSystem::SharedHandleFor(WrappedFileHandle &handle) {
	auto context = handle.client_context.lock();
	optional_ptr<FileOpener> opener = context ? duckdb::ClientData::Get(*context).file_opener.get() : nullptr;
	return OpenFetchHandle(handle.path, handle.version, opener);
}

std::shared_ptr<CheckedRangeReader> WrappedFileSystem::RangeReaderFor(const string &path, const ObjectVersion &version,
                                                                      optional_ptr<FileOpener> opener,
                                                                      bool ranges_confirmed) {
	return checks_ranges
	           ? CheckedRangeReader::For(path, version, range_store, opener, *stats, ranged_paths, ranges_confirmed)
	           : nullptr;
}

ObjectReadAhead::Fetcher WrappedFileSystem::FetcherFor(const string &path, const ObjectVersion &version,
                                                       optional_ptr<FileOpener> opener,
                                                       std::shared_ptr<CheckedRangeReader> reader) {
	if (!reader) {
		reader = RangeReaderFor(path, version, opener, false);
	}
	if (reader) {
		return [reader](const ByteRange &range, char *destination) {
			reader->Read(range, destination);
		};
	}
	auto fetch_handle = OpenFetchHandle(path, version, opener);
	auto declined = std::make_shared<std::atomic<bool>>(false);
	return [fetch_handle, declined](const ByteRange &range, char *destination) {
		if (*declined) {
			throw FetchDeclined(fetch_handle->path);
		}
		try {
			fetch_handle->file_system.Read(*fetch_handle, destination, static_cast<int64_t>(range.length),
			                               range.offset);
		} catch (std::exception &error) {
			if (!InternalOpener::IsRangesIgnored(error)) {
				throw;
			}
			*declined = true;
			throw FetchDeclined(fetch_handle->path);
		}
	};
}

std::shared_ptr<ObjectReadAhead> WrappedFileSystem::CreateReadAhead(const string &path, const ObjectVersion &version,
                                                                    ObjectReadAhead::Fetcher fetch) {
	auto object = std::make_shared<ObjectReadAhead>(state->io_pool, state->read_ahead_budget, *stats, state->cost_model,
	                                                version.size, std::move(fetch));
	// Files of one folder share a schema and, within a scan, the columns read.
	object->SharePatterns(patterns, path.substr(0, path.find_last_of('/') + 1));
	return object;
}

ReadAheadTuning WrappedFileSystem::TuningFor(const ParallelReadSettings &settings) const {
	return ReadAheadTuner::Tune(settings, state->cost_model.Snapshot(), state->io_pool.TargetSize(),
	                            state->read_ahead_budget.Limit());
}

void WrappedFileSystem::AttachReadAhead(WrappedFileHandle &handle, optional_ptr<FileOpener> opener) {
	auto version = VersionOf(handle);
	if (version.size == 0) {
		return;
	}
	handle.file_size = version.size;
	auto key = VersionKey(handle.path, version);
	std::shared_ptr<ObjectReadAhead> object;
	try {
		// Made outside the registry's lock (on Azure opening a fetch handle is a request), unless another handle's
		// object will do.
		ObjectReadAhead::Fetcher fetch;
		if (!read_aheads.Contains(key)) {
			fetch = FetcherFor(handle.path, version, opener, handle.range_reader);
		}
		object = read_aheads.Attach(key, [&]() {
			return CreateReadAhead(handle.path, version,
			                       fetch ? fetch : FetcherFor(handle.path, version, opener, handle.range_reader));
		});
	} catch (std::exception &) {
		// The file opened; only read-ahead's own handle did not. It is read without read-ahead.
		return;
	}
	handle.read_ahead = duckdb::make_uniq<ReadAheadAttachment>(read_aheads, key, std::move(object), version,
	                                                           FooterOutlivesOpen(version));
}

namespace {
//! The files a query's listings pinned (their footers fetched ahead of the opens that follow): those the query did not
//! open are let go when it ends (a LIMIT, an error), not held into the connection's next queries.
class QueryPins : public duckdb::ClientContextState {
public:
	using ClientContextState::QueryEnd;
	void QueryEnd(duckdb::ClientContext &) override {
		std::vector<std::pair<ReadAheadRegistry *, string>> ended;
		{
			std::lock_guard<std::mutex> guard(lock);
			ended.swap(pins);
		}
		for (auto &pin : ended) {
			pin.first->Unpin(pin.second);
		}
	}

	//! `registry` belongs to a filesystem of the connection's database, which outlives the connection.
	void Add(ReadAheadRegistry &registry, const string &key) {
		std::lock_guard<std::mutex> guard(lock);
		pins.emplace_back(&registry, key);
	}

private:
	std::mutex lock;
	std::vector<std::pair<ReadAheadRegistry *, string>> pins;
};
} // namespace

void WrappedFileSystem::PrefetchFooter(const string &path, const ObjectVersion &version, const ReadAheadTuning &tuning,
                                       optional_ptr<FileOpener> opener) {
	auto tail = ParquetFooter::DuckDBTailReadSize(version.size);
	// The same key an open of this file at this version computes.
	auto key = VersionKey(path, version);
	if (tail == 0 || !version.Recognizable() || read_aheads.Contains(key)) {
		return;
	}
	try {
		auto fetch = FetcherFor(path, version, opener, nullptr);
		auto object = read_aheads.Pin(key, [&]() { return CreateReadAhead(path, version, fetch); });
		if (object) {
			auto context = FileOpener::TryGetClientContext(opener);
			if (context) {
				context->registered_state->GetOrCreate<QueryPins>("httpfs2_query_pins")->Add(read_aheads, key);
			}
			object->Prefetch({ByteRange {version.size - tail, tail}}, tuning);
		}
	} catch (std::exception &) {
		// A handle that would not open: the file is read without it.
	}
}

void WrappedFileSystem::PrefetchFooters(const std::vector<duckdb::OpenFileInfo> &files,
                                        const ParallelReadSettings &settings, optional_ptr<FileOpener> opener) {
	ReadAheadTuning tuning = TuningFor(settings);
	if (!tuning.fetch_ahead) {
		return;
	}
	std::vector<std::function<void()>> lookups;
	for (auto &file : files) {
		if (!file.extended_info || !IsParquetPath(file.path)) {
			continue;
		}
		auto &options = file.extended_info->options;
		auto size = options.find("file_size");
		auto etag = options.find("etag");
		auto last_modified = options.find("last_modified");
		if (size != options.end() && etag != options.end() && last_modified != options.end()) {
			ObjectVersion version;
			try {
				version.size = size->second.GetValue<uint64_t>();
				version.last_modified = last_modified->second.GetValue<duckdb::timestamp_t>();
				version.etag = etag->second.ToString();
			} catch (std::exception &) {
				continue; // metadata of a type we do not know
			}
			PrefetchFooter(file.path, version, tuning, opener);
		} else if (versions_by_head) {
			// Azure listings carry no ETag: look the versions up, all at once, then fetch the footers.
			auto path = file.path;
			lookups.push_back([this, path, tuning, opener]() {
				ObjectVersion version;
				if (AzureVersions::Lookup(path, opener, *stats, version) == VersionLookup::FOUND) {
					PrefetchFooter(path, version, tuning, opener);
				}
			});
		}
	}
	// Waits for them: they use this query's file opener, and the opens that follow find the versions looked up.
	state->io_pool.RunAll(std::move(lookups), ListingMemory::DEPTH);
}

void WrappedFileSystem::RememberListing(std::vector<duckdb::OpenFileInfo> files, optional_ptr<FileOpener> opener,
                                        bool scan_reads_them) {
	auto settings = ReadSettings(opener, *state).Effective();
	if (!settings.ReadAheadActive() || files.size() < 2) {
		return;
	}
	// A listing alone (glob(), a count of files) opens no file and fetches nothing; the opens of listed files fetch
	// the footers of those after them. A multi-file reader's listing (read_parquet's) is read right after: the
	// footers of its first files are fetched now, beside the first file's open.
	std::vector<duckdb::OpenFileInfo> first;
	if (scan_reads_them) {
		first.assign(files.begin(), files.begin() + std::min<size_t>(ListingMemory::DEPTH, files.size()));
	}
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
		if (handle.version_known && !handle.inner.IsOpen() && !handle.RangesIgnored()) {
			// The version's shared handle, rather than an open (a HEAD on Azure) of this handle's own.
			auto &shared = handle.version_handle->Get();
			shared.file_system.Read(shared, buffer, nr_bytes, location);
			return;
		}
		auto &primary = handle.Inner();
		primary.file_system.Read(primary, buffer, nr_bytes, location);
	} catch (...) {
		stats->Add(Counter::ERRORS);
		throw;
	}
}

void WrappedFileSystem::ReadWithReadAhead(WrappedFileHandle &handle, char *buffer, idx_t nr_bytes, idx_t location) {
	auto &object = *handle.read_ahead->object;
	ByteRange read {location, nr_bytes};
	if (!handle.Interrupted() && !handle.RangesIgnored()) {
		auto tuning = TuningFor(handle.settings);
		if (tuning.fetch_ahead) {
			handle.read_ahead->reader.Observe(read, tuning);
		} else {
			stats->Add(Counter::READ_AHEAD_DECLINED);
		}
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
	if (object.Inspect(read, buffer) && handle.read_ahead->recognizable) {
		read_aheads.RememberLayout(handle.read_ahead->key, object.Layout());
	}
	RememberFooter(handle, read, buffer);
}

void WrappedFileSystem::RememberFooter(WrappedFileHandle &handle, const ByteRange &read, const char *buffer) {
	// A Parquet footer read (from the end of the file, or the metadata before it when that did not fit), remembered
	// so that the next open of this version (the scan after the bind, the next query) reads it without a request.
	auto &attachment = *handle.read_ahead;
	if (!attachment.strong_etag || read.length > ReadAheadRegistry::MAX_FOOTER_BYTES ||
	    read.End() + ReadAheadRegistry::MAX_FOOTER_BYTES < handle.file_size) {
		return;
	}
	uint32_t metadata_length = 0;
	if (read.End() != handle.file_size) {
		read_aheads.ExtendFooter(attachment.key, read, buffer);
	} else if (read.length >= ParquetFooter::TRAILER_SIZE &&
	           ParquetFooter::ParseTrailer(buffer + read.length - ParquetFooter::TRAILER_SIZE, handle.file_size,
	                                       metadata_length)) {
		read_aheads.RememberFooter(attachment.key, read, buffer);
	}
}

void WrappedFileSystem::AttachDeferredReadAhead(WrappedFileHandle &handle) {
	if (!handle.read_ahead_deferred) {
		return;
	}
	std::call_once(handle.read_ahead_attached, [&]() {
		auto context = handle.client_context.lock();
		if (context) {
			AttachReadAhead(handle, duckdb::ClientData::Get(*context).file_opener.get());
		}
	});
}

void WrappedFileSystem::Read(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	auto &wrapped = Unwrap(handle);
	AttachDeferredReadAhead(wrapped);
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
	AttachDeferredReadAhead(wrapped);
	if ((wrapped.read_ahead || wrapped.CanSplit()) && nr_bytes > 0) {
		// A sequential read is a positional read at the current position, clamped to the end of the file.
		idx_t position = wrapped.inner.SeekPosition();
		idx_t available = position < wrapped.file_size ? wrapped.file_size - position : 0;
		idx_t to_read = std::min<idx_t>(static_cast<idx_t>(nr_bytes), available);
		if (to_read > 0 && (wrapped.read_ahead || wrapped.ShouldSplit(to_read, position))) {
			stats->RecordRead(to_read);
			if (wrapped.read_ahead) {
				ReadWithReadAhead(wrapped, static_cast<char *>(buffer), to_read, position);
			} else {
				ReadForReader(wrapped, buffer, static_cast<int64_t>(to_read), position);
			}
			wrapped.inner.Seek(position + to_read);
			return static_cast<int64_t>(to_read);
		}
	}
	stats->RecordRead(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	stats->RecordPassThrough();
	try {
		auto &primary = wrapped.Inner();
		return primary.file_system.Read(primary, buffer, nr_bytes);
	} catch (...) {
		stats->Add(Counter::ERRORS);
		throw;
	}
}

void WrappedFileSystem::Append(WrappedFileHandle &handle, void *buffer, int64_t nr_bytes) {
	try {
		handle.upload->Write(static_cast<const char *>(buffer), static_cast<uint64_t>(nr_bytes));
	} catch (duckdb::Exception &) {
		throw; // the store's error, as httpfs gave it
	} catch (std::exception &error) {
		throw duckdb::IOException("httpfs2: writing '%s': %s", handle.path, error.what());
	}
}

void WrappedFileSystem::Write(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	auto &wrapped = Unwrap(handle);
	stats->RecordWrite(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	if (wrapped.upload) {
		if (location != wrapped.upload->BytesWritten()) {
			throw duckdb::NotImplementedException(
			    "httpfs2: '%s' is written in order by httpfs2's uploader: a write at byte %llu after %llu bytes "
			    "(set httpfs2_write_enabled = false to write it with httpfs)",
			    handle.path, static_cast<unsigned long long>(location),
			    static_cast<unsigned long long>(wrapped.upload->BytesWritten()));
		}
		Append(wrapped, buffer, nr_bytes);
		return;
	}
	auto &primary = wrapped.Inner();
	primary.file_system.Write(primary, buffer, nr_bytes, location);
}

int64_t WrappedFileSystem::Write(FileHandle &handle, void *buffer, int64_t nr_bytes) {
	auto &wrapped = Unwrap(handle);
	stats->RecordWrite(static_cast<uint64_t>(std::max<int64_t>(nr_bytes, 0)));
	if (wrapped.upload) {
		Append(wrapped, buffer, nr_bytes);
		return nr_bytes;
	}
	auto &primary = wrapped.Inner();
	return primary.file_system.Write(primary, buffer, nr_bytes);
}

// --- everything else passes through to the wrapped filesystem, with its own handle ---

bool WrappedFileSystem::Trim(FileHandle &handle, idx_t offset_bytes, idx_t length_bytes) {
	auto &primary = Unwrap(handle).Inner();
	return primary.file_system.Trim(primary, offset_bytes, length_bytes);
}

int64_t WrappedFileSystem::GetFileSize(FileHandle &handle) {
	auto &wrapped = Unwrap(handle);
	if (wrapped.upload) {
		return static_cast<int64_t>(wrapped.upload->BytesWritten());
	}
	if (wrapped.version_known) {
		return static_cast<int64_t>(wrapped.version.size);
	}
	auto &primary = wrapped.Inner();
	return primary.file_system.GetFileSize(primary);
}

duckdb::timestamp_t WrappedFileSystem::GetLastModifiedTime(FileHandle &handle) {
	auto &wrapped = Unwrap(handle);
	if (wrapped.version_known) {
		return wrapped.version.last_modified;
	}
	auto &primary = wrapped.Inner();
	return primary.file_system.GetLastModifiedTime(primary);
}

string WrappedFileSystem::GetVersionTag(FileHandle &handle) {
	auto &wrapped = Unwrap(handle);
	if (wrapped.version_known) {
		return wrapped.version.etag;
	}
	auto &primary = wrapped.Inner();
	return primary.file_system.GetVersionTag(primary);
}

duckdb::FileType WrappedFileSystem::GetFileType(FileHandle &handle) {
	auto &wrapped = Unwrap(handle);
	if (wrapped.version_known || wrapped.upload) {
		return duckdb::FileType::FILE_TYPE_REGULAR;
	}
	auto &primary = wrapped.Inner();
	return primary.file_system.GetFileType(primary);
}

duckdb::FileMetadata WrappedFileSystem::Stats(FileHandle &handle) {
	auto &wrapped = Unwrap(handle);
	if (wrapped.version_known) {
		duckdb::FileMetadata metadata;
		metadata.file_size = static_cast<int64_t>(wrapped.version.size);
		metadata.last_modification_time = wrapped.version.last_modified;
		metadata.file_type = duckdb::FileType::FILE_TYPE_REGULAR;
		return metadata;
	}
	auto &primary = wrapped.Inner();
	return primary.file_system.Stats(primary);
}

void WrappedFileSystem::Truncate(FileHandle &handle, int64_t new_size) {
	auto &primary = Unwrap(handle).Inner();
	primary.file_system.Truncate(primary, new_size);
}

void WrappedFileSystem::FileSync(FileHandle &handle) {
	if (Unwrap(handle).upload) {
		return; // an object is made visible whole, at Close
	}
	auto &primary = Unwrap(handle).Inner();
	primary.file_system.FileSync(primary);
}

void WrappedFileSystem::Seek(FileHandle &handle, idx_t location) {
	Unwrap(handle).inner.Seek(location);
}

void WrappedFileSystem::Reset(FileHandle &handle) {
	Unwrap(handle).inner.Reset();
}

idx_t WrappedFileSystem::SeekPosition(FileHandle &handle) {
	auto &wrapped = Unwrap(handle);
	if (wrapped.upload) {
		return wrapped.upload->BytesWritten();
	}
	return wrapped.inner.SeekPosition();
}

bool WrappedFileSystem::OnDiskFile(FileHandle &handle) {
	auto &wrapped = Unwrap(handle);
	if (wrapped.version_known || wrapped.upload) {
		return false;
	}
	auto &primary = wrapped.Inner();
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
	switch (LookupVersion(filename, opener)) {
	case VersionLookup::FOUND:
		return true;
	case VersionLookup::MISSING:
		return false;
	default:
		return inner->FileExists(filename, opener);
	}
}

bool WrappedFileSystem::IsPipe(const string &filename, optional_ptr<FileOpener> opener) {
	return inner->IsPipe(filename, opener);
}

void WrappedFileSystem::RemoveFile(const string &filename, optional_ptr<FileOpener> opener) {
	if (!uploading->Contains(filename)) {
		inner->RemoveFile(filename, opener);
	}
}

bool WrappedFileSystem::TryRemoveFile(const string &filename, optional_ptr<FileOpener> opener) {
	return uploading->Contains(filename) || inner->TryRemoveFile(filename, opener);
}

void WrappedFileSystem::RemoveFiles(const duckdb::vector<string> &filenames, optional_ptr<FileOpener> opener) {
	duckdb::vector<string> written;
	for (auto &filename : filenames) {
		if (!uploading->Contains(filename)) {
			written.push_back(filename);
		}
	}
	inner->RemoveFiles(written, opener);
}

VersionLookup WrappedFileSystem::LookupVersion(const string &path, optional_ptr<FileOpener> opener) {
	if (!versions_by_head || !ReadSettings(opener, *state).Effective().enabled) {
		return VersionLookup::UNKNOWN;
	}
	ObjectVersion version;
	return AzureVersions::Lookup(path, opener, *stats, version);
}

bool WrappedFileSystem::TryGlobOneFile(const string &path, optional_ptr<FileOpener> opener,
                                       duckdb::vector<duckdb::OpenFileInfo> &files) {
	// The azure extension answers a glob without wildcards with an open of the blob (a HEAD of its own) that this
	// query's version lookup has made, or will make, anyway.
	switch (LookupVersion(path, opener)) {
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
	duckdb::vector<duckdb::OpenFileInfo> one_file;
	if (TryGlobOneFile(path, opener, one_file)) {
		return one_file;
	}
	auto files = inner->Glob(path, opener);
	RememberListing(std::vector<duckdb::OpenFileInfo>(files.begin(), files.end()), opener, false);
	return files;
}

unique_ptr<duckdb::MultiFileList> WrappedFileSystem::GlobFilesExtended(const string &path,
                                                                       const duckdb::FileGlobInput &input,
                                                                       optional_ptr<FileOpener> opener) {
	duckdb::vector<duckdb::OpenFileInfo> one_file;
	if (TryGlobOneFile(path, opener, one_file)) {
		return duckdb::make_uniq<duckdb::SimpleMultiFileList>(std::move(one_file));
	}
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
		// A reader names the files' format (read_parquet: "parquet"); glob() and plain listings do not.
		RememberListing(std::move(files), opener, !input.extension.empty());
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
