#include "adapter/read/read_opener.hpp"

#include "adapter/stores/checked_range_reader.hpp"
#include "adapter/compat/duckdb_api.hpp"
#include "adapter/common/query_versions.hpp"
#include "adapter/stores/cache_use.hpp"
#include "core/cache/cached_read.hpp"
#include "core/cache/folder_proofs.hpp"
#include "core/formats/manifest_list.hpp"
#include "core/formats/parquet_layout.hpp"
#include "core/read_ahead/read_ahead_registry.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/main/client_context_state.hpp"

#include <chrono>
#include <unordered_set>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::idx_t;
using duckdb::optional_ptr;
using duckdb::unique_ptr;
using std::string;

namespace {
//! httpfs answers the later opens of a file within a query (the scan's after the bind's) from what its first open
//! learned, in microseconds and without a request: only a path's first open in a query is a round trip to time (timed
//! as well, those opens pulled the model's latency far under the network's: docs/benchmarks.md, "Figures").
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

//! The folders one query listed to prove its warm opens (ReadOpener::ProveFolder).
class QueryFolderProofs : public QueryState<QueryFolderProofs> {
public:
	static const char *StateName() {
		return "httpfs2_folder_proofs";
	}
	void Clear() {
		proofs.Clear();
	}
	FolderProofs proofs;
};

//! What the opener of a file said of it (OpenFileInfo::extended_info): a listing gives size, ETag and modification
//! time; a table format's catalog (Iceberg manifests, DuckLake, Delta's log) gives the size alone, or with an empty
//! ETag and a zero time.
struct GivenMetadata {
	bool size_given = false;
	uint64_t size = 0;
	bool etag_given = false;

	explicit GivenMetadata(const duckdb::OpenFileInfo &file) {
		if (!file.extended_info) {
			return;
		}
		auto &options = file.extended_info->options;
		auto size_option = options.find("file_size");
		auto etag_option = options.find("etag");
		try {
			if (size_option != options.end() && !size_option->second.IsNull()) {
				size = size_option->second.GetValue<uint64_t>();
				size_given = true;
			}
			etag_given = etag_option != options.end() && !etag_option->second.IsNull() &&
			             !etag_option->second.ToString().empty();
		} catch (std::exception &) {
			size_given = false; // metadata of a type we do not know: the open goes to the wrapped filesystem
		}
	}
	//! The size alone: the file's version is not known until the store answers for it.
	bool FromCatalog() const {
		return size_given && !etag_given;
	}
};
} // namespace

ReadOpener::ReadOpener(duckdb::FileSystem &wrapper_p, duckdb::FileSystem &inner_p, ExtensionState &state_p,
                       IoStats &stats_p, RemoteStore &store_p, InnerOpens &opens_p, ReadAheadWiring &read_ahead_p,
                       PrefetchEngine &prefetch_p)
    : wrapper(wrapper_p), inner(inner_p), state(state_p), stats(stats_p), store(store_p), opens(opens_p),
      read_ahead(read_ahead_p), prefetch(prefetch_p) {
}

unique_ptr<ReadHandle> ReadOpener::Open(const duckdb::OpenFileInfo &file, duckdb::FileOpenFlags flags,
                                        optional_ptr<FileOpener> opener, const IoSettings &settings, bool fast) {
	unique_ptr<ReadHandle> handle;
	GivenMetadata given(file);
	// A version the cache learnt within the trust window the user chose stands in for the request that proves it.
	bool trusted = false;
	if (fast && (!given.size_given || given.FromCatalog())) {
		handle = OpenTrusted(file.path, flags, opener, settings, given.FromCatalog() ? given.size : 0);
		trusted = handle != nullptr;
	}
	if (!handle && fast && store.LooksUpVersions()) {
		handle = OpenLookedUp(file.path, flags, opener, settings);
	}
	// A listed file opens with no request at all; a file opened without metadata, or with a catalog's size alone, opens
	// from its tail: one GET that gives the version and the footer, in place of the HEAD or of the footer's read.
	if (!handle && fast && store.OpensFromTail() && settings.ReadAheadActive() &&
	    (!given.size_given || given.FromCatalog())) {
		handle = OpenFromTail(file.path, flags, opener, settings, given.FromCatalog() ? given.size : 0);
	}
	if (!handle) {
		handle = OpenInner(file, flags, opener, settings, given.size_given);
		if (!handle) {
			return nullptr;
		}
	}
	stats.Add(Counter::FILES_OPENED);
	if (!fast) {
		return handle;
	}
	auto context = FileOpener::TryGetClientContext(opener);
	if (context) {
		handle->client_context = context->shared_from_this();
	}
	auto version = InnerOpens::VersionOf(*handle);
	if (handle->whole_at_open) {
		// Read whole from its first read (OpenFromTail): no sub-reads, range GETs or read-ahead.
		PrepareWholeObject(*handle, version);
		return handle;
	}
	// For when the store's range answers are declined for other bytes than asked (ReadFallback::WHOLE_OBJECT), and
	// for a server that ignores ranges where the wrapped filesystem does not fall back to a full download itself.
	PrepareWholeObject(*handle, version);
	PrepareSubReads(*handle, opener);
	if ((store.ChecksRanges() && (handle->CanSplit() || settings.ReadAheadActive())) ||
	    (settings.cache_enabled && store.CachesBlocks())) {
		// A version the store gave with an exact range (a tail GET) says the store serves ranges.
		handle->range_reader = store.RangeReaderFor(handle->path, version, opener,
		                                            handle->version_known && store.VersionsConfirmRanges() && !trusted);
		if (handle->range_reader) {
			AttachBlockCache(state, stats, *handle->range_reader, handle->path, settings, opener,
			                 trusted ? nullptr : &version);
		}
	}
	if (!handle->range_reader && !version.NamesBytes()) {
		// Pieces and fetches would run on httpfs's handles, which check an answer's ETag only where both sides have
		// one: without a strong ETag, pieces of two versions could not be told apart. Read as httpfs alone reads it.
		handle->sub_read_handles.reset();
		return handle;
	}
	if (settings.ReadAheadActive()) {
		if (handle->version_known) {
			// Attached at the first read: a query served by DuckDB's cache makes no request for it.
			handle->read_ahead_deferred = true;
			handle->file_size = handle->version.size;
		} else {
			read_ahead.Attach(*handle, opener);
		}
		prefetch.Opened(file.path, settings, opener);
	}
	return handle;
}

