#include "adapter/prefetch/prefetch_engine.hpp"

#include "adapter/stores/checked_range_reader.hpp"
#include "adapter/common/query_versions.hpp"
#include "adapter/common/session_settings.hpp"
#include "adapter/compat/duckdb_api.hpp"
#include "adapter/stores/cache_use.hpp"
#include "core/formats/manifest_list.hpp"
#include "core/formats/parquet_layout.hpp"
#include "core/prefetch/prefetch_executor.hpp"
#include "miniz.hpp"

#include <cstring>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;

namespace {
//! A manifest list inflated larger than this is not read (a list names a manifest in a few hundred bytes).
constexpr size_t MAX_INFLATED_BYTES = 64 * 1024 * 1024;

//! Avro's "deflate" codec: a raw deflate stream (no zlib header), inflated with DuckDB's miniz.
bool InflateRaw(const char *data, size_t size, std::string &out) {
	duckdb_miniz::mz_stream stream;
	std::memset(&stream, 0, sizeof(stream));
	if (duckdb_miniz::mz_inflateInit2(&stream, -MZ_DEFAULT_WINDOW_BITS) != duckdb_miniz::MZ_OK) {
		return false;
	}
	stream.next_in = reinterpret_cast<const unsigned char *>(data);
	stream.avail_in = static_cast<unsigned int>(size);
	char chunk[64 * 1024];
	int status;
	do {
		stream.next_out = reinterpret_cast<unsigned char *>(chunk);
		stream.avail_out = sizeof(chunk);
		status = duckdb_miniz::mz_inflate(&stream, duckdb_miniz::MZ_NO_FLUSH);
		if ((status != duckdb_miniz::MZ_OK && status != duckdb_miniz::MZ_STREAM_END) ||
		    out.size() > MAX_INFLATED_BYTES) {
			duckdb_miniz::mz_inflateEnd(&stream);
			return false;
		}
		out.append(chunk, sizeof(chunk) - stream.avail_out);
	} while (status != duckdb_miniz::MZ_STREAM_END);
	duckdb_miniz::mz_inflateEnd(&stream);
	return true;
}

using Fetch = AheadFetch<duckdb::shared_ptr<QueryVersions>, ObjectTail>;
} // namespace

namespace {
//! The file a listing names, with the version the listing gave when it gave size, ETag and modification time all.
ListedPath FromListing(const duckdb::OpenFileInfo &file) {
	ListedPath listed;
	listed.path = file.path;
	if (!file.extended_info) {
		return listed;
	}
	auto &options = file.extended_info->options;
	auto size = options.find("file_size");
	auto etag = options.find("etag");
	auto last_modified = options.find("last_modified");
	if (size == options.end() || etag == options.end() || last_modified == options.end()) {
		return listed;
	}
	try {
		listed.version.size = size->second.GetValue<uint64_t>();
		listed.version.last_modified_us = last_modified->second.GetValue<duckdb::timestamp_t>().value;
		listed.version.etag = etag->second.ToString();
		listed.version_known = true;
	} catch (std::exception &) {
		listed.version_known = false; // metadata of a type we do not know
	}
	return listed;
}
} // namespace

PrefetchEngine::PrefetchEngine(ExtensionState &state_p, IoStats &stats_p, RemoteStore &store_p,
                               ReadAheadWiring &read_ahead_p)
    : state(state_p), stats(stats_p), store(store_p), read_ahead(read_ahead_p) {
}

void PrefetchEngine::Listed(std::vector<duckdb::OpenFileInfo> files, const IoSettings &settings,
                            optional_ptr<FileOpener> opener, bool scan_reads_them) {
	if (!settings.ReadAheadActive()) {
		return;
	}
	std::vector<ListedPath> listed;
	listed.reserve(files.size());
	for (auto &file : files) {
		listed.push_back(FromListing(file));
	}
	// A listing alone (glob(), a count of files) opens no file and fetches nothing; the opens of listed files fetch
	// the footers of those after them. A multi-file reader's listing (read_parquet's) is read right after.
	Execute(listings.Listed(std::move(listed), scan_reads_them), read_ahead.TuningFor(settings), opener);
}

