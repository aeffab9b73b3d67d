#include "core/common/cost_model.hpp"
#include "core/common/io_settings.hpp"

#include <gtest/gtest.h>

using namespace httpfs2;

TEST(CostModel, ColdModelUsesMaxFanout) {
	CostModel model;
	EXPECT_FALSE(model.IsWarm());
	EXPECT_EQ(model.ChooseFanout(128 * MiB, 4, 0.5), 4u);
}

TEST(CostModel, PredictsLatencyPlusTransferPlusOverhead) {
	CostModel model;
	model.ObserveRoundTrip(0.05);
	// 100 MiB/s per stream: 10 MiB in 0.1 s of transfer after 0.05 s of latency
	model.ObserveSubRead(10 * MiB, 0.15);
	ASSERT_TRUE(model.IsWarm());
	auto snapshot = model.Snapshot();
	EXPECT_NEAR(snapshot.first_byte_latency_s, 0.05, 1e-9);
	EXPECT_NEAR(snapshot.stream_bandwidth_bps, 100.0 * MiB, 1.0);
	EXPECT_NEAR(model.PredictSeconds(100 * MiB, 4, 0.01), 0.05 + 0.25 + 0.03, 1e-9);
}

TEST(CostModel, ABodysTimeIsKnownOnceABandwidthIs) {
	CostModel model;
	double seconds = -1;
	EXPECT_FALSE(model.BodySeconds(10 * MiB, seconds)) << "no rate learnt yet";
	model.ObserveRoundTrip(0.05);
	model.ObserveSubRead(10 * MiB, 0.15); // 100 MiB/s a stream
	ASSERT_TRUE(model.BodySeconds(20 * MiB, seconds));
	EXPECT_NEAR(seconds, 0.2, 1e-9);
}

TEST(CostModel, ChoosesTheFanoutWithLeastPredictedTime) {
	CostModel model;
	model.ObserveRoundTrip(0.05);
	model.ObserveSubRead(10 * MiB, 0.15);
	// 128 MiB: 1.28 s at n=1; each extra stream saves a lot but costs 0.5 s
	EXPECT_EQ(model.ChooseFanout(128 * MiB, 8, 0.5), 2u);
	EXPECT_EQ(model.ChooseFanout(128 * MiB, 8, 0.0), 8u);
	EXPECT_EQ(model.ChooseFanout(1 * MiB, 8, 0.5), 1u);
	EXPECT_EQ(model.ChooseFanout(128 * MiB, 1, 0.0), 1u);
}

TEST(CostModel, AdaptiveOverheadLearnsTheExcess) {
	CostModel model;
	EXPECT_DOUBLE_EQ(model.OverheadSeconds(true, 0.5), 0.5);
	model.ObserveRoundTrip(0.05);
	model.ObserveSubRead(10 * MiB, 0.15);
	// a 40 MiB read over 4 streams is predicted 0.05 + 0.1 s; it took 0.3 s: 0.05 s per extra stream
	for (int i = 0; i < 50; i++) {
		model.ObserveSplitRead(40 * MiB, 4, 0.3);
	}
	EXPECT_NEAR(model.OverheadSeconds(true, 0.5), 0.05, 1e-6);
	EXPECT_DOUBLE_EQ(model.OverheadSeconds(false, 0.5), 0.5);
}

TEST(CostModel, OverheadIsClampedAtZero) {
	CostModel model;
	model.ObserveRoundTrip(0.05);
	model.ObserveSubRead(10 * MiB, 0.15);
	model.ObserveSplitRead(40 * MiB, 4, 0.01);
	EXPECT_DOUBLE_EQ(model.OverheadSeconds(true, 0.5), 0.0);
}

TEST(CostModel, EwmaMovesTowardNewSamples) {
	CostModel model;
	model.ObserveRoundTrip(0.1);
	model.ObserveRoundTrip(0.0); // ignored
	model.ObserveRoundTrip(0.2);
	EXPECT_NEAR(model.Snapshot().first_byte_latency_s, 0.1 + CostModel::EWMA_ALPHA * 0.1, 1e-12);
	model.Reset();
	EXPECT_EQ(model.Snapshot().latency_samples, 0u);
}

TEST(CostModel, SmallTransfersAreNoBandwidthSamples) {
	CostModel model;
	model.ObserveRoundTrip(0.025);
	model.ObserveSubRead(CostModel::MIN_BANDWIDTH_SAMPLE_BYTES, 0.025 + 0.003);
	model.ObserveSubRead(100, 0.026); // a bloom filter: first byte and scheduling only
	auto snapshot = model.Snapshot();
	EXPECT_EQ(snapshot.bandwidth_samples, 1u);
	EXPECT_NEAR(snapshot.stream_bandwidth_bps, CostModel::MIN_BANDWIDTH_SAMPLE_BYTES / 0.003, 1.0);
}

TEST(CostModel, AStoreIsNearOnlyOnceItsLatencyIsMeasuredUnderTheLimit) {
	CostModel model;
	EXPECT_FALSE(model.Snapshot().IsNear(5)); // unmeasured: treated as far, so a first scan is read ahead
	model.ObserveRoundTrip(0.0018);           // the rig at 0 ms: first opens in about 2 ms
	EXPECT_TRUE(model.Snapshot().IsNear(5));
	EXPECT_FALSE(model.Snapshot().IsNear(0)); // 0: nothing is near
	for (int i = 0; i < 20; i++) {
		model.ObserveRoundTrip(0.025); // the same database meets a store 25 ms away
	}
	EXPECT_FALSE(model.Snapshot().IsNear(5));
}