bool ReadOpener::TrustedVersion(const string &path, optional_ptr<FileOpener> opener, const IoSettings &settings,
                                ObjectVersion &version) {
	return store.CachesBlocks() && FileOpener::TryGetClientContext(opener) &&
	       FindTrustedVersion(state, settings, path, version);
}

unique_ptr<ReadHandle> ReadOpener::OpenTrusted(const string &path, duckdb::FileOpenFlags flags,
                                               optional_ptr<FileOpener> opener, const IoSettings &settings,
                                               uint64_t catalog_size) {
	ObjectVersion version;
	if (!TrustedVersion(path, opener, settings, version) || (catalog_size != 0 && version.size != catalog_size)) {
		return nullptr; // the open proves the version as without a trust window (and records it)
	}
	stats.Add(Counter::CACHE_VERSIONS_TRUSTED);
	return OpenAtKnownVersion(path, flags, opener, settings, version);
}

void ReadOpener::CacheTail(const string &path, const ObjectTail &tail, const IoSettings &settings,
                           optional_ptr<FileOpener> opener) {
	string error;
	CacheKey key;
	if (!settings.cache_enabled || !store.CachesBlocks() ||
	    !CheckedRangeReader::CacheKeyFor(path, CheckedRangeReader::ExpectedOf(tail.version), key)) {
		return;
	}
	auto cache = state.CacheFor(settings, error);
	if (!cache) {
		return;
	}
	// A refusal (writes failing) is the range reader's to report, at this file's first read through the cache.
	FillBlockCache(*cache, key, tail.version.size, tail.range, tail.bytes.data());
	FillTailPiece(*cache, key, tail.version.size, ParquetFooter::DuckDBTailReadSize(tail.version.size), tail.range,
	              tail.bytes.data());
	auto first = tail.range.offset / BlockCache::BLOCK_SIZE;
	if (tail.range.offset % BlockCache::BLOCK_SIZE == 0 || cache->Holds(key, first)) {
		return;
	}
	auto reader = store.RangeReaderFor(path, tail.version, opener, true);
	if (!reader) {
		return;
	}
	AttachBlockCache(state, stats, *reader, path, settings, opener, nullptr);
	FillInBackground(state.io_pool, reader, ByteRange {first * BlockCache::BLOCK_SIZE, 1}, tail.version.size);
}

