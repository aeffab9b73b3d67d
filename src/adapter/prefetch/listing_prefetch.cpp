#include "adapter/prefetch/listing_prefetch.hpp"

#include <algorithm>

namespace httpfs2 {

constexpr size_t ListingMemory::MAX_FILES;
constexpr size_t ListingMemory::MAX_LISTINGS;
constexpr size_t ListingMemory::DEPTH;

void ListingMemory::Remember(std::vector<duckdb::OpenFileInfo> files) {
	if (files.size() < 2) {
		return;
	}
	std::lock_guard<std::mutex> guard(lock);
	listings.push_front(std::move(files));
	if (listings.size() > MAX_LISTINGS) {
		listings.pop_back();
	}
}

std::vector<duckdb::OpenFileInfo> ListingMemory::After(const std::string &path) {
	std::lock_guard<std::mutex> guard(lock);
	for (auto &files : listings) {
		auto found = std::find_if(files.begin(), files.end(),
		                          [&](const duckdb::OpenFileInfo &file) { return file.path == path; });
		if (found != files.end()) {
			auto first = found + 1;
			auto last = first + static_cast<std::ptrdiff_t>(std::min<size_t>(DEPTH, files.end() - first));
			return std::vector<duckdb::OpenFileInfo>(first, last);
		}
	}
	return {};
}

ListingPrefetch::ListingPrefetch(ExtensionState &state_p, RemoteStore &store_p, ReadAheadWiring &read_ahead_p)
    : state(state_p), store(store_p), read_ahead(read_ahead_p) {
}

//! The version a listing gave for `file` (size, ETag and modification time all), else false.
static bool ListedVersion(const duckdb::OpenFileInfo &file, ObjectVersion &version) {
	auto &options = file.extended_info->options;
	auto size = options.find("file_size");
	auto etag = options.find("etag");
	auto last_modified = options.find("last_modified");
	if (size == options.end() || etag == options.end() || last_modified == options.end()) {
		return false;
	}
	try {
		version.size = size->second.GetValue<uint64_t>();
		version.last_modified = last_modified->second.GetValue<duckdb::timestamp_t>();
		version.etag = etag->second.ToString();
		return true;
	} catch (std::exception &) {
		return false; // metadata of a type we do not know
	}
}

void ListingPrefetch::PrefetchFooters(const std::vector<duckdb::OpenFileInfo> &files, const IoSettings &settings,
                                      duckdb::optional_ptr<duckdb::FileOpener> opener) {
	ReadAheadTuning tuning = read_ahead.TuningFor(settings);
	if (!tuning.fetch_ahead) {
		return;
	}
	std::vector<std::function<void()>> lookups;
	for (auto &file : files) {
		if (!file.extended_info || !ReadAheadWiring::IsParquetPath(file.path)) {
			continue;
		}
		ObjectVersion version;
		if (ListedVersion(file, version)) {
			read_ahead.PrefetchFooter(file.path, version, tuning, opener);
		} else if (store.LooksUpVersions()) {
			// Azure listings carry no ETag: look the versions up, all at once, then fetch the footers.
			auto path = file.path;
			lookups.push_back([this, path, tuning, opener]() {
				ObjectVersion looked_up;
				if (store.LookUpVersion(path, opener, looked_up) == VersionLookup::FOUND) {
					read_ahead.PrefetchFooter(path, looked_up, tuning, opener);
				}
			});
		}
	}
	// Waits for them: they use this query's file opener, and the opens that follow find the versions looked up.
	state.io_pool.RunAll(std::move(lookups), ListingMemory::DEPTH);
}

void ListingPrefetch::Remember(std::vector<duckdb::OpenFileInfo> files, const IoSettings &settings,
                               duckdb::optional_ptr<duckdb::FileOpener> opener, bool scan_reads_them) {
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
	memory.Remember(std::move(files));
	PrefetchFooters(first, settings, opener);
}

void ListingPrefetch::Opened(const std::string &path, const IoSettings &settings,
                             duckdb::optional_ptr<duckdb::FileOpener> opener) {
	PrefetchFooters(memory.After(path), settings, opener);
}

} // namespace httpfs2
