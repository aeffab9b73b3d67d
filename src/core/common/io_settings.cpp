#include "core/common/io_settings.hpp"

#include <cstdlib>

namespace httpfs2 {

constexpr uint64_t RecommendedPreset::MAX_FANOUT;
constexpr uint64_t RecommendedPreset::CHUNK_SIZE_BYTES;
constexpr uint64_t RecommendedPreset::MIN_BYTES;
constexpr uint64_t HostPieceReads::WIDE_STREAMS;

IoSettings::IoSettings() {
	for (auto &spec : SETTING_SPECS) {
		if (spec.kind == SettingKind::TEXT) {
			spec.ApplyText(*this, spec.default_text);
		} else {
			spec.Apply(*this, spec.default_value);
		}
	}
}

std::string IoSettings::CacheDirectory() const {
	if (!cache_directory.empty()) {
		return cache_directory;
	}
	auto xdg = std::getenv("XDG_CACHE_HOME");
	if (xdg && *xdg) {
		return std::string(xdg) + "/httpfs2/blocks";
	}
	auto home = std::getenv("HOME");
	if (home && *home) {
		return std::string(home) + "/.cache/httpfs2/blocks";
	}
	return std::string();
}

IoSettings IoSettings::Effective() const {
	IoSettings result = *this;
	if (recommended_preset_enabled) {
		result.max_fanout = RecommendedPreset::MAX_FANOUT;
		result.chunk_size_bytes = RecommendedPreset::CHUNK_SIZE_BYTES;
		result.min_bytes = RecommendedPreset::MIN_BYTES;
	}
	return result;
}

const SettingSpec *FindSetting(const std::string &name) {
	for (auto &spec : SETTING_SPECS) {
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
	if (kind != SettingKind::INTEGER || (value >= min_value && value <= max_value)) {
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

void SettingSpec::Apply(IoSettings &settings, int64_t value) const {
	if (kind == SettingKind::BOOLEAN) {
		settings.*flag = value != 0;
	} else if (kind == SettingKind::INTEGER) {
		settings.*number = static_cast<uint64_t>(value);
	}
}

void SettingSpec::ApplyText(IoSettings &settings, const std::string &value) const {
	if (kind == SettingKind::TEXT) {
		settings.*text = value;
	}
}

} // namespace httpfs2
