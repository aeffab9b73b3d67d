#include "adapter/stores/azure_uploads.hpp"
#include "adapter/stores/query_versions.hpp"
#include "adapter/stores/s3_tails.hpp"
#include "adapter/stores/s3_uploads.hpp"
#include "adapter/extension/settings.hpp"
#include "adapter/filesystem/internal_opener.hpp"
#include "adapter/filesystem/wrapped_file_system.hpp"
#include "core/requests/url_redaction.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/main/client_data.hpp"

#include <chrono>
#include <unordered_set>

// Opening files: the wrapped filesystem's handle at once, or (az:// blobs whose version httpfs2 looked up) when
// first needed; the handles sub-reads and read-ahead run on, each at the version the file was opened at.

namespace httpfs2 {

using duckdb::FileHandle;
using duckdb::FileOpener;
using duckdb::idx_t;
using duckdb::optional_ptr;
using duckdb::unique_ptr;
using std::string;

namespace {
//! httpfs answers the later opens of a file within a query (the scan's after the bind's) from what its first open
//! learned, in microseconds and without a request: only a path's first open in a query is a round trip to time.
//! Timed as well, those opens pulled the model at 25 ms per request down to 9 ms.
class OpenedThisQuery : public duckdb::ClientContextState {
public:
	using ClientContextState::QueryEnd;
	void QueryEnd(duckdb::ClientContext &) override {
		std::lock_guard<std::mutex> guard(lock);
		paths.clear();
	}

