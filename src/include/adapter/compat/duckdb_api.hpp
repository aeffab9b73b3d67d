//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/compat/duckdb_api.hpp
//
// The seams where DuckDB's C++ API differs between the versions httpfs2 is built for (1.5.x and 2.0.x), in one place:
// the rest of the tree writes against these names. HTTPFS2_DUCKDB_MAJOR comes from the build (CMakeLists.txt, from
// the DuckDB version the extension is built for).
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/http_util.hpp"
#include "duckdb/logging/log_type.hpp"
#include "core/read_ahead/read_ahead_tuning.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/parallel/task_scheduler.hpp"

#include <string>

#ifndef HTTPFS2_DUCKDB_MAJOR
#error "HTTPFS2_DUCKDB_MAJOR is set by the build to the major version of the DuckDB httpfs2 is built for"
#endif

namespace httpfs2 {
namespace compat {

#if HTTPFS2_DUCKDB_MAJOR >= 2
//! DuckDB 2.0 reads row groups and files ahead on its own async pool.
constexpr HostReads HOST_READS = HostReads::AHEAD;
//! How DuckDB names a setting a FileOpener is asked for, and a column a table function binds.
using SettingKey = duckdb::Identifier;
using ColumnName = duckdb::Identifier;

inline bool Interrupted(const duckdb::ClientContext &context) {
	return context.IsInterrupted();
}

//! http_retry_throttled_wait_ms: the smallest base wait of throttled retries.
inline uint64_t ThrottledWaitMs(const duckdb::HTTPParams &params) {
	return params.retry_throttled_wait_ms;
}

//! The reads of one object DuckDB keeps in flight itself: the pieces of a remote read run on its async pool.
inline uint64_t HostReadStreams(duckdb::ClientContext &context) {
	auto async_threads = duckdb::TaskScheduler::GetScheduler(context).NumberOfAsyncThreads();
	return async_threads > 0 ? static_cast<uint64_t>(async_threads) : 1;
}
#else
constexpr HostReads HOST_READS = HostReads::IN_TURN;
using SettingKey = std::string;
using ColumnName = std::string;

inline bool Interrupted(const duckdb::ClientContext &context) {
	return context.interrupted.load();
}

//! DuckDB 1.5 has no setting of its own for throttled retries.
inline uint64_t ThrottledWaitMs(const duckdb::HTTPParams &) {
	return 0;
}

//! DuckDB 1.5 reads a range in one request on the thread that asks.
inline uint64_t HostReadStreams(duckdb::ClientContext &) {
	return 1;
}
#endif

//! When a request was sent, as DuckDB's HTTP log reads it from a request (BaseRequest's timing fields).
class RequestClock {
public:
	//! Now.
	RequestClock();
	//! Gives `logged` the timing from this clock's start to now.
	void Stamp(duckdb::BaseRequest &logged) const;

private:
	duckdb::timestamp_t start;
#if HTTPFS2_DUCKDB_MAJOR >= 2
	duckdb::TimePoint monotonic_start;
#endif
};

#if HTTPFS2_DUCKDB_MAJOR >= 2
inline RequestClock::RequestClock()
    : start(duckdb::Timestamp::GetCurrentTimestamp()), monotonic_start(duckdb::TimePoint::Tick()) {
}
inline void RequestClock::Stamp(duckdb::BaseRequest &logged) const {
	logged.have_request_timing = true;
	logged.request_system_start = start;
	logged.request_monotonic_start = monotonic_start;
	logged.request_monotonic_end = duckdb::TimePoint::Tick();
}
//! The HTTP log's entry for `request`: its headers are redacted by the caller, and by DuckDB 2.0 as well.
inline std::string HttpLogMessage(duckdb::BaseRequest &request, duckdb::optional_ptr<duckdb::HTTPResponse> response) {
	return duckdb::HTTPLogType::ConstructLogMessage(request, response, true);
}
#else
inline RequestClock::RequestClock() : start(duckdb::Timestamp::GetCurrentTimestamp()) {
}
inline void RequestClock::Stamp(duckdb::BaseRequest &logged) const {
	logged.have_request_timing = true;
	logged.request_start = start;
	logged.request_end = duckdb::Timestamp::GetCurrentTimestamp();
}
inline std::string HttpLogMessage(duckdb::BaseRequest &request, duckdb::optional_ptr<duckdb::HTTPResponse> response) {
	return duckdb::HTTPLogType::ConstructLogMessage(request, response);
}
#endif

//! The name a SettingKey holds.
inline const std::string &KeyName(const SettingKey &key) {
	return static_cast<const std::string &>(key);
}

} // namespace compat
} // namespace httpfs2
