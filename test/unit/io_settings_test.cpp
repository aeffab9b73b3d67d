#include "core/common/io_settings.hpp"

#include <gtest/gtest.h>
#include <cstdlib>
#include <set>

using namespace httpfs2;

TEST(IoSettings, DefaultsMatchTheReadme) {
	IoSettings settings;
	EXPECT_FALSE(settings.enabled);
	EXPECT_EQ(settings.io_threads, 32u);
	EXPECT_EQ(settings.chunk_size_bytes, 16u * MiB);
	EXPECT_EQ(settings.max_fanout, 32u);
	EXPECT_EQ(settings.min_bytes, 2u * MiB);
	EXPECT_EQ(settings.auto_fanout_overhead_ms, 500u);
	EXPECT_FALSE(settings.recommended_preset_enabled);
	EXPECT_FALSE(settings.dedicated_handles);
	EXPECT_FALSE(settings.auto_fanout_enabled);
	EXPECT_FALSE(settings.auto_fanout_overhead_adaptive_enabled);
	EXPECT_TRUE(settings.read_ahead_enabled);
	EXPECT_EQ(settings.read_ahead_memory_limit_bytes, 256u * MiB);
	EXPECT_FALSE(settings.ReadAheadActive());
	EXPECT_EQ(FindSetting("httpfs2_parallel_read_chunk_size_bytes")->default_value, 16777216);
}

TEST(IoSettings, EveryMemberHasExactlyOneSetting) {
	// The constructor takes every default from the table, so each member needs its own entry.
	IoSettings settings;
	std::set<std::string> names;
	std::set<const void *> members;
	for (auto &spec : SETTING_SPECS) {
		EXPECT_TRUE(names.insert(spec.name).second) << spec.name;
		EXPECT_EQ(std::string(spec.name).rfind("httpfs2_", 0), 0u) << spec.name;
		const void *member = spec.flag     ? static_cast<const void *>(&(settings.*spec.flag))
		                     : spec.number ? static_cast<const void *>(&(settings.*spec.number))
		                                   : static_cast<const void *>(&(settings.*spec.text));
		EXPECT_TRUE(members.insert(member).second) << spec.name;
	}
	EXPECT_EQ(SETTING_COUNT, 22u);
}

TEST(IoSettings, CacheIsOffWithADirectoryAUserCanFind) {
	IoSettings settings;
	EXPECT_FALSE(settings.cache_enabled);
	EXPECT_EQ(settings.cache_directory, "");
	EXPECT_EQ(settings.cache_max_bytes, 4u * GiB);
	EXPECT_EQ(settings.cache_trust_seconds, 0u) << "validated at every query unless a user chooses a window";
	EXPECT_TRUE(FindSetting("httpfs2_cache_max_bytes")->scope == SettingScope::GLOBAL);
	auto home = std::getenv("HOME");
	auto xdg = std::getenv("XDG_CACHE_HOME");
	if (xdg && *xdg) {
		EXPECT_EQ(settings.CacheDirectory(), std::string(xdg) + "/httpfs2/blocks");
	} else if (home && *home) {
		EXPECT_EQ(settings.CacheDirectory(), std::string(home) + "/.cache/httpfs2/blocks");
	}
	FindSetting("httpfs2_cache_directory")->ApplyText(settings, "/somewhere/else");
	EXPECT_EQ(settings.CacheDirectory(), "/somewhere/else");
	EXPECT_NE(FindSetting("httpfs2_cache_max_bytes")->Validate(0).find("httpfs2_cache_max_bytes"), std::string::npos);
}

TEST(IoSettings, SharedResourcesAreGlobal) {
	EXPECT_TRUE(FindSetting("httpfs2_parallel_read_io_threads")->scope == SettingScope::GLOBAL);
	EXPECT_TRUE(FindSetting("httpfs2_read_ahead_memory_limit_bytes")->scope == SettingScope::GLOBAL);
	EXPECT_TRUE(FindSetting("httpfs2_write_memory_limit_bytes")->scope == SettingScope::GLOBAL);
	EXPECT_TRUE(FindSetting("httpfs2_parallel_read_max_fanout")->scope == SettingScope::SESSION);
	EXPECT_NE(FindSetting("httpfs2_read_ahead_memory_limit_bytes")->Validate(1000).find("1 MiB to 1024 GiB"),
	          std::string::npos);
}

TEST(IoSettings, EverySettingHasADescriptionAndAPlace) {
	for (auto &spec : SETTING_SPECS) {
		EXPECT_NE(std::string(spec.description), "") << spec.name;
		int places = (spec.flag != nullptr) + (spec.number != nullptr) + (spec.text != nullptr);
		EXPECT_EQ(places, 1) << spec.name;
		EXPECT_EQ(spec.Validate(spec.default_value), "") << spec.name;
	}
}

TEST(IoSettings, RejectsOutOfRangeNamingSettingAndRange) {
	auto *fanout = FindSetting("httpfs2_parallel_read_max_fanout");
	ASSERT_NE(fanout, nullptr);
	EXPECT_EQ(fanout->Validate(1), "");
	EXPECT_EQ(fanout->Validate(64), "");
	for (int64_t bad : {int64_t(0), int64_t(-1), int64_t(65), int64_t(1) << 40}) {
		auto error = fanout->Validate(bad);
		EXPECT_NE(error.find("httpfs2_parallel_read_max_fanout"), std::string::npos) << error;
		EXPECT_NE(error.find("between 1 and 64"), std::string::npos) << error;
	}
	auto error = FindSetting("httpfs2_parallel_read_chunk_size_bytes")->Validate(100);
	EXPECT_NE(error.find("64 KiB to 1 GiB"), std::string::npos) << error;
	EXPECT_NE(FindSetting("httpfs2_parallel_read_io_threads")->Validate(0), "");
}

TEST(IoSettings, PresetOverridesFanoutChunkAndMin) {
	IoSettings settings;
	settings.max_fanout = 16;
	settings.chunk_size_bytes = 1 * MiB;
	settings.min_bytes = 64 * KiB;
	EXPECT_EQ(settings.Effective().max_fanout, 16u);
	settings.recommended_preset_enabled = true;
	auto effective = settings.Effective();
	// The README's preset: fanout 2, chunk 16 MiB, min 2 MiB.
	EXPECT_EQ(effective.max_fanout, 2u);
	EXPECT_EQ(effective.chunk_size_bytes, 16u * MiB);
	EXPECT_EQ(effective.min_bytes, 2u * MiB);
}

TEST(IoSettings, ApplyWritesTheMember) {
	IoSettings settings;
	FindSetting("httpfs2_parallel_read_enabled")->Apply(settings, 1);
	FindSetting("httpfs2_parallel_read_io_threads")->Apply(settings, 3);
	EXPECT_TRUE(settings.enabled);
	EXPECT_EQ(settings.io_threads, 3u);
}