void PrefetchEngine::Opened(const string &path, const IoSettings &settings, optional_ptr<FileOpener> opener) {
	Execute(listings.Opened(path), read_ahead.TuningFor(settings), opener, path);
}

void PrefetchEngine::ReadWhole(const string &path, const IoSettings &settings, optional_ptr<FileOpener> opener) {
	Execute(listings.ReadWhole(path), read_ahead.TuningFor(settings), opener);
}

void PrefetchEngine::Opening(const string &path, bool from_catalog, const IoSettings &settings,
                             optional_ptr<FileOpener> opener) {
	if (!IsParquetPath(path)) {
		return;
	}
	auto tuning = read_ahead.TuningFor(settings);
	auto predictors = QueryPredictors::Of(opener);
	if (!tuning.fetch_ahead || !predictors) {
		return;
	}
	if (from_catalog) {
		Execute(predictors->data_files.Opened(path), tuning, opener, path);
	} else if (store.ListsFolders()) {
		ListFolder(path, *predictors, opener);
		auto context = FileOpener::TryGetClientContext(opener);
		predictors->folders.AwaitListing(path, [&]() { return context && compat::Interrupted(*context); });
		Execute(predictors->folders.Ahead(path), tuning, opener, path);
	}
}

void PrefetchEngine::ManifestListRead(const string &path, const string &bytes, const IoSettings &settings,
                                      optional_ptr<FileOpener> opener) {
	auto tuning = read_ahead.TuningFor(settings);
	auto predictors = QueryPredictors::Of(opener);
	if (!tuning.fetch_ahead || !predictors) {
		return;
	}
	auto manifests = ManifestList::Read(bytes, ManifestList::SchemeAndAuthority(path), InflateRaw);
	Execute(predictors->data_files.ListRead(manifests), tuning, opener);
}

void PrefetchEngine::ListFolder(const string &path, QueryPredictors &predictors, optional_ptr<FileOpener> opener) {
	auto query = QueryVersions::Of(opener);
	if (!query) {
		return;
	}
	auto after = predictors.folders.ListAfter(path);
	if (after.empty()) {
		return;
	}
	// The opens waiting for this listing go on however it ends, once what it gave is the query's.
	struct Done {
		FolderPredictor &folders;
		const string &after;
		~Done() {
			folders.ListingDone(after);
		}
	} done {predictors.folders, after};
	std::vector<ListedFile> listed;
	bool truncated = false;
	if (!store.ListAfter(after, opener, listed, truncated)) {
		listed.clear();
		truncated = false;
	}
	// Only the files a scan of Parquet files opens, at versions that name their bytes (as a tail's must).
	std::vector<ListedPath> files;
	for (auto &file : listed) {
		if (IsParquetPath(file.path) && file.version.IsContentHash()) {
			files.push_back(ListedPath {file.path, true, ToKnown(file.version)});
		}
	}
	if (predictors.folders.Listed(after, path, files, truncated)) {
		for (auto &file : files) {
			query->Learn(file.path, FromKnown(file.version));
		}
	}
}

void PrefetchEngine::Execute(std::vector<OpenPrediction> predictions, const ReadAheadTuning &tuning,
                             optional_ptr<FileOpener> opener, const string &opening) {
	auto predictors = QueryPredictors::Of(opener);
	auto gated =
	    GatePredictions(std::move(predictions), tuning.fetch_ahead, predictors ? &predictors->files : nullptr, opening);
	if (gated.Empty()) {
		return;
	}
	for (auto &prediction : gated.for_open) {
		FetchForOpen(prediction, opener);
	}
	FetchFooters(gated.footers, tuning, opener);
	for (auto &contents : gated.contents) {
		read_ahead.PrefetchContents(contents.path, FromKnown(contents.version), tuning, opener);
	}
}

