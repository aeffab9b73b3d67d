#include "adapter/prefetch/manifest_prefetch.hpp"

#include "adapter/stores/s3_tails.hpp"
#include "core/formats/manifest_list.hpp"
#include "duckdb/main/client_context.hpp"
#include "miniz.hpp"

#include <cstring>

namespace httpfs2 {

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

//! One fetch ahead of an open: abandoned (its open goes on without it) unless it delivered, however its task ends.
struct Fetch {
	Fetch(duckdb::shared_ptr<QueryVersions> query_p, std::string path_p, uint64_t expected_p)
	    : query(std::move(query_p)), path(std::move(path_p)), expected(expected_p) {
	}
	~Fetch() {
		if (!delivered) {
			query->Abandon(path, expected);
		}
	}
	//! Whether to send the request: false once the path's open took it over (it was still queued).
	bool Start() {
		return query->Start(path, expected);
	}
	void Deliver(std::shared_ptr<ObjectTail> fetched) {
		query->Deliver(path, std::move(fetched), expected);
		delivered = true;
	}

	duckdb::shared_ptr<QueryVersions> query;
	std::string path;
	uint64_t expected;
	bool delivered = false;
};

//! Room for `bytes` fetched ahead, charged to `budget` until the last owner lets go; null when the budget is full.
std::shared_ptr<ObjectTail> Reserve(MemoryBudget &budget, uint64_t bytes) {
	if (!budget.TryReserve(bytes)) {
		return nullptr;
	}
	return std::shared_ptr<ObjectTail>(new ObjectTail(), [&budget, bytes](ObjectTail *freed) {
		delete freed;
		budget.Release(bytes);
	});
}
} // namespace

constexpr size_t DataFileOrder::WINDOW;
constexpr size_t DataFileOrder::MAX_FILES;

void DataFileOrder::Clear() {
	MutexLock guard(lock);
	generation++;
	manifests.clear();
	manifest_index.clear();
	positions.clear();
	opened.clear();
	fetched_ahead.clear();
}

uint64_t DataFileOrder::Generation() {
	MutexLock guard(lock);
	return generation;
}

void DataFileOrder::Listed(const std::vector<std::string> &list) {
	MutexLock guard(lock);
	bool first = true;
	for (auto &path : list) {
		if (manifest_index.emplace(path, manifests.size()).second) {
			Manifest manifest;
			manifest.path = path;
			manifest.first_of_list = first;
			manifests.push_back(std::move(manifest));
			first = false;
		}
	}
}

void DataFileOrder::Parsed(uint64_t of_generation, const std::string &manifest, std::vector<std::string> data_files) {
	MutexLock guard(lock);
	auto found = manifest_index.find(manifest);
	if (of_generation != generation || found == manifest_index.end() || manifests[found->second].parsed ||
	    positions.size() + data_files.size() > MAX_FILES) {
		return;
	}
	for (size_t entry = 0; entry < data_files.size(); entry++) {
		positions.emplace(data_files[entry], Position {found->second, entry}); // a file named twice: its first place
	}
	manifests[found->second].data_files = std::move(data_files);
	manifests[found->second].parsed = true;
}

bool DataFileOrder::Next(Position &at) {
	if (at.entry + 1 < manifests[at.manifest].data_files.size()) {
		at.entry++;
		return true;
	}
	for (auto index = at.manifest + 1; index < manifests.size() && !manifests[index].first_of_list; index++) {
		if (!manifests[index].parsed) {
			return false; // not known yet
		}
		if (!manifests[index].data_files.empty()) {
			at = Position {index, 0};
			return true;
		}
	}
	return false;
}

DataFileOrder::Before DataFileOrder::Previous(Position &at) {
	if (at.entry > 0) {
		at.entry--;
		return Before::FILE;
	}
	for (auto index = at.manifest; !manifests[index].first_of_list;) {
		index--;
		if (!manifests[index].parsed) {
			return Before::UNKNOWN;
		}
		if (!manifests[index].data_files.empty()) {
			at = Position {index, manifests[index].data_files.size() - 1};
			return Before::FILE;
		}
	}
	return Before::NOTHING;
}

