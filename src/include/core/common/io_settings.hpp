//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/common/io_settings.hpp
//
// The httpfs2_* settings: names, defaults, descriptions, scopes and accepted ranges, in one table.
// DuckDB-free so that validation is unit-tested without a database.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace httpfs2 {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;
constexpr uint64_t GiB = 1024 * MiB;
//! Upper bound of max_fanout; also the size of the fan-out histogram.
constexpr uint64_t MAX_FANOUT_LIMIT = 64;

//! The values httpfs2_parallel_read_recommended_preset_enabled forces.
struct RecommendedPreset {
	static constexpr uint64_t MAX_FANOUT = 2;
	static constexpr uint64_t CHUNK_SIZE_BYTES = 16 * MiB;
	static constexpr uint64_t MIN_BYTES = 2 * MiB;
};

//! How the host reads one remote object itself, beside httpfs2. DuckDB 2.0 cuts a remote read larger than
//! piece_bytes (its external_file_cache_remote_max_block_size) into pieces of that size and runs them side by side on
//! its async pool, `streams` (async_threads) at a time; DuckDB 1.5 reads in turn and never cuts (the defaults).
struct HostPieceReads {
	uint64_t streams = 1;
	//! 0: the host never cuts a read.
	uint64_t piece_bytes = 0;

	//! The bytes of the object the host keeps in flight itself around a read of `length`: where the read is one of the
	//! pieces it cut (its length the piece size), `streams` pieces; else 0 (the host did not cut it and reads it
	//! alone).
	uint64_t InFlightAround(uint64_t length) const {
		return piece_bytes > 0 && length == piece_bytes && streams > 1 ? streams * piece_bytes : 0;
	}
	//! Whether a read of `length` is one of the host's pieces and the host keeps at least WIDE_STREAMS of them in
	//! flight: as many streams as read-ahead would add, whatever the bytes they reach.
	bool WideAround(uint64_t length) const {
		return InFlightAround(length) > 0 && streams >= WIDE_STREAMS;
	}
	static constexpr uint64_t WIDE_STREAMS = 16;
};

//! The values a handle reads with, snapshotted when the file is opened. A default-constructed instance holds the
//! defaults of SETTING_SPECS, the one place they are written down.
struct IoSettings {
	IoSettings();

	bool enabled;
	uint64_t io_threads;
	uint64_t chunk_size_bytes;
	uint64_t max_fanout;
	uint64_t min_bytes;
	bool recommended_preset_enabled;
	bool dedicated_handles;
	bool auto_fanout_enabled;
	uint64_t auto_fanout_overhead_ms;
	bool auto_fanout_overhead_adaptive_enabled;
	bool read_ahead_enabled;
	uint64_t read_ahead_memory_limit_bytes;
	uint64_t min_latency_ms;
	bool write_enabled;
	uint64_t write_part_size_bytes;
	uint64_t write_memory_limit_bytes;
	bool cache_enabled;
	//! As set: "" is the default place (CacheDirectory()).
	std::string cache_directory;
	uint64_t cache_max_bytes;
	uint64_t cache_trust_seconds;
	bool hedge_reads;
	bool hedge_uploads;
	//! Not a setting: how the host reads a remote object itself (found from the host at open).
	HostPieceReads host_reads;

	//! The settings with the recommended preset applied when it is enabled.
	IoSettings Effective() const;
	//! Read-ahead runs when parallel reads are enabled and read-ahead is not turned off.
	bool ReadAheadActive() const {
		return enabled && read_ahead_enabled;
	}
	//! s3:// and az:// files opened for writing go to httpfs2's uploader when parallel reads are on and writes not
	//! turned off.
	bool UploadsActive() const {
		return enabled && write_enabled;
	}
	//! The block cache's directory: cache_directory, else $XDG_CACHE_HOME/httpfs2/blocks, else
	//! $HOME/.cache/httpfs2/blocks ("" when none of them is set).
	std::string CacheDirectory() const;
};

enum class SettingKind { BOOLEAN, INTEGER, TEXT };
//! GLOBAL settings size something the whole database shares (the IO pool, the read-ahead budget).
enum class SettingScope { SESSION, GLOBAL };

//! One user-visible setting and where it lands in IoSettings.
struct SettingSpec {
	const char *name;
	const char *description;
	SettingKind kind;
	SettingScope scope;
	int64_t default_value;
	//! Accepted range for INTEGER settings, inclusive.
	int64_t min_value;
	int64_t max_value;
	bool IoSettings::*flag;
	uint64_t IoSettings::*number;
	//! For TEXT settings: the default and where the value lands.
	const char *default_text;
	std::string IoSettings::*text;