unique_ptr<ReadHandle> ReadOpener::OpenInner(const duckdb::OpenFileInfo &file, duckdb::FileOpenFlags flags,
                                             optional_ptr<FileOpener> opener, const IoSettings &settings,
                                             bool size_given) {
	auto start = std::chrono::steady_clock::now();
	auto inner_handle = inner.OpenFile(file, flags, opener);
	if (!inner_handle) {
		return nullptr;
	}
	stats.Add(Counter::INNER_OPENS);
	// Without listing metadata a first open made a metadata request (HEAD): a clean first-byte latency sample.
	if (!size_given && flags.OpenForReading() && FirstOpenInQuery(file.path, opener)) {
		state.cost_model.ObserveRoundTrip(
		    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
	}
	return duckdb::make_uniq<ReadHandle>(wrapper, std::move(inner_handle), settings);
}

unique_ptr<ReadHandle> ReadOpener::OpenLookedUp(const string &path, duckdb::FileOpenFlags flags,
                                                optional_ptr<FileOpener> opener, const IoSettings &settings) {
	ObjectVersion version;
	if (!FileOpener::TryGetClientContext(opener) ||
	    store.LookUpVersion(path, opener, version) != VersionLookup::FOUND) {
		return nullptr;
	}
	return OpenAtKnownVersion(path, flags, opener, settings, version);
}

unique_ptr<ReadHandle> ReadOpener::OpenFromTail(const string &path, duckdb::FileOpenFlags flags,
                                                optional_ptr<FileOpener> opener, const IoSettings &settings,
                                                uint64_t catalog_size) {
	// A later open in the query of a file opened from its tail: at the version the tail gave, as httpfs opens it again
	// from what its first open learnt.
	auto query = QueryVersions::Of(opener);
	// A warm open: its folder's listing proves it, with the query's other files there. Its footer is held, as are most
	// likely the footers of the files listed with it: no predictor of them is asked to fetch ahead.
	bool proven = query && catalog_size == 0 && IsParquetPath(path) && ProveFolder(path, opener, settings, *query);
	if (!proven) {
		// A Parquet file opening: what its predictors say comes next (an Iceberg scan's next data files; a folder's
		// next files, listing the folder first when the query opens its files in order: the listed versions are the
		// query's).
		prefetch.Opening(path, catalog_size != 0, settings, opener);
	}
	// A path fetched ahead of its open (an Iceberg manifest whole, a data file's tail: PrefetchEngine) is opened at
	// the version the fetch gave, its bytes remembered for its reads; so is a path whose folder's listing gave it.
	auto context = FileOpener::TryGetClientContext(opener);
	bool interrupted = false; // while waiting for a fetch of the path
	auto give_up = [&]() {
		return interrupted = context && compat::Interrupted(*context);
	};
	ObjectVersion known;
	bool found = query && query->Find(path, known, give_up);
	if (interrupted) {
		throw duckdb::InterruptException();
	}
	if (found) {
		// Taken in any case: the budget they are charged to is released with `fetched`.
		auto fetched = query->TakeFetched(path);
		if (catalog_size != 0 && known.size != catalog_size) {
			return nullptr;
		}
		if (fetched) {
			if (fetched->names_version) {
				CacheTail(path, *fetched, settings, opener);
			}
			read_ahead.RememberTail(path, *fetched, opener); // the registry copies them
		}
		if (proven) {
			stats.Add(Counter::CACHE_VERSIONS_LISTED);
		}
		return OpenAtKnownVersion(path, flags, opener, settings, known);
	}
	// Parquet files (DuckDB reads their end first), and Iceberg manifest lists (read whole; a tail GET of one is all
	// of it or is completed from its start, and names the manifests to fetch next). A Parquet file opened without
	// metadata is opened so only at its first open in a query when no footer of it is remembered (otherwise a HEAD is
	// all the open waits for); a catalog's file and a manifest list always are (its GET takes the HEAD's round trip).
	// Any other file opened without metadata opens from a small tail where the host reads pieces of it at once (DuckDB
	// 2.0's async reads): the GET stands in for the HEAD and shows that the store serves ranges of the object, so its
	// pieces need not wait for one of them to show it (CheckedRangeReader::PROBE_BYTES). Not with the block cache on,
	// whose blocks its reads fill whole.
	bool manifest_list = ManifestList::IsManifestList(path);
	bool parquet = IsParquetPath(path);
	bool other =
	    !parquet && !manifest_list && catalog_size == 0 && settings.host_reads.streams > 1 && !settings.cache_enabled;
	ObjectTail tail;
	if ((!parquet && !manifest_list && !other) ||
	    (catalog_size == 0 && parquet && read_ahead.RemembersFooterOf(path)) ||
	    !store.FetchTail(path, opener, other ? RemoteStore::OTHER_TAIL_BYTES : RemoteStore::FOOTER_TAIL_BYTES, tail)) {
		return nullptr;
	}
	if (catalog_size != 0 && tail.version.size != catalog_size) {
		return nullptr; // not the object the catalog names: the wrapped filesystem opens it as the catalog says
	}
	if (!tail.names_version) {
		// Its bytes would be joined to later answers that could be of another version looking the same: a small object
		// is read whole from its first read (one GET, one version), a larger one as httpfs alone reads it.
		stats.Add(Counter::RANGE_ANSWERS_UNPROVEN);
		if (tail.version.size > CheckedRangeReader::MAX_WHOLE_OBJECT_BYTES) {
			return nullptr;
		}
		auto handle = OpenAtKnownVersion(path, flags, opener, settings, tail.version);
		handle->whole_at_open = true;
		return handle;
	}
	// In place of the HEAD's sample: the GET's first byte, then its transfer.
	state.cost_model.ObserveRoundTrip(tail.first_byte_seconds);
	state.cost_model.ObserveSubRead(tail.range.length, tail.seconds);
	if (manifest_list && tail.range.offset != 0) {
		CompleteManifestList(path, opener, tail);
	}
	CacheTail(path, tail, settings, opener);
	read_ahead.RememberTail(path, tail, opener);
	if (query) {
		query->Store(path, tail.version);
	}
	if (manifest_list && tail.range.offset == 0) {
		prefetch.ManifestListRead(path, tail.bytes, settings, opener);
	}
	return OpenAtKnownVersion(path, flags, opener, settings, tail.version);
}

bool ReadOpener::ProveFolder(const string &path, optional_ptr<FileOpener> opener, const IoSettings &settings,
                             QueryVersions &query) {
	auto folder = FolderProofs::FolderOf(path);
	{
		MutexLock guard(wide_lock);
		if (wide_folders.count(folder)) {
			return false;
		}
	}
	auto proofs = QueryFolderProofs::Of(opener);
	if (!proofs || !store.ListsFolders() || !store.CachesBlocks() || !RecordedAndTailHeld(state, settings, path)) {
		return false;
	}
	auto list = [&](std::unordered_set<string> &proved) {
		std::vector<ListedFile> listed;
		bool truncated = false;
		if (!store.ListFolder(path, opener, FOLDER_PROOF_KEYS, listed, truncated)) {
			return false;
		}
		for (auto &file : listed) {
			// As a tail's version must: one that names the bytes (a block cache key of an ETag the listing and the
			// GETs give alike).
			if (file.version.IsContentHash()) {
				query.Learn(file.path, file.version);
				proved.insert(file.path);
			}
		}
		if (truncated && !proved.count(path)) {
			MutexLock guard(wide_lock);
			wide_folders.insert(folder);
		}
		return true;
	};
	auto context = FileOpener::TryGetClientContext(opener);
	return proofs->proofs.Proves(path, query.Knows(path) ? FolderProofs::List() : FolderProofs::List(list),
	                             [&]() { return context && compat::Interrupted(*context); });
}

void ReadOpener::CompleteManifestList(const string &path, optional_ptr<FileOpener> opener, ObjectTail &tail) {
	if (tail.version.size > ReadAheadRegistry::MAX_FOOTER_BYTES) {
		return;
	}
	auto reader = store.RangeReaderFor(path, tail.version, opener, true);
	if (!reader) {
		return;
	}
	string whole(tail.range.offset, '\0');
	try {
		// A checked read: an answer of another version than the tail's is an error, never joined to the tail.
		reader->Read(ByteRange {0, tail.range.offset}, &whole[0]);
	} catch (std::exception &) {
		return; // the iceberg extension reads the list through httpfs, and meets any error there
	}
	whole += tail.bytes;
	tail.bytes = std::move(whole);
	tail.range = ByteRange {0, tail.version.size};
}

unique_ptr<ReadHandle> ReadOpener::OpenAtKnownVersion(const string &path, duckdb::FileOpenFlags flags,
                                                      optional_ptr<FileOpener> opener, const IoSettings &settings,
                                                      const ObjectVersion &version) {
	auto context = FileOpener::TryGetClientContext(opener);
	auto open = opens.Deferred(InnerOpens::OpenInfo(path, version), flags, context->shared_from_this(), version,
	                           InnerOpener::CONNECTION);
	auto handle = duckdb::make_uniq<ReadHandle>(wrapper, path, flags, std::move(open), version, settings);
	auto &opened = *handle;
	handle->version_handle =
	    duckdb::make_uniq<LazyHandle>(LazyHandle::SharedOpener([this, &opened]() { return opens.SharedFor(opened); }));
	return handle;
}

void ReadOpener::PrepareWholeObject(ReadHandle &handle, const ObjectVersion &version) {
	if (handle.client_context.expired()) {
		return; // no connection to open it with later: read as httpfs alone reads it
	}
	handle.file_size = version.size;
	handle.whole_object = duckdb::make_uniq<LazyHandle>(
	    opens.Deferred(InnerOpens::OpenInfo(handle.path, version), duckdb::FileFlags::FILE_FLAGS_READ,
	                   handle.client_context, version, InnerOpener::WHOLE_OBJECT));
}

void ReadOpener::PrepareSubReads(ReadHandle &handle, optional_ptr<FileOpener> opener) {
	auto version = InnerOpens::VersionOf(handle);
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
		owned.push_back(opens.Lazy(handle.path, version, handle.client_context, opener));
	}
	handle.sub_read_handles = duckdb::make_uniq<SubReadHandles>(std::move(owned), nullptr);
}

} // namespace httpfs2
