//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/common/io_stats.hpp
//
// Counters of one wrapped filesystem. Lock-free on the read path. Each counter is one row of COUNTER_SPECS, which
// also names its httpfs2_stats() column.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/io_settings.hpp"

#include <array>
#include <atomic>
#include <cstdint>

namespace httpfs2 {

enum class Counter : size_t {
	FILES_OPENED,
	//! Read calls seen by the wrapper, however they were served, and the bytes they asked for.
	READS,
	BYTES_READ,
	//! Reads (or the parts of them read-ahead did not hold) passed to the wrapped filesystem whole, or split.
	READS_PASSED_THROUGH,
	//! Reads (or the parts of them read-ahead did not hold) that httpfs2 read itself, not split, with checked range
	//! GETs, and the GETs they asked for (one each, or none where a buffered handle's window held the bytes; without
	//! retries and hedges).
	READS_CHECKED,
	CHECKED_GETS,
	READS_SPLIT,
	SUB_READS,
	SUB_READ_BYTES,
	//! Sum of the durations of all sub-reads (shown in seconds).
	SUB_READ_MICROS,
	IN_FLIGHT_PEAK,
	//! Reads and sub-reads that failed.
	ERRORS,
	WRITES,
	BYTES_WRITTEN,
	//! Reads the wrapper sent to the wrapped filesystem for a reader (pass-through, split pieces, read-ahead misses).
	READER_REQUESTS,
	//! Fetches read-ahead started before a reader asked, and their bytes.
	READ_AHEAD_REQUESTS,
	READ_AHEAD_BYTES,
	//! Bytes readers got from read-ahead.
	READ_AHEAD_BYTES_USED,
	//! Bytes fetched ahead that no reader ever got (dropped at close, passed over, or failed).
	READ_AHEAD_BYTES_WASTED,
	//! Of those, bytes dropped while the file was still open because its readers had moved past them.
	READ_AHEAD_BYTES_EVICTED,
	READ_AHEAD_FAILURES,
	//! Predicted fetches not started because the memory budget was full.
	READ_AHEAD_SKIPPED_BUDGET,
	//! Reads read-ahead did not watch: the cost model's first-byte latency was under min_latency_ms (a store
	//! so close that reading ahead costs more CPU than the wait it hides).
	READ_AHEAD_DECLINED,
	//! Reads served entirely from read-ahead, partly (the rest read by the reader), or that waited for a fetch.
	READS_SERVED_WHOLE,
	READS_SERVED_PARTLY,
	READS_WAITED,
	//! Requests httpfs2 signed itself: to learn an az:// blob's ETag (one per blob per query), for the tail of an
	//! s3:// Parquet file at its first open (S3Tails).
	VERSION_REQUESTS,
	//! Handles of the wrapped filesystem opened (on Azure each costs a HEAD); opened only when first needed.
	INNER_OPENS,
	//! Bytes readers got from Parquet footers remembered from an earlier open of the same object version.
	FOOTER_BYTES_REUSED,
	//! Iceberg manifests fetched whole, side by side, when their manifest list was opened (DataFilePredictor): their
	//! opens in the query take these bytes and make no request.
	MANIFESTS_FETCHED_AHEAD,
	//! Tails of Iceberg data files fetched ahead of their opens, in the order their manifests name them: the opens
	//! take them in place of their own tail GET.
	TAILS_FETCHED_AHEAD,
	//! Folders listed (ListObjectsV2 after a file) because a query opened files of one folder by name in the folder's
	//! order: the versions it gave open the next files with no request, their footers fetched ahead (FolderPredictor).
	FOLDER_LISTINGS,
	//! Answers to httpfs2's own range GETs that were not the bytes asked for: a server that ignored Range (the object
	//! is then read through the wrapped filesystem alone), served other bytes, or another version of the object.
	RANGE_ANSWERS_REFUSED,
	//! Answers to those GETs with the range asked that could not prove their version (no strong ETag where the
	//! object's version has one; without one, an object written within seconds): the object is then read through the
	//! wrapped filesystem alone, as httpfs reads it.
	RANGE_ANSWERS_UNPROVEN,
	//! Answers to httpfs2's own requests that asked it to slow down (503 SlowDown or ServerBusy, 429), each also
	//! halving the streams of reads or of uploads, and the time their retries waited (shown in seconds).
	THROTTLED_ANSWERS,
	THROTTLED_WAIT_MICROS,
	//! Attempts of httpfs2's own requests that waited at the admission gate of a throttled prefix (RequestGate) before
	//! they were sent, and the time they waited there (shown in seconds).
	GATE_WAITS,
	GATE_WAIT_MICROS,
	//! Requests of httpfs2's refused for their credentials (an expired session token, a key the store no longer
	//! takes) and sent again, once, with the credentials the path's secret holds now.
	CREDENTIALS_REFRESHED,
	//! Range GETs sent again on another connection because the first one's answer had not begun by the deadline learnt
	//! from the first-byte latencies just seen (HedgePolicy), and those of them whose answer was the one used.
	HEDGES_SENT,
	HEDGES_WON,
	//! Objects httpfs2's uploader made complete, the parts (a single PUT counts as one) and bytes it sent, and the
	//! uploads it aborted (a failed part or completion, a file dropped without a successful close); bytes of parts
	//! kept on local disk because the upload budget could not hold them.
	FILES_UPLOADED,
	UPLOAD_PARTS,
	UPLOAD_BYTES,
	UPLOADS_ABORTED,
	UPLOAD_BYTES_SPILLED,
	//! Time writers spent in the Close of uploaded files (the last part, waiting for the others, the completion);
	//! DuckDB closes the files of a PARTITION_BY one after another (shown in seconds).
	UPLOAD_CLOSE_MICROS,
	//! Blocks of the block cache found held, and not held (absent, evicted or corrupt), by reads through it, and the
	//! bytes readers got from it. The bytes written to it are the cache's own count (written in the background).
	CACHE_HITS,
	CACHE_MISSES,
	CACHE_BYTES_SERVED,
	//! Times the block cache was turned off for a file: its directory could not be opened, or blocks not written.
	CACHE_FAILURES,
	//! Opens at a version the block cache recorded within httpfs2_cache_trust_seconds: no request proved it.
	CACHE_VERSIONS_TRUSTED,
	//! Opens of a file held in the block cache at a version its folder's listing proved (one listing for the query's
	//! opens in that folder, where each would have been a request of its own).
	CACHE_VERSIONS_LISTED,
	//! Blocks a read missed and got from another read's fetch of them under way, with no request of its own.
	CACHE_FETCHES_SHARED,
	COUNT
};

constexpr size_t COUNTER_COUNT = static_cast<size_t>(Counter::COUNT);

struct CounterSpec {
	Counter counter;
	//! Its httpfs2_stats() column.
	const char *column;
};

//! Every counter and its column, in the column order of httpfs2_stats().
constexpr CounterSpec COUNTER_SPECS[] = {
    {Counter::FILES_OPENED, "files_opened"},
    {Counter::READS, "reads"},
    {Counter::BYTES_READ, "bytes_read"},
    {Counter::READS_PASSED_THROUGH, "reads_passed_through"},
    {Counter::READS_CHECKED, "reads_checked"},
    {Counter::CHECKED_GETS, "checked_gets"},
    {Counter::READS_SPLIT, "reads_split"},
    {Counter::SUB_READS, "sub_reads"},
    {Counter::SUB_READ_BYTES, "sub_read_bytes"},
    {Counter::SUB_READ_MICROS, "sub_read_seconds"},
    {Counter::IN_FLIGHT_PEAK, "in_flight_peak"},
    {Counter::ERRORS, "errors"},
    {Counter::WRITES, "writes"},
    {Counter::BYTES_WRITTEN, "bytes_written"},
    {Counter::READER_REQUESTS, "reader_requests"},
    {Counter::READ_AHEAD_REQUESTS, "read_ahead_requests"},
    {Counter::READ_AHEAD_BYTES, "read_ahead_bytes"},
    {Counter::READ_AHEAD_BYTES_USED, "read_ahead_bytes_used"},
    {Counter::READ_AHEAD_BYTES_WASTED, "read_ahead_bytes_wasted"},
    {Counter::READ_AHEAD_BYTES_EVICTED, "read_ahead_bytes_evicted"},
    {Counter::READ_AHEAD_FAILURES, "read_ahead_failures"},
    {Counter::READ_AHEAD_SKIPPED_BUDGET, "read_ahead_skipped_budget"},
    {Counter::READ_AHEAD_DECLINED, "read_ahead_declined"},
    {Counter::READS_SERVED_WHOLE, "reads_served_whole"},
    {Counter::READS_SERVED_PARTLY, "reads_served_partly"},
    {Counter::READS_WAITED, "reads_waited"},
    {Counter::VERSION_REQUESTS, "version_requests"},
    {Counter::INNER_OPENS, "inner_opens"},
    {Counter::FOOTER_BYTES_REUSED, "footer_bytes_reused"},
    {Counter::MANIFESTS_FETCHED_AHEAD, "manifests_fetched_ahead"},
    {Counter::TAILS_FETCHED_AHEAD, "tails_fetched_ahead"},
    {Counter::FOLDER_LISTINGS, "folder_listings"},
    {Counter::RANGE_ANSWERS_REFUSED, "range_answers_refused"},
    {Counter::RANGE_ANSWERS_UNPROVEN, "range_answers_unproven"},
    {Counter::THROTTLED_ANSWERS, "throttled_answers"},
    {Counter::THROTTLED_WAIT_MICROS, "throttled_wait_seconds"},
    {Counter::GATE_WAITS, "gate_waits"},
    {Counter::GATE_WAIT_MICROS, "gate_wait_seconds"},
    {Counter::CREDENTIALS_REFRESHED, "credentials_refreshed"},
    {Counter::HEDGES_SENT, "hedges_sent"},
    {Counter::HEDGES_WON, "hedges_won"},
    {Counter::FILES_UPLOADED, "files_uploaded"},
    {Counter::UPLOAD_PARTS, "upload_parts"},
    {Counter::UPLOAD_BYTES, "upload_bytes"},
    {Counter::UPLOADS_ABORTED, "uploads_aborted"},
    {Counter::UPLOAD_BYTES_SPILLED, "upload_bytes_spilled"},
    {Counter::UPLOAD_CLOSE_MICROS, "upload_close_seconds"},
    {Counter::CACHE_HITS, "cache_hits"},
    {Counter::CACHE_MISSES, "cache_misses"},
    {Counter::CACHE_BYTES_SERVED, "cache_bytes_served"},
    {Counter::CACHE_FAILURES, "cache_failures"},
    {Counter::CACHE_VERSIONS_TRUSTED, "cache_versions_trusted"},
    {Counter::CACHE_VERSIONS_LISTED, "cache_versions_listed"},
    {Counter::CACHE_FETCHES_SHARED, "cache_fetches_shared"},
};
static_assert(sizeof(COUNTER_SPECS) / sizeof(COUNTER_SPECS[0]) == COUNTER_COUNT, "every counter needs a column");

struct IoStatsSnapshot {
	std::array<uint64_t, COUNTER_COUNT> counters {};
	//! fanout_histogram[n] counts split reads that ran with fan-out n (index 0 unused).
	std::array<uint64_t, MAX_FANOUT_LIMIT + 1> fanout_histogram {};

	uint64_t Get(Counter counter) const {
		return counters[static_cast<size_t>(counter)];
	}
};

class IoStats {
public:
	void Add(Counter counter, uint64_t amount = 1);
	//! One Read call of a reader, however it is served.
	void RecordRead(uint64_t bytes);
	//! The wrapped filesystem read (part of) a Read call unchanged.
	void RecordPassThrough();
	//! A checked GET was sent for (part of) a Read call (CheckedRangeReader).
	void RecordCheckedGet();
	//! (Part of) a Read call was split into sub-reads with this fan-out; each sub-read counts as a request.
	void RecordSplit(uint64_t fanout);
	void RecordWrite(uint64_t bytes);
	//! Marks a sub-read as started; pair with SubReadFinished.
	void SubReadStarted();
	void SubReadFinished(uint64_t bytes, uint64_t micros);

	IoStatsSnapshot Snapshot() const;
	void Reset();

private:
	std::array<std::atomic<uint64_t>, COUNTER_COUNT> counters {};
	std::atomic<uint64_t> in_flight {0};
	std::array<std::atomic<uint64_t>, MAX_FANOUT_LIMIT + 1> fanout_histogram {};
};

} // namespace httpfs2
