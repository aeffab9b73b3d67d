#include "core/read_settings.hpp"

namespace httpfs2 {

ParallelReadSettings ParallelReadSettings::Effective() const {
	ParallelReadSettings result = *this;
	if (recommended_preset_enabled) {
		result.max_fanout = 2;
		result.chunk_size_bytes = 16 * MiB;
		result.min_bytes = 2 * MiB;
	}
	return result;
}

static SettingSpec Flag(const char *name, const char *description, bool ParallelReadSettings::*member) {
	ParallelReadSettings defaults;
	return SettingSpec {name, description, SettingKind::BOOLEAN, defaults.*member ? 1 : 0, 0, 1, member, nullptr};
}

static SettingSpec Number(const char *name, const char *description, uint64_t ParallelReadSettings::*member,
                          int64_t min_value, int64_t max_value) {
	ParallelReadSettings defaults;
	return SettingSpec {name,      description, SettingKind::INTEGER, static_cast<int64_t>(defaults.*member),
	                    min_value, max_value,   nullptr,              member};
}

const std::vector<SettingSpec> &AllSettings() {
	using S = ParallelReadSettings;
	static const std::vector<SettingSpec> specs = {
	    Flag("httpfs2_parallel_read_enabled", "Enable parallel read splitting for remote files", &S::enabled),
	    Number("httpfs2_parallel_read_io_threads", "IO worker pool size (separate from DuckDB threads)",
	           &S::io_threads, 1, 256),
	    Number("httpfs2_parallel_read_chunk_size_bytes", "Target chunk size per sub-read", &S::chunk_size_bytes,
	           static_cast<int64_t>(64 * KiB), static_cast<int64_t>(GiB)),
	    Number("httpfs2_parallel_read_max_fanout", "Max parallel sub-reads per Read() call", &S::max_fanout, 1,
	           static_cast<int64_t>(MAX_FANOUT_LIMIT)),
	    Number("httpfs2_parallel_read_min_bytes", "Minimum read size before splitting kicks in", &S::min_bytes,
	           static_cast<int64_t>(64 * KiB), static_cast<int64_t>(1024 * GiB)),
	    Flag("httpfs2_parallel_read_recommended_preset_enabled", "Override to safe defaults (fanout=2, chunk=16MiB)",
	         &S::recommended_preset_enabled),
	    Flag("httpfs2_parallel_read_dedicated_handles",
	         "Open extra file handles per remote file to reduce httpfs contention", &S::dedicated_handles),
	    Flag("httpfs2_parallel_read_auto_fanout_enabled", "Use S3 cost model to choose fanout per read",
	         &S::auto_fanout_enabled),
	    Number("httpfs2_parallel_read_auto_fanout_overhead_ms", "Penalty (ms) per extra sub-request in auto-fanout",
	           &S::auto_fanout_overhead_ms, 0, 60000),
	    Flag("httpfs2_parallel_read_auto_fanout_overhead_adaptive_enabled",
	         "Learn overhead from observed timings (EWMA)", &S::auto_fanout_overhead_adaptive_enabled),
	};
	return specs;
}

const SettingSpec *FindSetting(const std::string &name) {
	for (auto &spec : AllSettings()) {
		if (name == spec.name) {
			return &spec;
		}
	}
	return nullptr;
}

std::string FormatBytes(uint64_t bytes) {
	if (bytes >= GiB && bytes % GiB == 0) {
		return std::to_string(bytes / GiB) + " GiB";
	}
	if (bytes >= MiB && bytes % MiB == 0) {
		return std::to_string(bytes / MiB) + " MiB";
	}
	if (bytes >= KiB && bytes % KiB == 0) {
		return std::to_string(bytes / KiB) + " KiB";
	}
	return std::to_string(bytes) + " bytes";
}

std::string SettingSpec::Validate(int64_t value) const {
	if (kind == SettingKind::BOOLEAN || (value >= min_value && value <= max_value)) {
		return std::string();
	}
	std::string range = std::to_string(min_value) + " and " + std::to_string(max_value);
	if (std::string(name).find("_bytes") != std::string::npos) {
		range += " (" + FormatBytes(static_cast<uint64_t>(min_value)) + " to " +
		         FormatBytes(static_cast<uint64_t>(max_value)) + ")";
	}
	return std::string("Invalid value ") + std::to_string(value) + " for setting '" + name +
	       "': it must be an integer between " + range;
}

void SettingSpec::Apply(ParallelReadSettings &settings, int64_t value) const {
	if (kind == SettingKind::BOOLEAN) {
		settings.*flag = value != 0;
	} else {
		settings.*number = static_cast<uint64_t>(value);
	}
}

} // namespace httpfs2
