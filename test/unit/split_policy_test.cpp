#include "core/split/split_policy.hpp"

#include <gtest/gtest.h>

using namespace httpfs2;

namespace {

IoSettings Settings(uint64_t chunk, uint64_t max_fanout) {
	IoSettings settings;
	settings.chunk_size_bytes = chunk;
	settings.min_bytes = 64 * 1024;
	settings.max_fanout = max_fanout;
	settings.min_latency_ms = 5;
	return settings;
}

uint64_t Covered(const SplitPlan &plan) {
	uint64_t bytes = 0;
	for (auto &piece : plan.pieces) {
		bytes += piece.length;
	}
	return bytes;
}

} // namespace

//! A cold model (no latency measured) splits: it starts with the controller's streams and, following the link,
//! cuts pieces of half a chunk for as many streams as the read may come to.
TEST(SplitPolicy, FollowsTheLinkWithPiecesOfHalfAChunk) {
	CostModel model;
	auto settings = Settings(16 * MiB, 32);
	auto plan = SplitPolicy::Plan(settings, model, 256 * MiB, 1000);
	ASSERT_FALSE(plan.pieces.empty());
	EXPECT_TRUE(plan.follow_link);
	EXPECT_EQ(plan.pieces.size(), 32u); // 256 MiB / 8 MiB
	EXPECT_EQ(plan.pieces.front().offset, 1000u);
	EXPECT_EQ(Covered(plan), 256 * MiB);
	EXPECT_EQ(plan.fanout, std::min<uint64_t>(32, model.streams.Streams()));
}

//! A read smaller than a chunk is cut for twice the streams it starts with.
TEST(SplitPolicy, CutsASmallReadForTwiceItsStreams) {
	CostModel model;
	auto settings = Settings(16 * MiB, 32);
	auto plan = SplitPolicy::Plan(settings, model, 4 * MiB, 0);
	EXPECT_EQ(plan.pieces.size(), 2 * model.streams.Streams());
	EXPECT_EQ(Covered(plan), 4 * MiB);
}

//! Where the store answers within min_latency_ms, a read under one chunk is read whole; a larger one still splits.
TEST(SplitPolicy, TheLanGateKeepsReadsUnderAChunkWhole) {
	CostModel model;
	model.ObserveRoundTrip(0.001);
	auto settings = Settings(16 * MiB, 32);
	EXPECT_TRUE(SplitPolicy::Plan(settings, model, 8 * MiB, 0).pieces.empty());
	EXPECT_FALSE(SplitPolicy::Plan(settings, model, 64 * MiB, 0).pieces.empty());
	settings.min_latency_ms = 0;
	EXPECT_FALSE(SplitPolicy::Plan(settings, model, 8 * MiB, 0).pieces.empty());
}

TEST(SplitPolicy, OneStreamReadsWhole) {
	CostModel model;
	auto plan = SplitPolicy::Plan(Settings(16 * MiB, 1), model, 256 * MiB, 0);
	EXPECT_TRUE(plan.pieces.empty());
	EXPECT_EQ(plan.fanout, 1u);
}

//! With auto fan-out, the cost model's choice is the fan-out, and the read is cut for it alone.
TEST(SplitPolicy, AutoFanoutTakesTheModelsChoice) {
	CostModel model;
	model.ObserveRoundTrip(0.05);
	model.ObserveSubRead(10 * MiB, 0.15);
	auto settings = Settings(16 * MiB, 8);
	settings.auto_fanout_enabled = true;
	settings.auto_fanout_overhead_ms = 500;
	auto plan = SplitPolicy::Plan(settings, model, 128 * MiB, 0);
	EXPECT_FALSE(plan.follow_link);
	EXPECT_EQ(plan.fanout, model.ChooseFanout(128 * MiB, 8, 0.5));
	EXPECT_EQ(Covered(plan), plan.pieces.empty() ? 0 : 128 * MiB);
}

//! DuckDB 2.0 cuts a remote read into pieces of its block size and keeps async_threads of them in flight: a piece is
//! not split again where the host's streams are at least the fan-out; a read of another length (one the host did not
//! cut), or a host with fewer streams, still is.
TEST(SplitPolicy, APieceTheHostCutIsNotCutAgainWhereItReadsAsWide) {
	CostModel model;
	auto settings = Settings(16 * MiB, 32);
	settings.host_reads.piece_bytes = 2 * MiB;
	uint64_t fanout = SplitPolicy::Fanout(settings, model, 2 * MiB);
	ASSERT_GE(fanout, 2u);
	settings.host_reads.streams = fanout;
	EXPECT_TRUE(SplitPolicy::Plan(settings, model, 2 * MiB, 4 * MiB).pieces.empty());
	EXPECT_FALSE(SplitPolicy::Plan(settings, model, 2 * MiB - 1, 4 * MiB).pieces.empty());
	EXPECT_FALSE(SplitPolicy::Plan(settings, model, 3 * MiB, 4 * MiB).pieces.empty());
	settings.host_reads.streams = fanout - 1;
	EXPECT_FALSE(SplitPolicy::Plan(settings, model, 2 * MiB, 4 * MiB).pieces.empty());
	settings.host_reads.piece_bytes = 0; // DuckDB 1.5: reads are never cut by the host
	settings.host_reads.streams = 64;
	EXPECT_FALSE(SplitPolicy::Plan(settings, model, 2 * MiB, 4 * MiB).pieces.empty());
}
