// ObjectReadAhead with a format it knows nothing of: a made-up format whose last 16 bytes name the range its readers
// read first, and whose readers read one range after every read. All the object learns of it comes through the
// FormatKnowledge it is given (Parquet's is one of them), so this format's fetches follow the same seam.

#include "core/read_ahead/object_read_ahead.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

using namespace httpfs2;

namespace {

constexpr uint64_t TRAILER_SIZE = 16;

//! The test format's layout: the range its readers read first, from its trailer.
struct IndexLayout : FileLayout {
	ByteRange first {0, 0};
};

//! Whatever the read, the next one is at `next`.
class FixedPredictor : public AccessPredictor {
public:
	FixedPredictor(ByteRange next_p, std::shared_ptr<std::atomic<int>> reads_p) : next(next_p), reads(reads_p) {
	}
	Prediction OnRead(const ByteRange &read, const PredictionLimits &limits) override {
		(*reads)++;
		Prediction prediction;
		prediction.ranges.push_back(PredictedRange {next, next.length});
		return prediction;
	}

private:
	const ByteRange next;
	const std::shared_ptr<std::atomic<int>> reads;
};

class IndexKnowledge : public FormatKnowledge {
public:
	IndexKnowledge(uint64_t file_size_p, ByteRange next_p) : file_size(file_size_p), next(next_p) {
	}
	std::unique_ptr<AccessPredictor> NewPredictor() const override {
		return std::unique_ptr<AccessPredictor>(new FixedPredictor(next, predicted_reads));
	}
	std::vector<std::function<void()>> SharePattern(const AccessPredictor &) override {
		return {};
	}
	bool WatchShared(std::function<void()>) override {
		return false;
	}
	bool ReadsData(const ByteRange &read) const override {
		return read.offset + TRAILER_SIZE < file_size;
	}
	bool MetadataIn(const ByteRange &range, const char *, ByteRange &metadata) override {
		if (layout || range.End() != file_size || range.length < TRAILER_SIZE) {
			return false;
		}
		metadata = ByteRange {file_size - TRAILER_SIZE, TRAILER_SIZE};
		return true;
	}
	std::shared_ptr<const FileLayout> Parse(const char *bytes, uint64_t length) const override {
		auto parsed = std::make_shared<IndexLayout>();
		if (length != TRAILER_SIZE) {
			return nullptr;
		}
		std::memcpy(&parsed->first.offset, bytes, 8);
		std::memcpy(&parsed->first.length, bytes + 8, 8);
		return std::move(parsed);
	}
	bool Install(std::shared_ptr<const FileLayout> installed) override {
		layout = std::dynamic_pointer_cast<const IndexLayout>(std::move(installed));
		return layout != nullptr;
	}
	std::shared_ptr<const FileLayout> Layout() const override {
		return layout;
	}
	std::vector<PredictedRange> FirstRanges(const PredictionLimits &) const override {
		if (!layout) {
			return {};
		}
		return {PredictedRange {layout->first, layout->first.length}};
	}

	//! Reads the predictors of this knowledge were told of.
	const std::shared_ptr<std::atomic<int>> predicted_reads = std::make_shared<std::atomic<int>>(0);

private:
	const uint64_t file_size;
	const ByteRange next;
	std::shared_ptr<const IndexLayout> layout;
};

//! A file of random bytes whose trailer names `first`, and the requests made of it.
struct IndexedFile {
	IndexedFile(uint64_t size, ByteRange first) : data(size) {
		std::mt19937_64 random(7);
		for (auto &byte : data) {
			byte = static_cast<char>(random());
		}
		std::memcpy(data.data() + size - TRAILER_SIZE, &first.offset, 8);
		std::memcpy(data.data() + size - 8, &first.length, 8);
	}
	ObjectReadAhead::Fetcher Fetcher() {
		return [this](const ByteRange &range, char *destination) {
			{
				std::lock_guard<std::mutex> guard(lock);
				requests.push_back(range);
			}
			std::memcpy(destination, data.data() + range.offset, range.length);
		};
	}
	std::vector<ByteRange> Requests() {
		std::lock_guard<std::mutex> guard(lock);
		return requests;
	}

	std::vector<char> data;
	std::mutex lock;
	std::vector<ByteRange> requests;
};

bool Same(const ByteRange &a, const ByteRange &b) {
	return a.offset == b.offset && a.length == b.length;
}

template <class Predicate>
bool WaitFor(Predicate done) {
	for (int i = 0; i < 2000 && !done(); i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	return done();
}

} // namespace

TEST(ObjectReadAhead, FetchesWhatAFormatsKnowledgeSaysWithNoParquetInIt) {
	const uint64_t size = 4 * MiB;
	const ByteRange first {1 * MiB, 256 * KiB};
	const ByteRange next {3 * MiB, 64 * KiB};
	IndexedFile file(size, first);
	MemoryBudget budget(64 * MiB);
	IoPool pool(2);
	IoStats stats;
	CostModel model;
	auto knowledge = new IndexKnowledge(size, next);
	auto predicted_reads = knowledge->predicted_reads;
	auto object = std::make_shared<ObjectReadAhead>(pool, budget, stats, model, size, file.Fetcher(),
	                                                std::unique_ptr<FormatKnowledge>(knowledge));
	ReadAheadTuning tuning;
	tuning.limits.max_ahead_bytes = 8 * MiB;
	tuning.limits.merge_gap_bytes = 0;
	tuning.chunk_size_bytes = 1 * MiB;
	tuning.min_bytes = 1 * MiB;
	tuning.max_fanout = 4;

	// The trailer fetched ahead of any reader: the knowledge learns the layout from it, and the range it names is
	// fetched next, before any reader asks.
	object->Prefetch({ByteRange {size - TRAILER_SIZE, TRAILER_SIZE}}, tuning);
	ASSERT_TRUE(WaitFor([&] { return file.Requests().size() == 2 && !object->IsFetching(); }));
	auto requests = file.Requests();
	EXPECT_TRUE(Same(requests[0], ByteRange {size - TRAILER_SIZE, TRAILER_SIZE}));
	EXPECT_TRUE(Same(requests[1], first));
	auto layout = std::dynamic_pointer_cast<const IndexLayout>(object->Layout());
	ASSERT_NE(layout, nullptr);
	EXPECT_TRUE(Same(layout->first, first));

	// A reader's predictor is the knowledge's: its first read is told to it, and the range it predicts is fetched.
	ReadAheadReader reader(object);
	std::vector<char> out(first.length);
	reader.Observe(first, tuning);
	auto served = object->Serve(first, out.data());
	object->EndReading(served.reading);
	EXPECT_TRUE(served.gaps.empty());
	EXPECT_EQ(served.served_bytes, first.length);
	EXPECT_EQ(std::memcmp(out.data(), file.data.data() + first.offset, first.length), 0);
	EXPECT_EQ(predicted_reads->load(), 1);

	ASSERT_TRUE(WaitFor([&] { return file.Requests().size() == 3 && !object->IsFetching(); }));
	EXPECT_TRUE(Same(file.Requests()[2], next));
	out.assign(next.length, 0);
	served = object->Serve(next, out.data());
	EXPECT_TRUE(served.gaps.empty());
	EXPECT_EQ(std::memcmp(out.data(), file.data.data() + next.offset, next.length), 0);
	// Nothing was fetched twice.
	EXPECT_EQ(file.Requests().size(), 3u);
	object->Close();
}