void PrefetchEngine::FetchFooters(const std::vector<OpenPrediction> &footers, const ReadAheadTuning &tuning,
                                  optional_ptr<FileOpener> opener) {
	std::vector<std::function<void()>> lookups;
	for (auto &footer : footers) {
		if (footer.version_known) {
			read_ahead.PrefetchFooter(footer.path, FromKnown(footer.version), tuning, opener);
		} else if (store.LooksUpVersions()) {
			// Azure listings carry no ETag: look the versions up, all at once, then fetch the footers.
			auto path = footer.path;
			lookups.push_back([this, path, tuning, opener]() {
				ObjectVersion looked_up;
				if (store.LookUpVersion(path, opener, looked_up) == VersionLookup::FOUND) {
					read_ahead.PrefetchFooter(path, looked_up, tuning, opener);
				}
			});
		}
	}
	// Waits for them: they use this query's file opener, and the opens that follow find the versions looked up.
	state.io_pool.RunAll(std::move(lookups), PrefetchLimits::FOOTERS_AHEAD);
}

void PrefetchEngine::FetchForOpen(const OpenPrediction &prediction, optional_ptr<FileOpener> opener) {
	auto query = QueryVersions::Of(opener);
	auto predictors = QueryPredictors::Of(opener);
	if (!query || !predictors) {
		return;
	}
	bool whole = prediction.bytes == PredictedBytes::WHOLE;
	if (!whole && store.CachesBlocks() &&
	    TrustedAndTailHeld(state, SettingsFor(opener, state).Effective(), prediction.path)) {
		return; // its open is trusted and reads its footer from the cache: no request to make ahead of it
	}
	TailSend send;
	uint64_t bytes = RemoteStore::FOOTER_TAIL_BYTES;
	if (whole) {
		ObjectVersion listed;
		listed.size = bytes = prediction.length;
		// The list's own answer was an exact range from the same store: no probe first.
		auto reader = store.RangeReaderFor(prediction.path, listed, opener, true);
		if (reader) {
			auto length = prediction.length;
			send = [reader, length](ObjectTail &fetched) {
				fetched.bytes.resize(length);
				reader->Read(ByteRange {0, length}, &fetched.bytes[0]);
				fetched.range = ByteRange {0, length};
				fetched.version = reader->AnsweredVersion();
				// Bytes served to later opens must be named by their content, or by no ETag at all (then the
				// query's alone).
				fetched.names_version = fetched.version.etag.empty() || fetched.version.IsContentHash();
				return true;
			};
		}
	} else {
		send = store.TailFetcherFor(prediction.path, opener);
	}
	if (!send) {
		return;
	}
	auto expected = query->Expect(prediction.path);
	if (expected == 0) {
		return;
	}
	auto fetch = std::make_shared<Fetch>(query, prediction.path, expected);
	auto fetched = ReserveAhead<ObjectTail>(state.read_ahead_budget, bytes);
	if (!fetched) {
		stats.Add(Counter::READ_AHEAD_SKIPPED_BUDGET);
		return; // left to its open; the Fetch abandons it
	}
	auto generation = predictors->data_files.Generation();
	auto &counted = stats;
	state.io_pool.Submit([fetch, send, fetched, predictors, generation, whole, &counted]() {
		std::function<void(const ObjectTail &)> parse;
		if (whole) {
			// Before the delivery: the scan opens the manifest's data files once its open read it, and their opens
			// must find them in the order.
			parse = [&](const ObjectTail &manifest) {
				predictors->data_files.Parsed(generation, fetch->Path(),
				                              ManifestList::DataFiles(manifest.bytes,
				                                                      ManifestList::SchemeAndAuthority(fetch->Path()),
				                                                      InflateRaw));
			};
		}
		// Counted as in-file read-ahead counts its fetches: each request sent, when it ended.
		RunAheadFetch(*fetch, send, fetched, counted, parse,
		              whole ? Counter::MANIFESTS_FETCHED_AHEAD : Counter::TAILS_FETCHED_AHEAD);
	});
}

} // namespace httpfs2
