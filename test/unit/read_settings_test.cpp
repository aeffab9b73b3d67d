#include "core/read_settings.hpp"

#include <gtest/gtest.h>

using namespace httpfs2;

TEST(ReadSettings, DefaultsMatchTheReadme) {
	ParallelReadSettings settings;
	EXPECT_FALSE(settings.enabled);
	EXPECT_EQ(settings.io_threads, 16u);
	EXPECT_EQ(settings.chunk_size_bytes, 16u * MiB);
	EXPECT_EQ(settings.max_fanout, 4u);
	EXPECT_EQ(settings.min_bytes, 2u * MiB);
	EXPECT_EQ(settings.auto_fanout_overhead_ms, 500u);
	ASSERT_EQ(AllSettings().size(), 10u);
	EXPECT_EQ(FindSetting("httpfs2_parallel_read_chunk_size_bytes")->default_value, 16777216);
}

TEST(ReadSettings, EverySettingHasADescriptionAndAPlace) {
	for (auto &spec : AllSettings()) {
		EXPECT_NE(std::string(spec.description), "") << spec.name;
		EXPECT_TRUE((spec.flag != nullptr) != (spec.number != nullptr)) << spec.name;
		EXPECT_EQ(spec.Validate(spec.default_value), "") << spec.name;
	}
}

TEST(ReadSettings, RejectsOutOfRangeNamingSettingAndRange) {
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

TEST(ReadSettings, PresetOverridesFanoutChunkAndMin) {
	ParallelReadSettings settings;
	settings.max_fanout = 16;
	settings.chunk_size_bytes = 1 * MiB;
	settings.min_bytes = 64 * KiB;
	EXPECT_EQ(settings.Effective().max_fanout, 16u);
	settings.recommended_preset_enabled = true;
	auto effective = settings.Effective();
	EXPECT_EQ(effective.max_fanout, 2u);
	EXPECT_EQ(effective.chunk_size_bytes, 16u * MiB);
	EXPECT_EQ(effective.min_bytes, 2u * MiB);
}

TEST(ReadSettings, ApplyWritesTheMember) {
	ParallelReadSettings settings;
	FindSetting("httpfs2_parallel_read_enabled")->Apply(settings, 1);
	FindSetting("httpfs2_parallel_read_io_threads")->Apply(settings, 3);
	EXPECT_TRUE(settings.enabled);
	EXPECT_EQ(settings.io_threads, 3u);
}