	//! Empty when value is accepted; otherwise a message naming the setting and its range. Any text is accepted.
	std::string Validate(int64_t value) const;
	//! A BOOLEAN (0 or 1) or INTEGER value.
	void Apply(IoSettings &settings, int64_t value) const;
	//! A TEXT value.
	void ApplyText(IoSettings &settings, const std::string &value) const;
};

constexpr SettingSpec FlagSetting(const char *name, const char *description, bool default_value,
                                  bool IoSettings::*member) {
	return SettingSpec {
	    name,    description, SettingKind::BOOLEAN, SettingScope::SESSION, default_value ? 1 : 0, 0, 1, member, nullptr,
	    nullptr, nullptr};
}

constexpr SettingSpec NumberSetting(const char *name, const char *description, SettingScope scope,
                                    uint64_t default_value, uint64_t min_value, uint64_t max_value,
                                    uint64_t IoSettings::*member) {
	return SettingSpec {name,
	                    description,
	                    SettingKind::INTEGER,
	                    scope,
	                    static_cast<int64_t>(default_value),
	                    static_cast<int64_t>(min_value),
	                    static_cast<int64_t>(max_value),
	                    nullptr,
	                    member,
	                    nullptr,
	                    nullptr};
}

constexpr SettingSpec TextSetting(const char *name, const char *description, SettingScope scope,
                                  const char *default_value, std::string IoSettings::*member) {
	return SettingSpec {name, description, SettingKind::TEXT, scope, 0, 0, 0, nullptr, nullptr, default_value, member};
}

