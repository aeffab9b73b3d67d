// The stream controller against simulated links: each stream capped as a store caps a GET, the link capped as an
// instance is. It grows while streams add rate, stops where they do not, ignores windows the reads did not fill, and
// halves on a throttle.

#include "core/common/stream_controller.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace httpfs2;

namespace {

constexpr double MIB = 1024.0 * 1024.0;

//! A link of `per_stream` bytes/s per stream and `link` bytes/s in all, `latency` to the first byte.
struct Link {
	double per_stream;
	double link;
	double latency;
};

//! Runs `seconds` of transfers of `piece` bytes on as many streams as the controller allows (or `busy` of them),
//! each stream getting its share of the link; returns the streams at the end.
uint64_t Simulate(StreamController &controller, const Link &link, double seconds, uint64_t piece = 4 * 1024 * 1024,
                  double busy = 1.0) {
	double now = 0;
	while (now < seconds) {
		uint64_t streams = controller.Streams();
		double used = std::max(1.0, static_cast<double>(streams) * busy);
		double rate = std::min(used * link.per_stream, link.link) / used;
		double duration = link.latency + static_cast<double>(piece) / rate;
		// One wave: each used stream runs one transfer, all ending together.
		for (int i = 0; i < static_cast<int>(used); i++) {
			controller.Started(now);
		}
		now += duration;
		for (int i = 0; i < static_cast<int>(used); i++) {
			controller.Finished(piece, duration, now);
		}
	}
	return controller.Streams();
}

} // namespace

TEST(StreamController, GrowsWhileStreamsAddRateAndStopsWhereTheLinkIsFull) {
	StreamController controller;
	EXPECT_EQ(controller.Streams(), StreamController::START_STREAMS);
	// A big instance scaled down: 9 MiB/s a stream, 144 MiB/s in all (16 streams' worth), 10 ms.
	auto streams = Simulate(controller, Link {9 * MIB, 144 * MIB, 0.01}, 60);
	auto settled = controller.Snapshot().settled_streams;
	EXPECT_GE(settled, 13u) << "the link holds 16 streams";
	EXPECT_LE(settled, 19u) << "streams past the link's capacity bring nothing";
	EXPECT_GE(streams, settled);
	EXPECT_LE(streams, settled + settled / 2) << "at most one probe above the settled count";
}

TEST(StreamController, KeepsTheStartWhereMoreStreamsBringNothing) {
	StreamController controller;
	// The link is full at 4 streams, and first bytes come at once (more streams would hide no wait).
	for (int round = 0; round < 5; round++) {
		auto streams = Simulate(controller, Link {90 * MIB, 360 * MIB, 0.001}, 10);
		EXPECT_LE(streams, 6u) << "round " << round;
	}
	EXPECT_EQ(controller.Snapshot().settled_streams, StreamController::START_STREAMS);
}

TEST(StreamController, WindowsTheReadsDidNotFillTeachNothing) {
	StreamController controller;
	// Only a quarter of the streams busy: however fast the link, nothing says more would help.
	auto streams = Simulate(controller, Link {9 * MIB, 1000 * MIB, 0.01}, 30, 4 * 1024 * 1024, 0.25);
	EXPECT_EQ(streams, StreamController::START_STREAMS);
	EXPECT_GT(controller.Snapshot().windows, 0u);
}

TEST(StreamController, MoreStreamsHideFirstByteWaits) {
	StreamController controller;
	// Each stream could take 90 MiB/s and the link 360, but every 4 MiB transfer waits 25 ms for its first byte:
	// streams beyond 4 fill those waits.
	Simulate(controller, Link {90 * MIB, 360 * MIB, 0.025}, 20);
	EXPECT_GT(controller.Snapshot().settled_streams, StreamController::START_STREAMS);
}

TEST(StreamController, AThrottleHalvesTheStreamsAndHoldsThem) {
	StreamController controller;
	Simulate(controller, Link {9 * MIB, 1000 * MIB, 0.01}, 30);
	auto grown = controller.Streams();
	ASSERT_GE(grown, 16u);
	controller.Throttled();
	EXPECT_EQ(controller.Streams(), std::max<uint64_t>(grown / 2, StreamController::START_STREAMS));
	EXPECT_EQ(controller.Snapshot().throttles, 1u);
	controller.Reset();
	EXPECT_EQ(controller.Streams(), StreamController::START_STREAMS);
}