	bool First(const string &path) {
		std::lock_guard<std::mutex> guard(lock);
		return paths.insert(path).second;
	}

private:
	std::mutex lock;
	std::unordered_set<string> paths;
};

bool FirstOpenInQuery(const string &path, optional_ptr<FileOpener> opener) {
	auto context = FileOpener::TryGetClientContext(opener);
	return !context ||
	       context->registered_state->GetOrCreate<OpenedThisQuery>("httpfs2_opened_this_query")->First(path);
}
} // namespace

unique_ptr<FileHandle> WrappedFileSystem::OpenFileExtended(const duckdb::OpenFileInfo &file,
                                                           duckdb::FileOpenFlags flags,
                                                           optional_ptr<FileOpener> opener) {
	auto settings = ReadSettings(opener, *state).Effective();
	bool read_only = flags.OpenForReading() && !flags.OpenForWriting();
	if (versions_by_head && !read_only) {
		AzureVersions::Forget(file.path, opener); // what this query looked up is not what it is writing
	}
	if ((tails_by_get || versions_by_head) && settings.UploadsActive() && flags.OpenForWriting() &&
	    !flags.OpenForReading() && !flags.OpenForAppending() && !flags.ExclusiveCreate() &&
	    !flags.ReturnNullIfExists()) {
		auto budget = state->upload_budget->Limit();
		if (settings.write_part_size_bytes > budget) {
			throw duckdb::InvalidInputException(
			    "httpfs2: cannot write '%s': httpfs2_write_part_size_bytes (%llu) is larger than "
			    "httpfs2_write_memory_limit_bytes (%llu), which must hold a part; lower the one or raise the other",
			    file.path, static_cast<unsigned long long>(settings.write_part_size_bytes),
			    static_cast<unsigned long long>(budget));
		}
		auto target = tails_by_get ? S3Uploads::TargetFor(file.path, opener, *stats)
		                           : AzureUploads::TargetFor(file.path, opener, *stats);
		if (target) {
			UploadOptions options;
			options.part_size = settings.write_part_size_bytes;
			auto context = FileOpener::TryGetClientContext(opener);
			if (context) {
				// An interrupted query, or a closed connection, stops waiting for parts whose answers never end.
				duckdb::weak_ptr<duckdb::ClientContext> connection = context->shared_from_this();
				options.cancelled = [connection]() {
					auto alive = connection.lock();
					return !alive || alive->interrupted.load();
				};
			}
			std::unique_ptr<ObjectUpload> upload(
			    new ObjectUpload(std::move(target), state->io_pool, state->upload_budget, options));
			stats->Add(Counter::FILES_OPENED);
			auto mark = std::unique_ptr<UploadingPaths::Mark>(new UploadingPaths::Mark(uploading, file.path));
			return duckdb::make_uniq<WrappedFileHandle>(*this, file.path, flags, std::move(upload), stats,
			                                            std::move(mark), settings);
		}
	}
	duckdb::Value force_download;
	if (read_only && FileOpener::TryGetCurrentSetting(opener, "force_download", force_download) &&
	    !force_download.IsNull() && force_download.GetValue<bool>()) {
		settings.enabled = false; // httpfs holds the whole file in memory: nothing to split or read ahead
	}
	unique_ptr<WrappedFileHandle> handle;
	if (settings.enabled && read_only && versions_by_head) {
		handle = OpenKnownVersion(file.path, flags, opener, settings);
	}
	bool had_metadata = file.extended_info && file.extended_info->options.count("file_size") > 0;
	if (!handle && settings.enabled && read_only && tails_by_get && settings.ReadAheadActive() && !had_metadata) {
		handle = OpenFromTail(file.path, flags, opener, settings);
	}
	if (!handle) {
		auto start = std::chrono::steady_clock::now();
		auto inner_handle = inner->OpenFile(file, flags, opener);
		if (!inner_handle) {
			return nullptr;
		}
		stats->Add(Counter::INNER_OPENS);
		// Without listing metadata a first open made a metadata request (HEAD): a clean first-byte latency sample.
		if (!had_metadata && flags.OpenForReading() && FirstOpenInQuery(file.path, opener)) {
			state->cost_model.ObserveRoundTrip(
			    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
		}
		handle = duckdb::make_uniq<WrappedFileHandle>(*this, std::move(inner_handle), settings);
	}
	stats->Add(Counter::FILES_OPENED);
	if (settings.enabled && read_only) {
		auto context = FileOpener::TryGetClientContext(opener);
		if (context) {
			handle->client_context = context->shared_from_this();
		}
		PrepareSubReads(*handle, opener);
		if (checks_ranges && (handle->CanSplit() || settings.ReadAheadActive())) {
			// A version from a tail GET came with an exact range: the store serves ranges.
			handle->range_reader =
			    RangeReaderFor(handle->path, VersionOf(*handle), opener, handle->version_known && tails_by_get);
		}
		if (settings.ReadAheadActive()) {
			if (handle->version_known) {
				// Attached at the first read: a query served by DuckDB's cache makes no request for it.
				handle->read_ahead_deferred = true;
				handle->file_size = handle->version.size;
			} else {
				AttachReadAhead(*handle, opener);
			}
			PrefetchFooters(listings.After(file.path), settings, opener);
		}
	}
	return std::move(handle);
}

bool WrappedFileSystem::SupportsOpenFileExtended() const {
	return true;
}

unique_ptr<WrappedFileHandle> WrappedFileSystem::OpenKnownVersion(const string &path, duckdb::FileOpenFlags flags,
                                                                  optional_ptr<FileOpener> opener,
                                                                  const ParallelReadSettings &settings) {
	ObjectVersion version;
	if (!FileOpener::TryGetClientContext(opener) ||
	    AzureVersions::Lookup(path, opener, *stats, version) != VersionLookup::FOUND) {
		return nullptr;
	}
	return OpenAtKnownVersion(path, flags, opener, settings, version);
}

unique_ptr<WrappedFileHandle> WrappedFileSystem::OpenFromTail(const string &path, duckdb::FileOpenFlags flags,
                                                              optional_ptr<FileOpener> opener,
                                                              const ParallelReadSettings &settings) {
	// A later open in the query of a file opened from its tail: at the version the tail gave, as httpfs opens it again
	// from what its first open learnt.
	auto query = QueryVersions::Of(opener);
	ObjectVersion known;
	if (query && query->Find(path, known)) {
		return OpenAtKnownVersion(path, flags, opener, settings, known);
	}
	// Parquet files only (DuckDB reads their end first), and only at a file's first open in a query when no footer of
	// it is remembered: otherwise a HEAD is all the open waits for.
	auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch());
	if (!IsParquetPath(path) || now.count() < tails_paused_until ||
	    read_aheads.RemembersFooterUnder(VersionKeyPrefix(path))) {
		return nullptr;
	}
	ObjectTail tail;
	if (!S3Tails::Fetch(path, opener, *stats, tail)) {
		if (++failed_tails >= MAX_FAILED_TAILS) {
			failed_tails = 0;
			tails_paused_until = now.count() + TAIL_PAUSE_SECONDS;
		}
		return nullptr;
	}
	failed_tails = 0;
	// In place of the HEAD's sample: the GET's first byte, then its transfer.
	state->cost_model.ObserveRoundTrip(tail.first_byte_seconds);
	state->cost_model.ObserveSubRead(tail.range.length, tail.seconds);
	read_aheads.RememberFooter(VersionKey(path, tail.version), tail.range, tail.bytes.data());
	if (query) {
		query->Store(path, tail.version);
	}
	return OpenAtKnownVersion(path, flags, opener, settings, tail.version);
}

unique_ptr<WrappedFileHandle> WrappedFileSystem::OpenAtKnownVersion(const string &path, duckdb::FileOpenFlags flags,
                                                                    optional_ptr<FileOpener> opener,
                                                                    const ParallelReadSettings &settings,
                                                                    const ObjectVersion &version) {
	auto context = FileOpener::TryGetClientContext(opener);
	auto open = DeferredOpen(OpenInfo(path, version), flags, context->shared_from_this(), version, false);
	auto handle = duckdb::make_uniq<WrappedFileHandle>(*this, path, flags, std::move(open), version, settings);
	auto &opened = *handle;
	handle->version_handle =
	    duckdb::make_uniq<LazyHandle>(LazyHandle::SharedOpener([this, &opened]() { return SharedHandleFor(opened); }));
	return handle;
}

duckdb::OpenFileInfo WrappedFileSystem::OpenInfo(const string &path, const ObjectVersion &version) {
	duckdb::OpenFileInfo info(path);
	info.extended_info = duckdb::make_shared_ptr<duckdb::ExtendedOpenFileInfo>();
	auto &options = info.extended_info->options;
	options["file_size"] = duckdb::Value::UBIGINT(version.size);
	options["last_modified"] = duckdb::Value::TIMESTAMP(version.last_modified);
	options["etag"] = duckdb::Value(version.etag);
	return info;
}

ObjectVersion WrappedFileSystem::VersionOf(WrappedFileHandle &handle) {
	if (handle.version_known) {
		return handle.version;
	}
	auto &primary = handle.Inner();
	ObjectVersion version;
	auto size = primary.file_system.GetFileSize(primary);
	version.size = size > 0 ? static_cast<idx_t>(size) : 0;
	version.last_modified = primary.file_system.GetLastModifiedTime(primary);
	version.etag = primary.file_system.GetVersionTag(primary);
	return version;
}

unique_ptr<FileHandle> WrappedFileSystem::OpenAtVersion(const duckdb::OpenFileInfo &info, duckdb::FileOpenFlags flags,
                                                        optional_ptr<FileOpener> opener, const ObjectVersion &expected,
                                                        bool internal) {
	unique_ptr<InternalOpener> internal_opener;
	if (internal && opener) {
		internal_opener = duckdb::make_uniq<InternalOpener>(*opener);
		opener = internal_opener.get();
	}
	auto handle = inner->OpenFile(info, flags, opener);
	if (!handle) {
		throw duckdb::IOException("httpfs2: '%s' no longer exists", RedactUrl(info.path));
	}
	stats->Add(Counter::INNER_OPENS);
	// httpfs checks every response against the ETag it is given; the azure extension does not, so at least the
	// version its own open saw must be the one httpfs2 serves.
	auto size = handle->file_system.GetFileSize(*handle);
	auto modified = handle->file_system.GetLastModifiedTime(*handle);
	if (size < 0 || static_cast<idx_t>(size) != expected.size || modified != expected.last_modified) {
		throw duckdb::IOException("httpfs2: '%s' changed while it was being read (%llu bytes modified at %s when "
		                          "opened, now %lld bytes modified at %s); run the query again",
		                          RedactUrl(info.path), expected.size,
		                          duckdb::Timestamp::ToString(expected.last_modified), size,
		                          duckdb::Timestamp::ToString(modified));
	}
	return handle;
}

LazyHandle::Opener WrappedFileSystem::DeferredOpen(duckdb::OpenFileInfo info, duckdb::FileOpenFlags flags,
                                                   duckdb::weak_ptr<duckdb::ClientContext> context,
                                                   ObjectVersion expected, bool internal) {
	return [this, info, flags, context, expected, internal]() {
		auto connection = context.lock();
		if (!connection) {
			throw duckdb::IOException("httpfs2: cannot open '%s': the connection that opened it is closed",
			                          RedactUrl(info.path));
		}
		return OpenAtVersion(info, flags, duckdb::ClientData::Get(*connection).file_opener.get(), expected, internal);
	};
}

unique_ptr<LazyHandle> WrappedFileSystem::HandleAtVersion(const string &path, const ObjectVersion &version,
                                                          duckdb::FileOpenFlags flags,
                                                          duckdb::weak_ptr<duckdb::ClientContext> context,
                                                          optional_ptr<FileOpener> opener) {
	auto info = OpenInfo(path, version);
	if (context.expired()) {
		// No connection to open it with later: open it now.
		return duckdb::make_uniq<LazyHandle>(OpenAtVersion(info, flags, opener, version, true));
	}
	return duckdb::make_uniq<LazyHandle>(DeferredOpen(std::move(info), flags, std::move(context), version, true));
}

const duckdb::FileOpenFlags WrappedFileSystem::PARALLEL_READ_FLAGS(duckdb::FileFlags::FILE_FLAGS_READ |
                                                                   duckdb::FileFlags::FILE_FLAGS_PARALLEL_ACCESS);

void WrappedFileSystem::PrepareSubReads(WrappedFileHandle &handle, optional_ptr<FileOpener> opener) {
	auto version = VersionOf(handle);
	if (version.size < handle.settings.min_bytes) {
		return;
	}
	handle.file_size = version.size;
	if (handle.flags.RequireParallelAccess() && !handle.settings.dedicated_handles) {
		handle.sub_read_handles =
		    duckdb::make_uniq<SubReadHandles>(duckdb::vector<unique_ptr<LazyHandle>>(), &handle.inner);
		return;
	}
	duckdb::vector<unique_ptr<LazyHandle>> owned;
	if (handle.version_known) {
		// The version's shared handle reads in parallel already; opening more would each cost a HEAD on Azure.
		handle.sub_read_handles = duckdb::make_uniq<SubReadHandles>(std::move(owned), handle.version_handle.get());
		return;
	}
	idx_t count = handle.settings.dedicated_handles ? handle.settings.max_fanout : 1;
	for (idx_t i = 0; i < count; i++) {
		owned.push_back(HandleAtVersion(handle.path, version, PARALLEL_READ_FLAGS, handle.client_context, opener));
	}
	handle.sub_read_handles = duckdb::make_uniq<SubReadHandles>(std::move(owned), nullptr);
}

} // namespace httpfs2