//! All settings, in the order of the README. Its size is known at compile time, so the adapter's per-setting
//! callbacks are generated from it and can never fall out of step with it.
constexpr SettingSpec SETTING_SPECS[] = {
    FlagSetting("httpfs2_parallel_read_enabled", "Enable parallel read splitting for remote files", false,
                &IoSettings::enabled),
    NumberSetting("httpfs2_parallel_read_io_threads", "IO worker pool size (separate from DuckDB threads)",
                  SettingScope::GLOBAL, 32, 1, 256, &IoSettings::io_threads),
    NumberSetting("httpfs2_parallel_read_chunk_size_bytes", "Target chunk size per sub-read", SettingScope::SESSION,
                  16 * MiB, 64 * KiB, GiB, &IoSettings::chunk_size_bytes),
    NumberSetting("httpfs2_parallel_read_max_fanout", "Max parallel sub-reads per Read() call", SettingScope::SESSION,
                  32, 1, MAX_FANOUT_LIMIT, &IoSettings::max_fanout),
    NumberSetting("httpfs2_parallel_read_min_bytes", "Minimum read size before splitting kicks in",
                  SettingScope::SESSION, 2 * MiB, 64 * KiB, 1024 * GiB, &IoSettings::min_bytes),
    FlagSetting("httpfs2_parallel_read_recommended_preset_enabled", "Override to safe defaults (fanout=2, chunk=16MiB)",
                false, &IoSettings::recommended_preset_enabled),
    FlagSetting("httpfs2_parallel_read_dedicated_handles",
                "Open extra file handles per remote file to reduce httpfs contention", false,
                &IoSettings::dedicated_handles),
    FlagSetting("httpfs2_parallel_read_auto_fanout_enabled", "Use S3 cost model to choose fanout per read", false,
                &IoSettings::auto_fanout_enabled),
    NumberSetting("httpfs2_parallel_read_auto_fanout_overhead_ms", "Penalty (ms) per extra sub-request in auto-fanout",
                  SettingScope::SESSION, 500, 0, 60000, &IoSettings::auto_fanout_overhead_ms),
    FlagSetting("httpfs2_parallel_read_auto_fanout_overhead_adaptive_enabled",
                "Learn overhead from observed timings (EWMA)", false,
                &IoSettings::auto_fanout_overhead_adaptive_enabled),
    FlagSetting(
        "httpfs2_read_ahead_enabled",
        "Fetch the ranges a scan will read next (parquet column chunks of the next row groups, the next window of a "
        "sequential read, footers of the next files of a glob, the next files of one read whole) before it asks; only "
        "when httpfs2_parallel_read_enabled is on",
        true, &IoSettings::read_ahead_enabled),
    NumberSetting(
        "httpfs2_read_ahead_memory_limit_bytes",
        "Memory budget for all read-ahead of the database; never exceeded: what does not fit is not fetched ahead",
        SettingScope::GLOBAL, 256 * MiB, MiB, 1024 * GiB, &IoSettings::read_ahead_memory_limit_bytes),
    NumberSetting(
        "httpfs2_parallel_read_min_latency_ms",
        "Read ahead, and split reads smaller than chunk_size_bytes, only where the first-byte latency the "
        "cost model measured is at least this many ms: below it (a LAN store) a request costs the client more "
        "CPU than it waits; 0 always does",
        SettingScope::SESSION, 5, 0, 60000, &IoSettings::min_latency_ms),
    FlagSetting("httpfs2_write_enabled",
                "Write s3:// and az:// files with httpfs2's uploader: parts sent in parallel on the IO pool as they "
                "fill, each object complete when the statement that wrote it ends (its commit) or left as it was; "
                "only when httpfs2_parallel_read_enabled is on",
                true, &IoSettings::write_enabled),
    NumberSetting("httpfs2_write_part_size_bytes",
                  "Largest part of an upload: files written at once share the memory budget, parts follow the "
                  "link below it where the store takes parts of any size, R2 gets parts of one size (S3 wants at "
                  "least 5 MiB); an object that fits in its first part is one PUT (5 MiB until the link's rate "
                  "is measured, then what it sends in about 0.25 s, up to this size)",
                  SettingScope::SESSION, 16 * MiB, 5 * MiB, GiB, &IoSettings::write_part_size_bytes),
    NumberSetting("httpfs2_write_memory_limit_bytes",
                  "Memory for the part buffers of all uploads of the database; never exceeded: a write waits for "
                  "parts to be acknowledged, and a part it cannot hold goes on in a temporary file",
                  SettingScope::GLOBAL, 256 * MiB, 16 * MiB, 1024 * GiB, &IoSettings::write_memory_limit_bytes),
    FlagSetting(
        "httpfs2_cache_enabled",
        "Keep the blocks (256 KiB, aligned in the object) of what is read from s3://, http(s):// and az:// on local "
        "disk, keyed by the object's path and version, and serve reads of the same version from there with no "
        "request; shared by every process using the same directory; only when "
        "httpfs2_parallel_read_enabled is on",
        false, &IoSettings::cache_enabled),
    TextSetting("httpfs2_cache_directory",
                "Directory of the block cache; empty means $XDG_CACHE_HOME/httpfs2/blocks, else "
                "$HOME/.cache/httpfs2/blocks",
                SettingScope::SESSION, "", &IoSettings::cache_directory),
    NumberSetting("httpfs2_cache_max_bytes",
                  "Bound of the block cache on disk, shared by the processes using it: the least recently used blocks "
                  "are evicted past it",
                  SettingScope::GLOBAL, 4 * GiB, 16 * MiB, 1024 * 1024 * GiB, &IoSettings::cache_max_bytes),
    NumberSetting("httpfs2_cache_trust_seconds",
                  "With the block cache on: an object's version the cache learnt (a tail GET, a listing, a HEAD, in "
                  "any process) less than this many seconds ago is used without asking the store, so a read of held "
                  "blocks makes no request; an object replaced within that time is served stale. 0 (the default) "
                  "proves the version at every query",
                  SettingScope::SESSION, 0, 0, 365 * 24 * 3600, &IoSettings::cache_trust_seconds),
    FlagSetting("httpfs2_hedge_reads",
                "Send a range GET of a split read or read-ahead again on another connection when its answer has not "
                "begun within a deadline learnt from the first-byte latencies just seen (never under 150 ms); the "
                "first whole, checked answer is used; at most about 5% of GETs, none while the store throttles",
                true, &IoSettings::hedge_reads),
    FlagSetting("httpfs2_hedge_uploads",
                "Send an upload part again, as the same part number on another connection, when its answer has not "
                "come within a deadline learnt from the parts just sent (never under 5 s, nor past half of "
                "http_timeout); the first answer is used; at most about 5% of parts, none while the store throttles",
                true, &IoSettings::hedge_uploads),
};

constexpr size_t SETTING_COUNT = sizeof(SETTING_SPECS) / sizeof(SETTING_SPECS[0]);

//! The spec named `name`, or nullptr.
const SettingSpec *FindSetting(const std::string &name);

//! Human-readable byte count for messages ("16 MiB", "65536 bytes").
std::string FormatBytes(uint64_t bytes);

} // namespace httpfs2
