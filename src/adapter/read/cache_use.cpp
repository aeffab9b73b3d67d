#include "adapter/read/cache_use.hpp"

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
		cache->RecordVersion(path, EncodeVersion(*learnt), CacheClockNanoseconds());
	}
	reader.UseCache(std::move(cache), warn);
}

} // namespace httpfs2
