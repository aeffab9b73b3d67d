#include "adapter/stores/cache_use.hpp"

#include "adapter/stores/checked_range_reader.hpp"
#include "adapter/compat/duckdb_api.hpp"
#include "adapter/stores/store_http.hpp"
#include "core/cache/cached_read.hpp"
#include "core/formats/parquet_layout.hpp"
#include "duckdb/logging/logger.hpp"

#include "duckdb/main/client_context.hpp"

#include <chrono>

namespace httpfs2 {

using duckdb::FileOpener;
using duckdb::optional_ptr;
using std::string;

int64_t CacheClockNanoseconds() {
	return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
	    .count();
}

//! A warning in DuckDB's log (duckdb_logs, once logging is enabled), where a user looks for what went wrong.
static void LogWarning(duckdb::ClientContext &context, const string &message) {
	using namespace duckdb;
	DUCKDB_LOG_WARNING(context, message);
}

void AttachBlockCache(ExtensionState &state, IoStats &stats, CheckedRangeReader &reader, const string &path,
                      const IoSettings &settings, optional_ptr<FileOpener> opener, const ObjectVersion *learnt) {
	if (!settings.cache_enabled) {
		return;
	}
	auto context = FileOpener::TryGetClientContext(opener);
	duckdb::weak_ptr<duckdb::ClientContext> connection;
	if (context) {
		connection = context->shared_from_this();
	}
	auto directory = settings.CacheDirectory();
	auto &counters = stats;
	auto warn = [connection, directory, &counters](const string &why) {
		counters.Add(Counter::CACHE_FAILURES);
		if (auto live = connection.lock()) {
			LogWarning(*live, "httpfs2: the block cache in '" + directory + "' is off for this file: " + why);
		}
	};
	string error;
	auto cache = state.CacheFor(settings, error);
	if (!cache) {
		warn(error);
		return;
	}
	CacheKey key;
	// Recorded whatever the window of this session: a process that proved a newer version replaces an older record
	// that processes trusting one would otherwise go on using.
	if (learnt && CheckedRangeReader::CacheKeyFor(path, CheckedRangeReader::ExpectedOf(*learnt), key)) {
		cache->RecordVersion(path, EncodeVersion(*learnt), CacheClockNanoseconds(),
		                     BlockCache::RecordFreshNanoseconds(settings.cache_trust_seconds));
	}
	CancelCheck interrupted;
	if (context) {
		// A connection gone has no query left to wait for.
		interrupted = QueryCancelled(*context);
	}
	reader.UseCache(std::move(cache), warn, std::move(interrupted));
}

//! The version of `path` the cache recorded as learnt at `not_before_ns` or later, into `version`.
static bool RecordedVersion(BlockCache &cache, const string &path, int64_t not_before_ns, ObjectVersion &version) {
	string recorded;
	return cache.Versions().Find(path, not_before_ns, CacheClockNanoseconds(), recorded) &&
	       DecodeVersion(recorded, version);
}

//! Whether the cache recorded a version of `path` learnt at `not_before_ns` or later, and holds its last block or its
//! tail piece.
static bool RecordedAndTailHeldSince(ExtensionState &state, const IoSettings &settings, const string &path,
                                     int64_t not_before_ns) {
	string error;
	auto cache = state.CacheFor(settings, error);
	ObjectVersion recorded;
	CacheKey key;
	if (!cache || !RecordedVersion(*cache, path, not_before_ns, recorded) || recorded.size == 0 ||
	    !CheckedRangeReader::CacheKeyFor(path, CheckedRangeReader::ExpectedOf(recorded), key)) {
		return false;
	}
	return cache->Holds(key, (recorded.size - 1) / BlockCache::BLOCK_SIZE) ||
	       cache->Holds(key, TailPieceIndex(ParquetFooter::DuckDBTailReadSize(recorded.size)));
}

//! Whether the session trusts what the cache recorded for a while (httpfs2_cache_trust_seconds, the cache on).
static bool Trusting(const IoSettings &settings) {
	return settings.cache_enabled && settings.cache_trust_seconds != 0;
}

//! Where the session's trust window (httpfs2_cache_trust_seconds) opens now.
static int64_t TrustWindowStart(const IoSettings &settings) {
	return CacheClockNanoseconds() - static_cast<int64_t>(settings.cache_trust_seconds) * 1000 * 1000 * 1000;
}

bool FindTrustedVersion(ExtensionState &state, const IoSettings &settings, const string &path, ObjectVersion &version) {
	if (!Trusting(settings)) {
		return false;
	}
	string error;
	auto cache = state.CacheFor(settings, error);
	return cache && RecordedVersion(*cache, path, TrustWindowStart(settings), version);
}

bool TrustedAndTailHeld(ExtensionState &state, const IoSettings &settings, const string &path) {
	return Trusting(settings) && RecordedAndTailHeldSince(state, settings, path, TrustWindowStart(settings));
}

bool RecordedAndTailHeld(ExtensionState &state, const IoSettings &settings, const string &path) {
	return settings.cache_enabled && RecordedAndTailHeldSince(state, settings, path, 0);
}

void FillInBackground(IoPool &pool, std::shared_ptr<CheckedRangeReader> reader, const ByteRange &range,
                      uint64_t object_size) {
	// Whole blocks: a read of part of a block would keep that part alone (a piece).
	pool.Submit([reader, range = BlockSpan(range, object_size)]() {
		string bytes(range.length, '\0');
		try {
			reader->Read(range, &bytes[0]);
		} catch (std::exception &) {
			// Not cached: the read that wants these bytes fetches them, and meets any error there.
		}
	});
}

} // namespace httpfs2
