//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/read_settings.hpp
//
// The ten httpfs2_parallel_read_* settings: names, defaults, descriptions and accepted ranges.
// DuckDB-free so that validation is unit-tested without a database.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace httpfs2 {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;
constexpr uint64_t GiB = 1024 * MiB;
//! Upper bound of max_fanout; also the size of the fan-out histogram.
constexpr uint64_t MAX_FANOUT_LIMIT = 64;

//! The values a handle reads with, snapshotted when the file is opened.
struct ParallelReadSettings {
	bool enabled = false;
	uint64_t io_threads = 16;
	uint64_t chunk_size_bytes = 16 * MiB;
	uint64_t max_fanout = 4;
	uint64_t min_bytes = 2 * MiB;
	bool recommended_preset_enabled = false;
	bool dedicated_handles = false;
	bool auto_fanout_enabled = false;
	uint64_t auto_fanout_overhead_ms = 500;
	bool auto_fanout_overhead_adaptive_enabled = false;

	//! The settings with the recommended preset applied (fanout 2, chunk 16 MiB, min 2 MiB) when it is enabled.
	ParallelReadSettings Effective() const;
};

enum class SettingKind { BOOLEAN, INTEGER };

//! One user-visible setting and where it lands in ParallelReadSettings.
struct SettingSpec {
	const char *name;
	const char *description;
	SettingKind kind;
	int64_t default_value;
	//! Accepted range for INTEGER settings, inclusive.
	int64_t min_value;
	int64_t max_value;
	bool ParallelReadSettings::*flag;
	uint64_t ParallelReadSettings::*number;

	//! Empty when value is accepted; otherwise a message naming the setting and its range.
	std::string Validate(int64_t value) const;
	void Apply(ParallelReadSettings &settings, int64_t value) const;
};

//! All settings, in the order of the README.
const std::vector<SettingSpec> &AllSettings();
//! The spec named `name`, or nullptr.
const SettingSpec *FindSetting(const std::string &name);

//! Human-readable byte count for messages ("16 MiB", "65536 bytes").
std::string FormatBytes(uint64_t bytes);

} // namespace httpfs2
