#include "adapter/filesystem/manifest_prefetch.hpp"

#include "core/read_ahead/manifest_list.hpp"
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

//! One manifest's fetch: abandoned (its open goes on without it) unless it delivered, however its task ends.
struct Fetch {
	Fetch(duckdb::shared_ptr<QueryVersions> query_p, std::string path_p, uint64_t expected_p)
	    : query(std::move(query_p)), path(std::move(path_p)), expected(expected_p) {
	}
	~Fetch() {
		if (!delivered) {
			query->Abandon(path, expected);
		}
	}

	duckdb::shared_ptr<QueryVersions> query;
	std::string path;
	uint64_t expected;
	bool delivered = false;
};
} // namespace

void ManifestPrefetch::Start(const std::string &list_path, const std::string &list_bytes, RemoteStore &store,
                             IoPool &pool, MemoryBudget &budget, IoStats &stats,
                             duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto query = QueryVersions::Of(opener);
	if (!query) {
		return;
	}
	auto manifests = ManifestList::Read(list_bytes, ManifestList::SchemeAndAuthority(list_path), InflateRaw);
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
		if (!budget.TryReserve(length)) {
			continue; // left to its open; the Fetch abandons it
		}
		// Charged to the read-ahead budget until its open takes it or the query ends.
		std::shared_ptr<std::string> bytes(new std::string(length, '\0'), [&budget, length](std::string *freed) {
			delete freed;
			budget.Release(length);
		});
		stats.Add(Counter::READ_AHEAD_REQUESTS);
		stats.Add(Counter::READ_AHEAD_BYTES, length);
		pool.Submit([fetch, reader, bytes, &stats, length]() mutable {
			try {
				reader->Read(ByteRange {0, length}, &(*bytes)[0]);
				auto version = reader->AnsweredVersion();
				// Remembered bytes must be named by their content, or by no ETag at all (then the query's alone).
				if (version.etag.empty() || version.IsContentHash()) {
					fetch->query->Deliver(fetch->path, version, std::move(bytes), fetch->expected);
					fetch->delivered = true;
					stats.Add(Counter::MANIFESTS_FETCHED_AHEAD);
				}
			} catch (std::exception &) {
				// The open reads the manifest itself, and meets any error there as it would without httpfs2.
			}
		});
	}
}

} // namespace httpfs2