std::vector<std::string> DataFileOrder::Opened(const std::string &path) {
	MutexLock guard(lock);
	// Noted even when no manifest parsed so far names it: the file after it follows it once one does.
	bool first_open = opened.insert(path).second;
	auto found = positions.find(path);
	if (found == positions.end() || !first_open) {
		return {}; // named by no manifest (yet), or opened again in the query (its first open looked ahead)
	}
	auto previous = found->second;
	auto before = Previous(previous);
	bool follows = fetched_ahead.count(path) != 0 || before == Before::NOTHING ||
	               (before == Before::FILE && opened.count(manifests[previous.manifest].data_files[previous.entry]));
	std::vector<std::string> ahead;
	auto next = found->second;
	for (size_t step = 0; follows && step < WINDOW && Next(next); step++) {
		auto &file = manifests[next.manifest].data_files[next.entry];
		if (opened.count(file) == 0 && fetched_ahead.insert(file).second) {
			ahead.push_back(file);
		}
	}
	return ahead;
}

void ManifestPrefetch::Start(const std::string &list_path, const std::string &list_bytes, RemoteStore &store,
                             IoPool &pool, MemoryBudget &budget, IoStats &stats,
                             duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto query = QueryVersions::Of(opener);
	auto order = DataFileOrder::Of(opener);
	if (!query || !order) {
		return;
	}
	auto prefix = ManifestList::SchemeAndAuthority(list_path);
	auto manifests = ManifestList::Read(list_bytes, prefix, InflateRaw);
	std::vector<std::string> in_order;
	for (auto &manifest : manifests) {
		in_order.push_back(manifest.path);
	}
	order->Listed(in_order);
	auto generation = order->Generation();
	for (auto &manifest : manifests) {
		if (manifest.length > MAX_MANIFEST_BYTES) {
			continue;
		}
		ObjectVersion listed;
		listed.size = manifest.length;
		// The list's own answer was an exact range from the same store: no probe first.
		auto reader = store.RangeReaderFor(manifest.path, listed, opener, true);
		if (!reader) {
			continue;
		}
		auto expected = query->Expect(manifest.path);
		if (expected == 0) {
			continue;
		}
		auto fetch = std::make_shared<Fetch>(query, manifest.path, expected);
		auto length = manifest.length;
		auto fetched = Reserve(budget, length);
		if (!fetched) {
			continue; // left to its open; the Fetch abandons it
		}
		stats.Add(Counter::READ_AHEAD_REQUESTS);
		stats.Add(Counter::READ_AHEAD_BYTES, length);
		pool.Submit([fetch, reader, fetched, order, generation, prefix, &stats, length]() {
			if (!fetch->Start()) {
				return;
			}
			try {
				fetched->bytes.resize(length);
				reader->Read(ByteRange {0, length}, &fetched->bytes[0]);
				fetched->range = ByteRange {0, length};
				fetched->version = reader->AnsweredVersion();
				// Remembered bytes must be named by their content, or by no ETag at all (then the query's alone).
				if (!fetched->version.etag.empty() && !fetched->version.IsContentHash()) {
					return;
				}
				// Before the delivery: the scan opens the manifest's data files once its open read it, and their
				// opens must find them in the order.
				order->Parsed(generation, fetch->path, ManifestList::DataFiles(fetched->bytes, prefix, InflateRaw));
				fetch->Deliver(fetched);
				stats.Add(Counter::MANIFESTS_FETCHED_AHEAD);
			} catch (std::exception &) {
				// The open reads the manifest itself, and meets any error there as it would without httpfs2.
			}
		});
	}
}

void ManifestPrefetch::DataFileOpened(const std::string &path, RemoteStore &store, IoPool &pool, MemoryBudget &budget,
                                      IoStats &stats, duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto query = QueryVersions::Of(opener);
	auto order = DataFileOrder::Of(opener);
	if (!query || !order) {
		return;
	}
	for (auto &ahead : order->Opened(path)) {
		auto expected = query->Expect(ahead);
		if (expected == 0) {
			continue;
		}
		auto fetch = std::make_shared<Fetch>(query, ahead, expected);
		auto send = store.TailFetcherFor(ahead, opener);
		auto fetched = send ? Reserve(budget, S3Tails::TAIL_BYTES) : nullptr;
		if (!fetched) {
			continue; // left to its open; the Fetch abandons it
		}
		pool.Submit([fetch, send, fetched, &stats]() {
			if (!fetch->Start()) {
				return;
			}
			try {
				if (send(*fetched) && fetched->names_version) {
					fetch->Deliver(fetched);
					stats.Add(Counter::TAILS_FETCHED_AHEAD);
				}
			} catch (std::exception &) {
				// The open sends its own tail GET, and meets any error there as it would without httpfs2.
			}
		});
	}
}

} // namespace httpfs2
