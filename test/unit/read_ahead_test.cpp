// Read-ahead against a simulated object store: first-byte latency, per-request bandwidth, failures, and a log of
// every request, so tests check bytes, request counts and memory rather than timings.
#include "core/formats/parquet_knowledge.hpp"
#include "core/read_ahead/object_read_ahead.hpp"
#include "core/read_ahead/read_ahead_registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <set>
#include <thread>

using namespace httpfs2;

namespace {

class SimulatedStore {
public:
	SimulatedStore(uint64_t size, std::chrono::microseconds latency_p, double bytes_per_second_p)
	    : data(size), latency(latency_p), bytes_per_second(bytes_per_second_p) {
		std::mt19937_64 random(42);
		for (auto &byte : data) {
			byte = static_cast<char>(random());
		}
	}

	SimulatedStore(std::vector<char> bytes, std::chrono::microseconds latency_p)
	    : data(std::move(bytes)), latency(latency_p), bytes_per_second(1e9) {
	}

	//! Fails every request that overlaps [offset, offset + length).
	void FailRange(uint64_t offset, uint64_t length) {
		std::lock_guard<std::mutex> guard(lock);
		failing.push_back(ByteRange {offset, length});
	}

	void Fetch(const ByteRange &range, char *destination) {
		{
			std::lock_guard<std::mutex> guard(lock);
			requests.push_back(range);
			for (auto &bad : failing) {
				if (bad.offset < range.End() && range.offset < bad.End()) {
					throw std::runtime_error("simulated 503 for bytes " + std::to_string(range.offset));
				}
			}
		}
		auto transfer =
		    std::chrono::microseconds(static_cast<int64_t>(static_cast<double>(range.length) / bytes_per_second * 1e6));
		std::this_thread::sleep_for(latency + transfer);
		ASSERT_LE(range.End(), data.size());
		std::memcpy(destination, data.data() + range.offset, range.length);
	}

	ObjectReadAhead::Fetcher Fetcher() {
		return [this](const ByteRange &range, char *destination) {
			Fetch(range, destination);
		};
	}

	std::vector<ByteRange> Requests() {
		std::lock_guard<std::mutex> guard(lock);
		return requests;
	}

	//! How many times each byte was fetched, at most.
	uint64_t MaxFetchesOfOneByte() {
		std::vector<uint8_t> counts(data.size(), 0);
		for (auto &range : Requests()) {
			for (uint64_t i = range.offset; i < range.End(); i++) {
				counts[i]++;
			}
		}
		return *std::max_element(counts.begin(), counts.end());
	}

	std::vector<char> data;

private:
	std::chrono::microseconds latency;
	double bytes_per_second;
	std::mutex lock;
	std::vector<ByteRange> requests;
	std::vector<ByteRange> failing;
};

//! Polls `done` every millisecond for up to `limit` milliseconds; its last answer.
template <class Predicate>
bool WaitFor(Predicate done, int limit = 2000) {
	for (int i = 0; i < limit && !done(); i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	return done();
}

ReadAheadTuning Tuning(uint64_t max_ahead, uint64_t merge_gap = 16 * KiB) {
	ReadAheadTuning tuning;
	tuning.limits.max_ahead_bytes = max_ahead;
	tuning.limits.merge_gap_bytes = merge_gap;
	tuning.chunk_size_bytes = 1 * MiB;
	tuning.min_bytes = 512 * KiB;
	tuning.max_fanout = 4;
	return tuning;
}

//! Read-ahead of a file with Parquet's knowledge, as the adapter makes it.
std::shared_ptr<ObjectReadAhead> ParquetObject(IoPool &pool, MemoryBudget &budget, IoStats &stats, CostModel &model,
                                               uint64_t size, ObjectReadAhead::Fetcher fetcher,
                                               std::shared_ptr<PatternMemory> patterns = nullptr,
                                               const std::string &dataset = std::string()) {
	std::unique_ptr<FormatKnowledge> parquet(new ParquetKnowledge(size, std::move(patterns), dataset));
	return std::make_shared<ObjectReadAhead>(pool, budget, stats, model, size, std::move(fetcher), std::move(parquet));
}

//! The Parquet layout `object` learnt, or null.
std::shared_ptr<const ParquetLayout> ParquetLayoutOf(const ObjectReadAhead &object) {
	return std::dynamic_pointer_cast<const ParquetLayout>(object.Layout());
}

//! What the adapter does for one read: predict, serve, read the gaps from the store directly.
void ReaderRead(ReadAheadReader &reader, SimulatedStore &store, const ReadAheadTuning &tuning, uint64_t offset,
                uint64_t length, std::vector<char> &out, ServeResult *result = nullptr) {
	auto &object = reader.Object();
	out.assign(length, 0);
	ByteRange read {offset, length};
	reader.Observe(read, tuning);
	auto served = object.Serve(read, out.data());
	for (auto &gap : served.gaps) {
		store.Fetch(gap, out.data() + (gap.offset - offset));
	}
	object.EndReading(served.reading);
	object.Inspect(read, out.data());
	if (result) {
		*result = served;
	}
}

struct Fixture {
	Fixture(uint64_t size, uint64_t budget_bytes = 256 * MiB, size_t threads = 8,
	        std::chrono::microseconds latency = std::chrono::microseconds(2000), double bandwidth = 400e6)
	    : budget(budget_bytes), pool(threads), store(size, latency, bandwidth),
	      object(ParquetObject(pool, budget, stats, model, size, store.Fetcher())),
	      reader(new ReadAheadReader(object)) {
	}
	~Fixture() {
		if (object) {
			object->Close();
		}
	}
	MemoryBudget budget;
	IoPool pool;
	IoStats stats;
	CostModel model;
	SimulatedStore store;
	std::shared_ptr<ObjectReadAhead> object;
	std::unique_ptr<ReadAheadReader> reader;
};

//! Keeps a pool's only worker busy until it goes, so that every task submitted meanwhile stays queued.
class PoolBlocker {
public:
	explicit PoolBlocker(IoPool &pool) : held(gate) {
		pool.Submit([this] {
			std::lock_guard<std::mutex> wait_for_the_test(gate);
			released = true;
			release_seen.notify_all();
		});
	}
	//! Lets the worker go, and waits until it let go of this object.
	~PoolBlocker() {
		release_seen.wait(held, [this] { return released; });
	}

private:
	std::mutex gate;
	std::condition_variable release_seen;
	bool released = false;
	std::unique_lock<std::mutex> held;
};

ParquetLayout SyntheticLayout(size_t groups, size_t columns, uint64_t column_bytes) {
	ParquetLayout layout;
	uint64_t offset = 4;
	for (size_t g = 0; g < groups; g++) {
		RowGroupLayout group;
		group.span.offset = offset;
		for (size_t c = 0; c < columns; c++) {
			group.columns.push_back(ByteRange {offset, column_bytes});
			offset += column_bytes;
		}
		group.span.length = offset - group.span.offset;
		layout.row_groups.push_back(group);
	}
	return layout;
}

} // namespace

TEST(MemoryBudget, NeverExceedsTheLimit) {
	MemoryBudget budget(100);
	EXPECT_TRUE(budget.TryReserve(60));
	EXPECT_FALSE(budget.TryReserve(41));
	EXPECT_TRUE(budget.TryReserve(40));
	EXPECT_EQ(budget.InUse(), 100u);
	budget.Release(60);
	budget.SetLimit(30);
	EXPECT_FALSE(budget.TryReserve(1));
	budget.Release(40);
	EXPECT_TRUE(budget.TryReserve(30));
	EXPECT_EQ(budget.Peak(), 100u);
	std::vector<std::thread> threads;
	MemoryBudget shared(1000);
	std::atomic<uint64_t> over {0};
	for (int t = 0; t < 8; t++) {
		threads.emplace_back([&] {
			for (int i = 0; i < 10000; i++) {
				if (shared.TryReserve(7)) {
					if (shared.InUse() > 1000) {
						over++;
					}
					shared.Release(7);
				}
			}
		});
	}
	for (auto &thread : threads) {
		thread.join();
	}
	EXPECT_EQ(over.load(), 0u);
	EXPECT_LE(shared.Peak(), 1000u);
	EXPECT_EQ(shared.InUse(), 0u);
}

TEST(SequentialPredictor, WindowStartsDoublesCapsAndResets) {
	SequentialPredictor predictor(1000 * MiB);
	PredictionLimits limits {16 * MiB, 0};
	auto first = predictor.OnRead(ByteRange {0, 256 * KiB}, limits);
	ASSERT_EQ(first.ranges.size(), 1u);
	EXPECT_EQ(first.ranges[0].range.offset, 256 * KiB);
	EXPECT_EQ(first.ranges[0].range.length, 1 * MiB);
	auto second = predictor.OnRead(ByteRange {256 * KiB, 256 * KiB}, limits);
	ASSERT_EQ(second.ranges.size(), 1u);
	// Window 2 MiB from the end of this read; what was predicted already is not predicted again.
	EXPECT_EQ(second.ranges[0].range.offset, 256 * KiB + 1 * MiB);
	EXPECT_EQ(second.ranges[0].range.End(), 512 * KiB + 2 * MiB);
	uint64_t offset = 512 * KiB;
	Prediction last;
	for (int i = 0; i < 10; i++) {
		last = predictor.OnRead(ByteRange {offset, 256 * KiB}, limits);
		offset += 256 * KiB;
	}
	ASSERT_FALSE(last.ranges.empty());
	EXPECT_EQ(last.ranges.back().range.End(), offset + 16 * MiB);
	// A jump predicts nothing until the reader shows a new sequential run.
	EXPECT_TRUE(predictor.OnRead(ByteRange {500 * MiB, 256 * KiB}, limits).ranges.empty());
	auto resumed = predictor.OnRead(ByteRange {500 * MiB + 256 * KiB, 256 * KiB}, limits);
	ASSERT_EQ(resumed.ranges.size(), 1u);
	EXPECT_EQ(resumed.ranges[0].range.length, 1 * MiB);
}

TEST(SequentialPredictor, ReadsLargerThanTheCapStillHaveTheNextOneAhead) {
	// DuckDB's CSV reader: 32 MB reads, with max_ahead_bytes (from the cost model) at 16 MiB.
	SequentialPredictor predictor(1000 * MiB);
	PredictionLimits limits {16 * MiB, 0};
	const uint64_t read = 32 * MiB;
	auto first = predictor.OnRead(ByteRange {0, read}, limits);
	ASSERT_EQ(first.ranges.size(), 1u);
	EXPECT_EQ(first.ranges[0].range.End(), 2 * read);
	for (uint64_t offset = read; offset < 5 * read; offset += read) {
		auto next = predictor.OnRead(ByteRange {offset, read}, limits);
		ASSERT_EQ(next.ranges.size(), 1u);
		EXPECT_EQ(next.ranges[0].range.End(), offset + read + SequentialPredictor::READS_AHEAD * read);
	}
	// Never past the ceiling (half the memory budget).
	SequentialPredictor ceiling(1000 * MiB);
	limits.ceiling_bytes = 24 * MiB;
	ceiling.OnRead(ByteRange {0, read}, limits);
	auto next = ceiling.OnRead(ByteRange {read, read}, limits);
	ASSERT_EQ(next.ranges.size(), 1u);
	EXPECT_EQ(next.ranges[0].range.End(), 2 * read + 24 * MiB);
}

TEST(SequentialPredictor, ReadsOutOfOrderAreOneStreamFetchedOnceAndKept) {
	// DuckDB 2.0 reads a CSV as 2 MiB reads, eight at a time on its async pool, reaching the file in any order.
	const uint64_t read = 2 * MiB;
	const uint64_t reads = 64;
	std::vector<uint64_t> order;
	for (uint64_t batch = 0; batch < reads; batch += 8) {
		for (uint64_t i : {3, 1, 0, 2, 7, 5, 4, 6}) {
			order.push_back((batch + i) * read);
		}
	}
	SequentialPredictor predictor(reads * read);
	PredictionLimits limits {16 * MiB, 0};
	uint64_t predicted_until = 0;
	for (size_t n = 0; n < order.size(); n++) {
		// From the fourth batch on, every read finds its bytes fetched ahead already: one stream, its window grown.
		if (n >= 24) {
			EXPECT_LE(order[n] + read, predicted_until) << "read " << n << " was not fetched ahead";
		}
		auto prediction = predictor.OnRead(ByteRange {order[n], read}, limits);
		for (auto &range : prediction.ranges) {
			EXPECT_GE(range.range.offset, predicted_until) << "a byte predicted twice at read " << n;
			predicted_until = range.range.End();
		}
		// Nothing a read still to come needs is let go.
		for (size_t later = n + 1; later < order.size(); later++) {
			EXPECT_LE(prediction.drop_before, order[later]) << "read " << n << " drops what read " << later << " needs";
		}
	}
	EXPECT_EQ(predicted_until, reads * read);
}

//! DuckDB 2.0 keeps async_threads pieces of 2 MiB of one read in flight itself: where the reads are its pieces and
//! they reach as far as the window could, or run as many streams as read-ahead would add, read-ahead fetches nothing
//! (it would add no stream, only a copy of each piece); below that it does.
TEST(SequentialPredictor, NothingAheadWhereTheHostsOwnReadsReachAsFar) {
	const uint64_t read = 2 * MiB;
	auto predicted = [&](uint64_t host_read_streams, uint64_t host_piece, uint64_t max_ahead = 32 * MiB) {
		SequentialPredictor predictor(256 * MiB);
		PredictionLimits limits {max_ahead, 0};
		limits.host_reads = HostPieceReads {host_read_streams, host_piece};
		uint64_t bytes = 0;
		for (uint64_t offset = 0; offset < 64 * MiB; offset += read) {
			for (auto &range : predictor.OnRead(ByteRange {offset, read}, limits).ranges) {
				bytes += range.range.length;
			}
		}
		return bytes;
	};
	EXPECT_GT(predicted(1, read), 32 * MiB);
	EXPECT_GT(predicted(4, read), 32 * MiB); // 8 MiB in flight: the window reaches further
	EXPECT_EQ(predicted(16, read), 0u);      // 32 MiB in flight: as far as the window
	EXPECT_EQ(predicted(48, read), 0u);
	// A window further than the host's pieces reach (a far store's): as many streams as read-ahead would add are
	// enough; fewer, and the window reaches further.
	EXPECT_EQ(predicted(48, read, 128 * MiB), 0u);
	EXPECT_EQ(predicted(16, read, 128 * MiB), 0u);
	EXPECT_GT(predicted(8, read, 128 * MiB), 32 * MiB);
	// Reads of another length than the host's pieces are reads it did not cut: read ahead whatever its streams.
	EXPECT_GT(predicted(48, 4 * MiB), 32 * MiB);
}

//! DuckDB's CSV reader asks for buffers of 32 MB, which DuckDB 2.0 cuts into 2 MiB pieces and a remainder: the
//! remainder, shorter than a piece, belongs to the host's stream too, and opens no window; a jump elsewhere starts a
//! stream anew.
TEST(SequentialPredictor, AShortLastPieceOfTheHostsStreamOpensNoWindow) {
	const uint64_t piece = 2 * MiB, buffer = 32 * 1000 * 1000;
	SequentialPredictor predictor(1024 * MiB);
	PredictionLimits limits {128 * MiB, 0};
	limits.host_reads = HostPieceReads {48, piece};
	uint64_t bytes = 0;
	for (uint64_t start = 0; start < 4 * buffer; start += buffer) {
		for (uint64_t offset = start; offset < start + buffer; offset += piece) {
			auto length = std::min(piece, start + buffer - offset);
			for (auto &range : predictor.OnRead(ByteRange {offset, length}, limits).ranges) {
				bytes += range.range.length;
			}
		}
	}
	EXPECT_EQ(bytes, 0u);
	// A stream elsewhere, of reads the host did not cut, is read ahead.
	for (uint64_t offset = 512 * MiB; offset < 520 * MiB; offset += MiB) {
		for (auto &range : predictor.OnRead(ByteRange {offset, MiB}, limits).ranges) {
			bytes += range.range.length;
		}
	}
	EXPECT_GT(bytes, 0u);
}

TEST(SequentialPredictor, AFirstReadAwayFromTheStartPredictsNothing) {
	SequentialPredictor predictor(100 * MiB);
	EXPECT_TRUE(predictor.OnRead(ByteRange {100 * MiB - 8, 8}, PredictionLimits {16 * MiB, 0}).ranges.empty());
}

TEST(ParquetPredictor, SameColumnsOfTheNextRowGroups) {
	auto layout = std::make_shared<ParquetLayout>(SyntheticLayout(20, 4, 100 * KiB));
	ParquetPredictor predictor(layout);
	PredictionLimits limits {64 * MiB, 16 * KiB};
	auto &g0 = layout->row_groups[0];
	predictor.OnRead(g0.columns[1], limits);
	auto prediction = predictor.OnRead(g0.columns[3], limits);
	// The pattern grew to columns 1 and 3: the START_WINDOW_GROUPS row groups after the first get both.
	ASSERT_EQ(prediction.ranges.size(), 2u * ParquetPredictor::START_WINDOW_GROUPS);
	EXPECT_EQ(prediction.ranges[0].range.offset, layout->row_groups[1].columns[1].offset);
	EXPECT_EQ(prediction.ranges[1].range.offset, layout->row_groups[1].columns[3].offset);
	EXPECT_EQ(prediction.ranges.back().range.offset, layout->row_groups[4].columns[3].offset);
	// In-order row groups double the window: 8, then 16 groups ahead.
	auto &g1 = layout->row_groups[1];
	prediction = predictor.OnRead(g1.columns[1], limits);
	ASSERT_EQ(prediction.ranges.size(), 2u * 5);
	EXPECT_EQ(prediction.ranges[0].range.offset, layout->row_groups[5].columns[1].offset);
	EXPECT_EQ(prediction.ranges.back().range.offset, layout->row_groups[9].columns[3].offset);
	prediction = predictor.OnRead(layout->row_groups[2].columns[1], limits);
	ASSERT_EQ(prediction.ranges.size(), 2u * 9);
	EXPECT_EQ(prediction.ranges.back().range.offset, layout->row_groups[18].columns[3].offset);
	// A skip (filters pruned row groups 3-9) turns cautious: one group ahead, only the lead (filter) column.
	prediction = predictor.OnRead(layout->row_groups[10].columns[1], limits);
	EXPECT_TRUE(predictor.IsCautious());
	ASSERT_EQ(prediction.ranges.size(), 1u);
	EXPECT_EQ(prediction.ranges[0].range.offset, layout->row_groups[11].columns[1].offset);
	EXPECT_GT(prediction.drop_before, layout->row_groups[0].span.offset);
	EXPECT_TRUE(predictor.OnRead(layout->row_groups[10].columns[3], limits).ranges.empty());
	// CAUTIOUS_STREAK row groups in order again: back to the whole pattern.
	for (size_t group = 11; group < 11 + ParquetPredictor::CAUTIOUS_STREAK; group++) {
		prediction = predictor.OnRead(layout->row_groups[group].columns[1], limits);
		predictor.OnRead(layout->row_groups[group].columns[3], limits);
	}
	EXPECT_FALSE(predictor.IsCautious());
	ASSERT_EQ(prediction.ranges.size(), 2u);
	EXPECT_EQ(prediction.ranges[1].range.offset, layout->row_groups[15].columns[3].offset);
}

//! SyntheticLayout with a bloom filter of `filter_bytes` per column chunk, stored after all row groups in row group
//! order as DuckDB writes them.
ParquetLayout WithBloomFilters(ParquetLayout layout, uint64_t filter_bytes) {
	uint64_t offset = layout.row_groups.back().span.End();
	for (auto &group : layout.row_groups) {
		for (size_t column = 0; column < group.columns.size(); column++) {
			group.bloom_filters.push_back(ByteRange {offset, filter_bytes});
			offset += filter_bytes;
		}
	}
	return layout;
}

TEST(ParquetPredictor, BloomFiltersAFilteredScanReadsAreFetchedWithTheirRowGroups) {
	auto layout = std::make_shared<ParquetLayout>(WithBloomFilters(SyntheticLayout(20, 4, 100 * KiB), 47));
	ParquetPredictor predictor(layout);
	PredictionLimits limits {64 * MiB, 16 * KiB};
	auto &g0 = layout->row_groups[0];
	// DuckDB checks column 2's bloom filter before the row group's data: nothing to predict yet, and never the
	// filter the reader is reading.
	EXPECT_TRUE(predictor.OnRead(g0.bloom_filters[2], limits).ranges.empty());
	auto prediction = predictor.OnRead(g0.columns[2], limits);
	// First the filters of the next BLOOM_BLOCK_GROUPS groups as one range (the other columns' filters between them
	// merged in), read first; then each next group's data.
	auto block = static_cast<size_t>(ParquetPredictor::BLOOM_BLOCK_GROUPS);
	ASSERT_EQ(prediction.ranges.size(), 1u + ParquetPredictor::START_WINDOW_GROUPS);
	auto &filters = prediction.ranges[0];
	EXPECT_EQ(filters.range.offset, layout->row_groups[1].bloom_filters[2].offset);
	EXPECT_EQ(filters.range.End(), layout->row_groups[block].bloom_filters[2].End());
	EXPECT_EQ(filters.useful_bytes, block * 47u);
	for (size_t group = 1; group <= ParquetPredictor::START_WINDOW_GROUPS; group++) {
		EXPECT_EQ(prediction.ranges[group].range.offset, layout->row_groups[group].columns[2].offset);
	}
	// The next group's filter, read from what was fetched, teaches nothing new; a second filtered column is added to
	// the groups already predicted: its filters and the first column's again (what is held is not fetched twice).
	EXPECT_TRUE(predictor.OnRead(layout->row_groups[1].bloom_filters[2], limits).ranges.empty());
	prediction = predictor.OnRead(layout->row_groups[1].bloom_filters[3], limits);
	ASSERT_GE(prediction.ranges.size(), 2u);
	EXPECT_EQ(prediction.ranges[0].range.offset, layout->row_groups[2].bloom_filters[2].offset);
	EXPECT_EQ(prediction.ranges[0].range.End(), layout->row_groups[block].bloom_filters[3].End());
	EXPECT_EQ(prediction.ranges[0].useful_bytes, 2u * (block - 1) * 47);
	// Past the block, the next block's filters come with the first group that needs them.
	bool next_block = false;
	for (size_t group = 1; group <= block; group++) {
		for (auto &range : predictor.OnRead(layout->row_groups[group].columns[2], limits).ranges) {
			next_block = next_block || range.range.offset == layout->row_groups[block + 1].bloom_filters[2].offset;
		}
	}
	EXPECT_TRUE(next_block);
	EXPECT_EQ(predictor.Pattern().blooms, (std::vector<bool> {false, false, true, true}));
	// A footer read is no bloom filter read.
	ParquetPredictor other(layout);
	EXPECT_TRUE(
	    other.OnRead(ByteRange {layout->row_groups.back().bloom_filters.back().End(), 1000}, limits).ranges.empty());
	other.OnRead(g0.columns[2], limits);
	EXPECT_EQ(other.Pattern().blooms, (std::vector<bool> {false, false, false, false}));
}

TEST(ParquetPredictor, AScanStartingPastTheFirstRowGroupsIsCautiousAndThreadsAreNotSkips) {
	auto layout = std::make_shared<ParquetLayout>(SyntheticLayout(30, 3, 10 * KiB));
	PredictionLimits limits {64 * MiB, 0};
	ParquetPredictor pruned(layout);
	pruned.OnRead(layout->row_groups[12].columns[0], limits);
	EXPECT_TRUE(pruned.IsCautious());
	// A selective scan whose only row group is the third: one group ahead, its lead column only.
	ParquetPredictor selective(layout);
	auto first = selective.OnRead(layout->row_groups[2].columns[0], limits);
	auto rest = selective.OnRead(layout->row_groups[2].columns[1], limits);
	EXPECT_TRUE(selective.IsCautious());
	ASSERT_EQ(first.ranges.size(), 1u);
	EXPECT_EQ(first.ranges[0].range.offset, layout->row_groups[3].columns[0].offset);
	EXPECT_EQ(first.ranges[0].range.length, layout->row_groups[3].columns[0].length);
	for (auto &range : rest.ranges) {
		EXPECT_EQ(range.range.offset, layout->row_groups[3].columns[0].offset)
		    << "columns read after the lead one are not fetched ahead while cautious";
		EXPECT_EQ(range.range.length, layout->row_groups[3].columns[0].length);
	}
	ParquetPredictor threads(layout);
	for (size_t group : {1, 0, 3, 2, 5, 4, 7, 6}) {
		threads.OnRead(layout->row_groups[group].columns[0], limits);
	}
	EXPECT_FALSE(threads.IsCautious());
}

TEST(ParquetPredictor, AReaderJoinsAScanNearItsFurthestRowGroup) {
	auto layout = std::make_shared<ParquetLayout>(SyntheticLayout(40, 3, 10 * KiB));
	PredictionLimits limits {64 * MiB, 0};
	ParquetPredictor scan(layout);
	EXPECT_FALSE(scan.Joins(layout->row_groups[0].columns[0])) << "a scan that has read nothing has no place";
	scan.OnRead(layout->row_groups[0].columns[0], limits);
	scan.OnRead(layout->row_groups[10].columns[0], limits);
	EXPECT_TRUE(scan.Joins(layout->row_groups[10 + ParquetPredictor::IN_ORDER_SLACK].columns[1]));
	EXPECT_FALSE(scan.Joins(layout->row_groups[11 + ParquetPredictor::IN_ORDER_SLACK].columns[1]));
	EXPECT_TRUE(scan.Joins(layout->row_groups[10 - ParquetPredictor::DROP_LAG_GROUPS].columns[0]));
	EXPECT_FALSE(scan.Joins(layout->row_groups[9 - ParquetPredictor::DROP_LAG_GROUPS].columns[0]));
	// A group one of its readers read already is another scan's (threads of one scan claim distinct groups): say a
	// second scan of a small file, started while the first one's handles are still open.
	EXPECT_FALSE(scan.Joins(layout->row_groups[10].columns[1]));
	ParquetPredictor small(layout);
	small.OnRead(layout->row_groups[0].columns[0], limits);
	small.OnRead(layout->row_groups[1].columns[0], limits);
	EXPECT_FALSE(small.Joins(layout->row_groups[0].columns[0]));
	EXPECT_TRUE(small.Joins(layout->row_groups[2].columns[0]));
	EXPECT_FALSE(scan.Joins(ByteRange {layout->row_groups.back().span.End(), 100})) << "a footer read";
	// Each thread that joined widens what counts as in order by one group.
	scan.AddThread();
	EXPECT_TRUE(scan.Joins(layout->row_groups[11 + ParquetPredictor::IN_ORDER_SLACK].columns[1]));
}

TEST(ParquetPredictor, AFooterReadThatTakesTheEndOfTheLastChunkPredictsNothing) {
	auto layout = std::make_shared<ParquetLayout>(SyntheticLayout(1, 3, 64 * KiB));
	ParquetPredictor predictor(layout);
	auto data_end = layout->row_groups[0].span.End();
	// DuckDB's first footer read: 16 KiB from the end of a file whose footer is 1000 bytes.
	EXPECT_TRUE(
	    predictor.OnRead(ByteRange {data_end + 1000 - 16 * KiB, 16 * KiB}, PredictionLimits {MiB, 0}).ranges.empty());
	EXPECT_FALSE(predictor.Pattern().columns[2]);
}

TEST(ParquetPredictor, WholeRowGroupsAndMergedGaps) {
	auto layout = std::make_shared<ParquetLayout>(SyntheticLayout(8, 3, 64 * KiB));
	ParquetPredictor whole(layout);
	auto prediction = whole.OnRead(layout->row_groups[0].span, PredictionLimits {64 * MiB, 0});
	ASSERT_EQ(prediction.ranges.size(), ParquetPredictor::START_WINDOW_GROUPS);
	EXPECT_EQ(prediction.ranges[0].range.offset, layout->row_groups[1].span.offset);
	EXPECT_EQ(prediction.ranges[0].range.length, layout->row_groups[1].span.length);
	// Large row groups: a scan that may stop after its first one (LIMIT) gets only START_AHEAD_BYTES ahead.
	auto large = std::make_shared<ParquetLayout>(SyntheticLayout(8, 3, MiB));
	ParquetPredictor limited(large);
	prediction = limited.OnRead(large->row_groups[0].span, PredictionLimits {64 * MiB, 0});
	ASSERT_EQ(prediction.ranges.size(), 1u);
	EXPECT_EQ(prediction.ranges[0].range.offset, large->row_groups[1].span.offset);
	prediction = limited.OnRead(large->row_groups[1].span, PredictionLimits {64 * MiB, 0});
	EXPECT_EQ(prediction.ranges.back().range.offset, large->row_groups[7].span.offset);

	ParquetPredictor merged(layout);
	merged.OnRead(layout->row_groups[0].columns[0], PredictionLimits {64 * MiB, 0});
	prediction = merged.OnRead(layout->row_groups[0].columns[2], PredictionLimits {64 * MiB, 64 * KiB});
	// Columns 0 and 2 are 64 KiB apart: one range per row group with 128 KiB of the 192 KiB useful.
	ASSERT_EQ(prediction.ranges.size(), ParquetPredictor::START_WINDOW_GROUPS);
	EXPECT_EQ(prediction.ranges[0].range.length, 192 * KiB);
	EXPECT_EQ(prediction.ranges[0].useful_bytes, 128 * KiB);
	// The byte limit caps the window.
	ParquetPredictor capped(layout);
	prediction = capped.OnRead(layout->row_groups[0].span, PredictionLimits {layout->row_groups[0].span.length, 0});
	EXPECT_EQ(prediction.ranges.size(), 1u);
}

TEST(ObjectReadAhead, SequentialReaderGetsExactBytesAndNothingIsFetchedTwice) {
	Fixture fixture(24 * MiB + 12345);
	auto tuning = Tuning(8 * MiB);
	std::vector<char> out;
	uint64_t whole = 0;
	for (uint64_t offset = 0; offset < fixture.store.data.size(); offset += 300 * KiB) {
		uint64_t length = std::min<uint64_t>(300 * KiB, fixture.store.data.size() - offset);
		ServeResult result;
		ReaderRead(*fixture.reader, fixture.store, tuning, offset, length, out, &result);
		ASSERT_EQ(std::memcmp(out.data(), fixture.store.data.data() + offset, length), 0) << offset;
		whole += result.gaps.empty() ? 1 : 0;
	}
	EXPECT_EQ(fixture.store.MaxFetchesOfOneByte(), 1u);
	auto stats = fixture.stats.Snapshot();
	EXPECT_GT(whole, 70u);
	EXPECT_GT(stats.Get(Counter::READ_AHEAD_REQUESTS), 10u);
	EXPECT_EQ(stats.Get(Counter::READ_AHEAD_BYTES_USED), fixture.store.data.size() - 300 * KiB);
	fixture.object->Close();
	EXPECT_EQ(fixture.object->HeldBytes(), 0u);
}

TEST(ObjectReadAhead, SegmentsComeFromTheBudgetsAllocatorAndAllGoBack) {
	class CountingAllocator : public BufferAllocator {
	public:
		char *Allocate(uint64_t size) override {
			allocations++;
			live_bytes += size;
			return new char[size];
		}
		void Free(char *data, uint64_t size) override {
			live_bytes -= size;
			delete[] data;
		}
		std::atomic<uint64_t> allocations {0};
		std::atomic<uint64_t> live_bytes {0};
	};
	auto allocator = std::make_shared<CountingAllocator>();
	MemoryBudget budget(64 * MiB, allocator);
	IoPool pool(4);
	IoStats stats;
	CostModel model;
	SimulatedStore store(8 * MiB, std::chrono::microseconds(500), 400e6);
	auto object = ParquetObject(pool, budget, stats, model, store.data.size(), store.Fetcher());
	ReadAheadReader reader(object);
	auto tuning = Tuning(2 * MiB);
	std::vector<char> out;
	for (uint64_t offset = 0; offset < 4 * MiB; offset += 256 * KiB) {
		ReaderRead(reader, store, tuning, offset, 256 * KiB, out);
		ASSERT_EQ(std::memcmp(out.data(), store.data.data() + offset, 256 * KiB), 0) << offset;
	}
	object->Close();
	EXPECT_EQ(allocator->allocations.load(), stats.Snapshot().Get(Counter::READ_AHEAD_REQUESTS));
	EXPECT_GT(allocator->allocations.load(), 0u);
	EXPECT_EQ(allocator->live_bytes.load(), 0u) << "every segment buffer was given back";
}

TEST(ObjectReadAhead, BudgetIsNeverExceededAndReadsStayExact) {
	Fixture fixture(16 * MiB, 2 * MiB);
	auto tuning = Tuning(8 * MiB);
	std::vector<char> out;
	for (uint64_t offset = 0; offset < fixture.store.data.size(); offset += 256 * KiB) {
		ReaderRead(*fixture.reader, fixture.store, tuning, offset, 256 * KiB, out);
		ASSERT_EQ(std::memcmp(out.data(), fixture.store.data.data() + offset, 256 * KiB), 0);
		ASSERT_LE(fixture.budget.InUse(), 2 * MiB);
	}
	EXPECT_LE(fixture.budget.Peak(), 2 * MiB);
	EXPECT_GT(fixture.stats.Snapshot().Get(Counter::READ_AHEAD_SKIPPED_BUDGET), 0u);
	EXPECT_GT(fixture.stats.Snapshot().Get(Counter::READ_AHEAD_BYTES_USED), 0u);
}

TEST(ObjectReadAhead, FailedFetchesAreSilentAndTheReaderReadsItself) {
	Fixture fixture(8 * MiB);
	fixture.store.FailRange(3 * MiB, 100);
	auto tuning = Tuning(4 * MiB);
	std::vector<char> out;
	bool reader_failed = false;
	for (uint64_t offset = 0; offset < 8 * MiB; offset += 512 * KiB) {
		try {
			ReaderRead(*fixture.reader, fixture.store, tuning, offset, 512 * KiB, out);
			ASSERT_EQ(std::memcmp(out.data(), fixture.store.data.data() + offset, 512 * KiB), 0);
		} catch (std::runtime_error &error) {
			// Only the reader's own read of the failing bytes fails, with the store's error.
			EXPECT_NE(std::string(error.what()).find("simulated 503"), std::string::npos);
			EXPECT_LE(offset, 3 * MiB);
			EXPECT_GT(offset + 512 * KiB, 3 * MiB);
			reader_failed = true;
		}
	}
	EXPECT_TRUE(reader_failed);
	EXPECT_GT(fixture.stats.Snapshot().Get(Counter::READ_AHEAD_FAILURES), 0u);
}

TEST(ObjectReadAhead, AReadOfAQueuedFetchTakesItOverAndOneOfAFetchInFlightWaits) {
	// One slow IO thread: most predicted fetches sit in the queue when the reader gets to them.
	Fixture fixture(16 * MiB, 256 * MiB, 1, std::chrono::microseconds(20000));
	auto tuning = Tuning(16 * MiB);
	std::vector<char> out;
	uint64_t waited = 0;
	for (uint64_t offset = 0; offset < 16 * MiB; offset += MiB) {
		ServeResult result;
		ReaderRead(*fixture.reader, fixture.store, tuning, offset, MiB, out, &result);
		ASSERT_EQ(std::memcmp(out.data(), fixture.store.data.data() + offset, MiB), 0);
		waited += result.waited ? 1 : 0;
	}
	EXPECT_GT(waited, 5u);
	EXPECT_EQ(fixture.store.MaxFetchesOfOneByte(), 1u);
}

TEST(ObjectReadAhead, SegmentsTheReaderFetchedItselfAreFreedOnceRead) {
	// The only IO thread is blocked: every fetch ahead stays queued, and the reader fetches each one itself.
	Fixture fixture(8 * MiB, 256 * MiB, 1, std::chrono::microseconds(0));
	PoolBlocker blocked(fixture.pool);
	auto tuning = Tuning(4 * MiB);
	std::vector<char> out;
	for (uint64_t offset = 0; offset < 8 * MiB; offset += MiB) {
		ReaderRead(*fixture.reader, fixture.store, tuning, offset, MiB, out);
		ASSERT_EQ(std::memcmp(out.data(), fixture.store.data.data() + offset, MiB), 0);
	}
	// All was read while the pool's stale tasks still wait: nothing stays allocated or charged for them.
	EXPECT_EQ(fixture.budget.InUse(), 0u);
	EXPECT_EQ(fixture.store.MaxFetchesOfOneByte(), 1u);
}

TEST(ObjectReadAhead, AFailedFetchOfTheReaderIsUnchargedAtOnce) {
	Fixture fixture(8 * MiB, 256 * MiB, 1, std::chrono::microseconds(0));
	fixture.store.FailRange(2 * MiB, MiB);
	PoolBlocker blocked(fixture.pool);
	auto tuning = Tuning(4 * MiB);
	std::vector<char> out;
	ReaderRead(*fixture.reader, fixture.store, tuning, 0, MiB, out);
	ReaderRead(*fixture.reader, fixture.store, tuning, MiB, MiB, out);
	// The reader's own fetch of the queued [2, 3) MiB fails, with the store's error, and is not asked again: a stalled
	// store fails each request after http_timeout, and the same bytes would wait as long again.
	EXPECT_THROW(ReaderRead(*fixture.reader, fixture.store, tuning, 2 * MiB, MiB, out), std::runtime_error);
	uint64_t asked = 0;
	for (auto &request : fixture.store.Requests()) {
		asked += request.offset < 3 * MiB && request.End() > 2 * MiB ? 1 : 0;
	}
	EXPECT_EQ(asked, 1u);
	for (uint64_t offset = 3 * MiB; offset < 8 * MiB; offset += MiB) {
		ReaderRead(*fixture.reader, fixture.store, tuning, offset, MiB, out);
		ASSERT_EQ(std::memcmp(out.data(), fixture.store.data.data() + offset, MiB), 0);
	}
	// The failed segment's charge went with its buffer, not when the pool's stale task for it runs.
	EXPECT_EQ(fixture.budget.InUse(), 0u);
}

TEST(ObjectReadAhead, AFetcherThatDeclinesLeavesTheReadToTheReader) {
	// A server that ignores ranges: every fetch declines, and the reader reads each part itself, with no error.
	Fixture fixture(8 * MiB);
	auto declined = std::make_shared<std::atomic<int>>(0);
	fixture.object->Close();
	fixture.object = ParquetObject(fixture.pool, fixture.budget, fixture.stats, fixture.model, 8 * MiB,
	                               [declined](const ByteRange &, char *) {
		                               (*declined)++;
		                               throw FetchDeclined("ranges ignored");
	                               });
	fixture.reader.reset(new ReadAheadReader(fixture.object));
	auto tuning = Tuning(4 * MiB);
	std::vector<char> out;
	for (uint64_t offset = 0; offset < 8 * MiB; offset += MiB) {
		ReaderRead(*fixture.reader, fixture.store, tuning, offset, MiB, out);
		ASSERT_EQ(std::memcmp(out.data(), fixture.store.data.data() + offset, MiB), 0);
	}
	EXPECT_GT(declined->load(), 0);
}

TEST(ObjectReadAhead, ConcurrentReadersOfOneObject) {
	Fixture fixture(32 * MiB);
	auto tuning = Tuning(16 * MiB);
	std::vector<std::thread> readers;
	std::atomic<int> mismatches {0};
	for (int t = 0; t < 4; t++) {
		readers.emplace_back([&, t] {
			// Each scan thread has a handle, so a reader, of its own.
			ReadAheadReader reader(fixture.object);
			std::vector<char> out;
			// Threads claim chunks in file order, as DuckDB's scan threads claim row groups.
			for (uint64_t offset = static_cast<uint64_t>(t) * MiB; offset < 32 * MiB; offset += 4 * MiB) {
				ReaderRead(reader, fixture.store, tuning, offset, MiB, out);
				if (std::memcmp(out.data(), fixture.store.data.data() + offset, MiB) != 0) {
					mismatches++;
				}
			}
		});
	}
	for (auto &reader : readers) {
		reader.join();
	}
	EXPECT_EQ(mismatches.load(), 0);
}

//! Reads columns 0 and 3 of each row group of `groups` through `readers[pick(group)]`, checking the bytes; the
//! number of reads that found no read-ahead (had a gap).
template <class Pick>
uint64_t ScanColumns(Fixture &fixture, const ParquetLayout &layout, size_t first, size_t end,
                     std::vector<std::unique_ptr<ReadAheadReader>> &readers, Pick pick) {
	// Eight row groups' worth of the two columns ahead at most: the window, not the budget, decides.
	auto tuning = Tuning(MiB);
	std::vector<char> out;
	uint64_t missed = 0;
	for (size_t group = first; group < end; group++) {
		auto &reader = *readers[pick(group)];
		for (size_t column : {size_t(0), size_t(3)}) {
			auto &chunk = layout.row_groups[group].columns[column];
			ServeResult result;
			ReaderRead(reader, fixture.store, tuning, chunk.offset, chunk.length, out, &result);
			EXPECT_EQ(std::memcmp(out.data(), fixture.store.data.data() + chunk.offset, chunk.length), 0);
			missed += result.gaps.empty() ? 0 : 1;
		}
	}
	return missed;
}

TEST(ObjectReadAhead, TheThreadsOfOneScanShareItsPrediction) {
	// Each scan thread reads through a handle of its own and claims the next row group when done with one, so its
	// own reads jump by as many groups as the other threads took meanwhile, often more than IN_ORDER_SLACK. Alone,
	// each thread would take those for skips and fall back to one group of the lead column.
	auto layout = std::make_shared<ParquetLayout>(SyntheticLayout(40, 5, 64 * KiB));
	Fixture fixture(layout->row_groups.back().span.End() + 1000);
	fixture.object->UseLayout(layout);
	std::vector<std::unique_ptr<ReadAheadReader>> threads;
	for (int t = 0; t < 4; t++) {
		threads.emplace_back(new ReadAheadReader(fixture.object));
	}
	std::mt19937 random(7);
	uint64_t missed = ScanColumns(fixture, *layout, 0, 40, threads, [&](size_t) { return random() % 4; });
	// The first row group's two reads (the pattern is still being learned), at most one more; each thread predicting
	// for itself misses 11 here.
	EXPECT_LE(missed, 3u);
	EXPECT_EQ(fixture.store.MaxFetchesOfOneByte(), 1u);
	for (auto &request : fixture.store.Requests()) {
		for (auto &group : layout->row_groups) {
			for (size_t column : {size_t(1), size_t(2), size_t(4)}) {
				EXPECT_FALSE(request.offset < group.columns[column].End() &&
				             group.columns[column].offset < request.End());
			}
		}
	}
	// A scan of the same file that starts from the beginning after this one ended predicts for itself.
	std::vector<std::unique_ptr<ReadAheadReader>> again;
	again.emplace_back(new ReadAheadReader(fixture.object));
	EXPECT_LE(ScanColumns(fixture, *layout, 0, 40, again, [](size_t) { return 0; }), 2u);
}

TEST(ObjectReadAhead, ScanThreadsClaimingRowGroupsConcurrently) {
	// Real threads, as DuckDB's: each claims the next row group when done with one and reads it through a handle
	// of its own. Every byte right, the shared prediction keeps them served, and nothing is held afterwards.
	auto layout = std::make_shared<ParquetLayout>(SyntheticLayout(60, 5, 64 * KiB));
	Fixture fixture(layout->row_groups.back().span.End() + 1000);
	fixture.object->UseLayout(layout);
	std::atomic<size_t> next {0};
	std::atomic<uint64_t> missed {0};
	std::vector<std::thread> threads;
	for (int t = 0; t < 4; t++) {
		threads.emplace_back([&] {
			std::vector<std::unique_ptr<ReadAheadReader>> own;
			own.emplace_back(new ReadAheadReader(fixture.object));
			for (size_t group = next++; group < layout->row_groups.size(); group = next++) {
				missed += ScanColumns(fixture, *layout, group, group + 1, own, [](size_t) { return 0; });
			}
		});
	}
	for (auto &thread : threads) {
		thread.join();
	}
	// Each thread's first row group may be read before the scan knows its columns; of 120 reads.
	EXPECT_LE(missed.load(), 12u);
	fixture.object->Close();
	EXPECT_EQ(fixture.object->HeldBytes(), 0u);
}

TEST(ObjectReadAhead, CloseWithFetchesInFlightFreesEverything) {
	for (int round = 0; round < 20; round++) {
		Fixture fixture(8 * MiB, 64 * MiB, 4, std::chrono::microseconds(3000));
		std::vector<char> out;
		ReaderRead(*fixture.reader, fixture.store, Tuning(8 * MiB), 0, 256 * KiB, out);
		ReaderRead(*fixture.reader, fixture.store, Tuning(8 * MiB), 256 * KiB, 256 * KiB, out);
		fixture.object->Close();
		EXPECT_EQ(fixture.object->HeldBytes(), 0u);
		// Later reads are served by nobody, and predict nothing.
		ReaderRead(*fixture.reader, fixture.store, Tuning(8 * MiB), 512 * KiB, 256 * KiB, out);
		EXPECT_EQ(std::memcmp(out.data(), fixture.store.data.data() + 512 * KiB, 256 * KiB), 0);
		fixture.object.reset();
		// Tasks still queued drop their (never fetched) segments as the pool reaches them.
		for (int i = 0; i < 200 && fixture.budget.InUse() > 0; i++) {
			std::this_thread::sleep_for(std::chrono::milliseconds(5));
		}
		EXPECT_EQ(fixture.budget.InUse(), 0u);
	}
}

TEST(ObjectReadAhead, ParquetFooterSwitchesToRowGroupPrediction) {
	auto layout = std::make_shared<ParquetLayout>(SyntheticLayout(30, 5, 200 * KiB));
	uint64_t size = layout->row_groups.back().span.End() + 1000;
	Fixture fixture(size);
	fixture.object->UseLayout(layout);
	auto tuning = Tuning(32 * MiB);
	std::vector<char> out;
	uint64_t served = 0;
	for (auto &group : layout->row_groups) {
		for (size_t column : {size_t(0), size_t(3)}) {
			ServeResult result;
			ReaderRead(*fixture.reader, fixture.store, tuning, group.columns[column].offset,
			           group.columns[column].length, out, &result);
			ASSERT_EQ(std::memcmp(out.data(), fixture.store.data.data() + group.columns[column].offset,
			                      group.columns[column].length),
			          0);
			served += result.gaps.empty() ? 1 : 0;
		}
	}
	// Everything but the first row group's two reads (and a pattern still being learned) comes from read-ahead.
	EXPECT_GE(served, 2u * 30 - 3);
	// Columns 1, 2 and 4 are never fetched: the bytes fetched are the bytes read.
	for (auto &request : fixture.store.Requests()) {
		for (size_t group = 0; group < layout->row_groups.size(); group++) {
			for (size_t column : {size_t(1), size_t(2), size_t(4)}) {
				auto &chunk = layout->row_groups[group].columns[column];
				EXPECT_FALSE(request.offset < chunk.End() && chunk.offset < request.End());
			}
		}
	}
	fixture.object->Close();
	EXPECT_EQ(fixture.stats.Snapshot().Get(Counter::READ_AHEAD_BYTES_WASTED), 0u);
}

//! Waits for `store`'s second request and checks it is `chunk`: the first row group's column, fetched on its own
//! after the footer.
void ExpectChunkAfterFooter(SimulatedStore &store, const ByteRange &chunk) {
	ASSERT_TRUE(WaitFor([&] { return store.Requests().size() >= 2; }));
	auto requests = store.Requests();
	ASSERT_EQ(requests.size(), 2u);
	EXPECT_EQ(requests[1].offset, chunk.offset);
	EXPECT_EQ(requests[1].length, chunk.length);
}

//! Files of one dataset (the same Parquet bytes, each in a store of its own) whose objects share one pattern memory.
struct DatasetFiles {
	std::vector<char> bytes;
	uint64_t size = 0;
	uint64_t tail = 0;
	MemoryBudget budget {64 * MiB};
	IoPool pool {4};
	IoStats stats;
	CostModel model;
	std::shared_ptr<PatternMemory> patterns = std::make_shared<PatternMemory>();
	std::vector<std::unique_ptr<SimulatedStore>> stores;

	DatasetFiles() {
		std::ifstream file(std::string(HTTPFS2_TEST_DATA_DIR) + "/row_groups.parquet", std::ios::binary);
		bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
		size = bytes.size();
		tail = ParquetFooter::DuckDBTailReadSize(size);
	}
	//! A file of the dataset; `store` is where it is read from.
	std::shared_ptr<ObjectReadAhead> Add(SimulatedStore *&store) {
		stores.emplace_back(new SimulatedStore(bytes, std::chrono::microseconds(1000)));
		store = stores.back().get();
		return ParquetObject(pool, budget, stats, model, size, store->Fetcher(), patterns, "s3://bucket/dataset/");
	}
};

TEST(ObjectReadAhead, AFooterFetchedAheadStartsTheFirstRowGroupWithTheDatasetsPattern) {
	DatasetFiles dataset;
	ASSERT_GT(dataset.bytes.size(), 1000u);
	auto &bytes = dataset.bytes;
	auto size = dataset.size, tail = dataset.tail;
	SimulatedStore *first_store, *second_store;
	auto first = dataset.Add(first_store);
	auto second = dataset.Add(second_store);
	auto tuning = Tuning(32 * MiB);

	// A reader of the first file reads the footer, then column 1 of row group 0.
	std::vector<char> out;
	ReadAheadReader first_reader(first);
	ReaderRead(first_reader, *first_store, tuning, size - tail, tail, out);
	auto layout = ParquetLayoutOf(*first);
	ASSERT_NE(layout, nullptr);
	auto chunk = layout->row_groups[0].columns[1];
	ReaderRead(first_reader, *first_store, tuning, chunk.offset, chunk.length, out);

	// The second file's footer is fetched ahead of any reader: its row group 0, column 1 follows on its own.
	second->Prefetch({ByteRange {size - tail, tail}}, tuning);
	ExpectChunkAfterFooter(*second_store, chunk);
	// Its reader, opened now, finds both reads held.
	ReadAheadReader second_reader(second);
	ServeResult result;
	ReaderRead(second_reader, *second_store, tuning, size - tail, tail, out, &result);
	EXPECT_TRUE(result.gaps.empty());
	ReaderRead(second_reader, *second_store, tuning, chunk.offset, chunk.length, out, &result);
	EXPECT_TRUE(result.gaps.empty());
	EXPECT_EQ(std::memcmp(out.data(), bytes.data() + chunk.offset, chunk.length), 0);

	// A third file whose footer bytes are remembered (held, not fetched): the same, with only the chunk requested.
	SimulatedStore *third_store;
	auto third = dataset.Add(third_store);
	ASSERT_TRUE(third->Hold(ByteRange {size - tail, tail}, std::string(bytes.data() + size - tail, tail)));
	third->Prefetch({ByteRange {size - tail, tail}}, tuning);
	ASSERT_TRUE(WaitFor([&] { return !third_store->Requests().empty(); }));
	ASSERT_NE(third->Layout(), nullptr);
	auto requests = third_store->Requests();
	ASSERT_EQ(requests.size(), 1u);
	EXPECT_EQ(requests[0].offset, chunk.offset);
	first->Close();
	second->Close();
	third->Close();
}

TEST(ObjectReadAhead, AFooterFetchedBeforeTheDatasetHadAPatternFetchesWhatThePatternReadsWhenItComes) {
	// A glob fetches the footers of its first files at once, before its scan read any row group.
	DatasetFiles dataset;
	auto &bytes = dataset.bytes;
	auto size = dataset.size, tail = dataset.tail;
	SimulatedStore *first_store, *second_store, *third_store;
	auto first = dataset.Add(first_store);
	auto second = dataset.Add(second_store);
	auto third = dataset.Add(third_store);
	auto tuning = Tuning(32 * MiB);

	second->Prefetch({ByteRange {size - tail, tail}}, tuning);
	third->Prefetch({ByteRange {size - tail, tail}}, tuning);
	ASSERT_TRUE(WaitFor([&] { return second->Layout() != nullptr && third->Layout() != nullptr; }));
	// The third file is closed (its query ended) before the pattern comes: it fetches nothing more.
	third->Close();
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	EXPECT_EQ(second_store->Requests().size(), 1u); // the footer alone: no pattern to start with

	// A fourth file was read and let go by its reader before the pattern came (DuckDB 2.0 reads files ahead): its
	// first row group is not fetched again when the pattern comes.
	std::vector<char> out;
	SimulatedStore *fourth_store;
	auto fourth = dataset.Add(fourth_store);
	fourth->Prefetch({ByteRange {size - tail, tail}}, tuning);
	ASSERT_TRUE(WaitFor([&] { return fourth->Layout() != nullptr; }));
	{
		ReadAheadReader gone(fourth);
		ReaderRead(gone, *fourth_store, tuning, size - tail, tail, out);
		auto read = ParquetLayoutOf(*fourth)->row_groups[0].columns[1];
		ReaderRead(gone, *fourth_store, tuning, read.offset, read.length, out);
	}
	// What the reader's own reads started ahead ends first: only what the pattern adds later is counted.
	ASSERT_TRUE(WaitFor([&] { return !fourth->IsFetching(); }));
	auto fourth_requests = fourth_store->Requests().size();

	ReadAheadReader first_reader(first);
	ReaderRead(first_reader, *first_store, tuning, size - tail, tail, out);
	auto chunk = ParquetLayoutOf(*first)->row_groups[0].columns[1];
	ReaderRead(first_reader, *first_store, tuning, chunk.offset, chunk.length, out);

	// The first file's pattern starts the second file's first row group, on its own.
	ExpectChunkAfterFooter(*second_store, chunk);
	ReadAheadReader second_reader(second);
	ServeResult result;
	ReaderRead(second_reader, *second_store, tuning, chunk.offset, chunk.length, out, &result);
	EXPECT_TRUE(result.gaps.empty());
	EXPECT_EQ(std::memcmp(out.data(), bytes.data() + chunk.offset, chunk.length), 0);
	EXPECT_EQ(third_store->Requests().size(), 1u);
	EXPECT_EQ(fourth_store->Requests().size(), fourth_requests);
	first->Close();
	second->Close();
	fourth->Close();
}

TEST(ObjectReadAhead, AHeldFooterIsServedWithoutARequestWithinTheBudgetAndNeverWasted) {
	Fixture fixture(4 * MiB, 1 * MiB);
	auto &data = fixture.store.data;
	ByteRange tail {data.size() - 64 * KiB, 64 * KiB};
	std::string bytes(data.data() + tail.offset, tail.length);
	ASSERT_TRUE(fixture.object->Hold(tail, bytes));
	EXPECT_EQ(fixture.budget.InUse(), tail.length);
	// Overlapping what is held, of the wrong size, or past the budget: refused, nothing held.
	EXPECT_FALSE(fixture.object->Hold(ByteRange {tail.offset - KiB, 2 * KiB}, std::string(2 * KiB, 'x')));
	EXPECT_FALSE(fixture.object->Hold(ByteRange {0, KiB}, std::string(10, 'x')));
	EXPECT_FALSE(fixture.object->Hold(ByteRange {0, MiB}, std::string(MiB, 'x')));
	EXPECT_EQ(fixture.budget.InUse(), tail.length);

	auto tuning = Tuning(0);
	std::vector<char> out;
	ServeResult result;
	// DuckDB's reads of a footer: the trailer, then the whole tail.
	ReaderRead(*fixture.reader, fixture.store, tuning, data.size() - 8, 8, out, &result);
	EXPECT_TRUE(result.gaps.empty());
	EXPECT_EQ(std::memcmp(out.data(), data.data() + data.size() - 8, 8), 0);
	ReaderRead(*fixture.reader, fixture.store, tuning, tail.offset, tail.length, out, &result);
	EXPECT_TRUE(result.gaps.empty());
	EXPECT_EQ(std::memcmp(out.data(), data.data() + tail.offset, tail.length), 0);
	EXPECT_TRUE(fixture.store.Requests().empty());
	// Read whole, it stays held for reads of parts of it again.
	ReaderRead(*fixture.reader, fixture.store, tuning, tail.offset + 100, 47, out, &result);
	EXPECT_TRUE(result.gaps.empty());
	EXPECT_EQ(std::memcmp(out.data(), data.data() + tail.offset + 100, 47), 0);
	EXPECT_TRUE(fixture.store.Requests().empty());
	auto stats = fixture.stats.Snapshot();
	EXPECT_EQ(stats.Get(Counter::FOOTER_BYTES_REUSED), tail.length + 8 + 47);
	EXPECT_EQ(stats.Get(Counter::READ_AHEAD_BYTES_USED), 0u);
	EXPECT_EQ(fixture.budget.InUse(), tail.length);

	// Freed at close, and not counted as wasted (nothing was fetched).
	fixture.object->Close();
	EXPECT_EQ(fixture.budget.InUse(), 0u);
	EXPECT_EQ(fixture.stats.Snapshot().Get(Counter::READ_AHEAD_BYTES_WASTED), 0u);
	EXPECT_FALSE(fixture.object->Hold(tail, bytes));
}

TEST(ObjectReadAhead, TwoScansOfOneFileWithOtherColumnsEachPredictForThemselves) {
	auto layout = std::make_shared<ParquetLayout>(SyntheticLayout(20, 4, 100 * KiB));
	Fixture fixture(layout->row_groups.back().span.End() + 1000);
	fixture.object->UseLayout(layout);
	ReadAheadReader early(fixture.object);
	ReadAheadReader late(fixture.object);
	auto tuning = Tuning(16 * MiB);
	std::vector<char> out;
	uint64_t late_served = 0;
	// One scan reads column 0 and is 10 row groups ahead of the other, which reads column 2: as in a query that
	// scans one table twice.
	for (size_t group = 0; group < 20; group++) {
		auto &ahead = layout->row_groups[group].columns[0];
		ReaderRead(early, fixture.store, tuning, ahead.offset, ahead.length, out);
		if (group >= 10) {
			ServeResult result;
			auto &behind = layout->row_groups[group - 10].columns[2];
			ReaderRead(late, fixture.store, tuning, behind.offset, behind.length, out, &result);
			ASSERT_EQ(std::memcmp(out.data(), fixture.store.data.data() + behind.offset, behind.length), 0);
			late_served += result.gaps.empty() ? 1 : 0;
		}
	}
	// The late scan's own window serves it; the early one's progress never drops what the late one needs.
	EXPECT_GE(late_served, 8u);
	EXPECT_EQ(fixture.store.MaxFetchesOfOneByte(), 1u);
}

namespace {

//! The key of a version of `path` with `etag` (size and modification time alike for all).
VersionKey Key(const std::string &path, const std::string &etag) {
	VersionKey key;
	key.path = path;
	key.etag = etag;
	return key;
}

//! What the registry's objects share, and a store of `size` bytes behind `latency`.
struct RegistryParts {
	RegistryParts(uint64_t size_p, std::chrono::microseconds latency) : size(size_p), store(size_p, latency, 1e9) {
	}
	std::shared_ptr<ObjectReadAhead> Create(ObjectReadAhead::Fetcher fetcher) {
		return ParquetObject(pool, budget, stats, model, size, std::move(fetcher));
	}
	std::shared_ptr<ObjectReadAhead> Create() {
		return Create(store.Fetcher());
	}

	const uint64_t size;
	MemoryBudget budget {64 * MiB};
	IoPool pool {2};
	IoStats stats;
	CostModel model;
	SimulatedStore store;
};

} // namespace

TEST(ReadAheadRegistry, HandlesOfOneVersionShareAnObjectAndTheLastClosesIt) {
	RegistryParts parts(4 * MiB, std::chrono::microseconds(100));
	ReadAheadRegistry registry;
	int created = 0;
	auto create = [&] {
		created++;
		return parts.Create();
	};
	auto first = registry.Attach(Key("s3://b/k", "etag1"), create);
	auto second = registry.Attach(Key("s3://b/k", "etag1"), create);
	auto other_version = registry.Attach(Key("s3://b/k", "etag2"), create);
	EXPECT_EQ(first, second);
	EXPECT_NE(first, other_version);
	EXPECT_EQ(created, 2);
	registry.Detach(Key("s3://b/k", "etag1"));
	EXPECT_FALSE(first->IsClosed());
	registry.Detach(Key("s3://b/k", "etag1"));
	EXPECT_TRUE(first->IsClosed());
	auto layout = std::make_shared<ParquetLayout>(SyntheticLayout(2, 2, 1000));
	registry.RememberLayout(Key("s3://b/k", "etag1"), layout);
	auto reopened = registry.Attach(Key("s3://b/k", "etag1"), create);
	EXPECT_EQ(reopened->Layout(), layout);
	EXPECT_EQ(registry.KnownLayout(Key("s3://b/k", "etag2")), nullptr);
}

TEST(ReadAheadRegistry, AFooterRememberedForAVersionIsHeldByItsNextObjectsOnly) {
	RegistryParts parts(32 * MiB, std::chrono::microseconds(100));
	ReadAheadRegistry registry;
	auto create = [&] {
		return parts.Create();
	};
	std::string footer(256 * KiB, 'f');
	ByteRange tail {parts.size - footer.size(), footer.size()};
	registry.RememberFooter(Key("s3://b/k", "etag1"), tail, footer.data());
	EXPECT_EQ(registry.FooterBytes(), tail.length);
	// A range within it changes nothing; one past the limit per file is not remembered.
	registry.RememberFooter(Key("s3://b/k", "etag1"), ByteRange {parts.size - 8, 8}, footer.data());
	registry.RememberFooter(Key("s3://b/big", "etag1"), ByteRange {0, ReadAheadRegistry::MAX_FOOTER_BYTES + 1},
	                        std::string(ReadAheadRegistry::MAX_FOOTER_BYTES + 1, 'x').data());
	EXPECT_EQ(registry.FooterBytes(), tail.length);

	// The metadata read again from before the tail (it did not fit in it) joins it; a read short of it does not.
	std::string metadata(300, 'm');
	registry.ExtendFooter(Key("s3://b/k", "etag1"), ByteRange {tail.offset - 400, 100}, metadata.data());
	registry.ExtendFooter(Key("s3://b/k", "etag1"), ByteRange {tail.offset - 200, 300}, metadata.data());
	tail = ByteRange {tail.offset - 200, tail.length + 200};
	EXPECT_EQ(registry.FooterBytes(), tail.length);

	auto same = registry.Attach(Key("s3://b/k", "etag1"), create);
	auto other_version = registry.Attach(Key("s3://b/k", "etag2"), create);
	EXPECT_EQ(same->HeldBytes(), tail.length);
	EXPECT_EQ(other_version->HeldBytes(), 0u);
	std::vector<char> out(8);
	auto served = same->Serve(ByteRange {parts.size - 8, 8}, out.data());
	EXPECT_TRUE(served.gaps.empty());
	EXPECT_EQ(std::string(out.begin(), out.end()), "ffffffff");
	served = same->Serve(ByteRange {tail.offset + 196, 8}, out.data());
	EXPECT_TRUE(served.gaps.empty());
	EXPECT_EQ(std::string(out.begin(), out.end()), "mmmmffff");
	EXPECT_TRUE(parts.store.Requests().empty());
	registry.Detach(Key("s3://b/k", "etag1"));
	registry.Detach(Key("s3://b/k", "etag2"));

	// The footers of the least recently used versions go first, past FOOTER_CACHE_BYTES in all.
	std::string large(ReadAheadRegistry::MAX_FOOTER_BYTES, 'x');
	ByteRange large_tail {parts.size - large.size(), large.size()};
	size_t files = ReadAheadRegistry::FOOTER_CACHE_BYTES / large.size() + 2;
	for (size_t i = 0; i < files; i++) {
		registry.RememberFooter(Key("s3://b/file" + std::to_string(i), "etag"), large_tail, large.data());
	}
	EXPECT_LE(registry.FooterBytes(), ReadAheadRegistry::FOOTER_CACHE_BYTES);
	auto oldest = registry.Attach(Key("s3://b/file0", "etag"), create);
	auto newest = registry.Attach(Key("s3://b/file" + std::to_string(files - 1), "etag"), create);
	EXPECT_EQ(oldest->HeldBytes(), 0u);
	EXPECT_EQ(newest->HeldBytes(), large.size());
	registry.CloseAll();
	EXPECT_EQ(parts.budget.InUse(), 0u);
}

TEST(ReadAheadRegistry, LastDetachDoesNotWaitForFetchesInFlight) {
	// A query that stops reading (LIMIT, a selective filter, an interrupt) closes its files at once; the fetches
	// it started finish on their own, holding their buffers and budget until then, and the registry's end waits.
	RegistryParts parts(8 * MiB, std::chrono::milliseconds(300));
	std::shared_ptr<ObjectReadAhead> object;
	{
		ReadAheadRegistry registry;
		object = registry.Attach(Key("s3://b/slow", "etag"), [&] { return parts.Create(); });
		object->Prefetch({ByteRange {0, 1 * MiB}}, Tuning(8 * MiB));
		ASSERT_TRUE(WaitFor([&] { return object->IsFetching(); }, 200));
		auto start = std::chrono::steady_clock::now();
		registry.Detach(Key("s3://b/slow", "etag"));
		EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
		EXPECT_TRUE(object->IsClosed());
		EXPECT_EQ(object->HeldBytes(), 0u);
		EXPECT_GT(parts.budget.InUse(), 0u) << "the fetch in flight keeps its charge until it ends";
	}
	// The registry's destruction waited for the fetch: nothing is in flight and nothing is charged.
	EXPECT_FALSE(object->IsFetching());
	EXPECT_EQ(parts.budget.InUse(), 0u);
	auto snapshot = parts.stats.Snapshot();
	EXPECT_GT(snapshot.Get(Counter::READ_AHEAD_BYTES), 0u);
	EXPECT_EQ(snapshot.Get(Counter::READ_AHEAD_BYTES_WASTED), snapshot.Get(Counter::READ_AHEAD_BYTES));
}

TEST(ReadAheadRegistry, AnAbandonedObjectLetsGoOfItsFetcherWhenItsLastFetchEnds) {
	// The fetcher holds the wrapped filesystem's handle, which must not wait for the registry's end (the database
	// tears its logging down first); CloseAll lets go of everything at once.
	RegistryParts parts(8 * MiB, std::chrono::milliseconds(100));
	auto handle = std::make_shared<int>(0);
	ReadAheadRegistry registry;
	auto object = registry.Attach(Key("s3://b/slow", "etag"), [&] {
		return parts.Create(
		    [&parts, handle](const ByteRange &range, char *destination) { parts.store.Fetch(range, destination); });
	});
	object->Prefetch({ByteRange {0, 1 * MiB}}, Tuning(8 * MiB));
	ASSERT_TRUE(WaitFor([&] { return object->IsFetching(); }, 200));
	EXPECT_GT(handle.use_count(), 1);
	registry.Detach(Key("s3://b/slow", "etag"));
	EXPECT_TRUE(WaitFor([&] { return !object->IsFetching(); }));
	EXPECT_EQ(handle.use_count(), 1) << "the last fetch of a closed object released the handle";

	auto pinned = registry.Pin(Key("s3://b/next", "etag"), [&] { return parts.Create(); });
	ASSERT_TRUE(pinned);
	registry.CloseAll();
	EXPECT_TRUE(pinned->IsClosed());
	EXPECT_FALSE(registry.Contains(Key("s3://b/next", "etag")));
}

TEST(ObjectReadAhead, WhatAReaderIsReadingItselfIsNotFetchedAheadMeanwhile) {
	// DuckDB 2.0 reads a file's ranges side by side: a prediction made from one of its reads can cover another read
	// in flight that found nothing held. Fetched again, those bytes crossed the network twice (and were written twice
	// to the block cache: issue 43).
	Fixture fixture(8 * MiB);
	std::vector<char> out(MiB);
	auto served = fixture.object->Serve(ByteRange {2 * MiB, MiB}, out.data());
	ASSERT_EQ(served.gaps.size(), 1u);
	EXPECT_EQ(served.reading.size(), 1u);
	fixture.object->Prefetch({ByteRange {MiB, 4 * MiB}}, Tuning(64 * MiB));
	ASSERT_TRUE(WaitFor([&] { return !fixture.object->IsFetching() && fixture.store.Requests().size() >= 2; }));
	for (auto &request : fixture.store.Requests()) {
		EXPECT_TRUE(request.End() <= 2 * MiB || request.offset >= 3 * MiB)
		    << "fetched ahead " << request.offset << "+" << request.length << " while the reader read it";
	}
	fixture.store.Fetch(served.gaps[0], out.data());
	fixture.object->EndReading(served.reading);
	// Once read, those bytes may be fetched ahead again (the next query's scan of the same version).
	fixture.object->Prefetch({ByteRange {2 * MiB, MiB}}, Tuning(64 * MiB));
	// Waits for that fetch itself: the first prediction's fetches may still be ending (IsFetching is false between two
	// of them), so the bytes held say nothing of which fetch ran.
	ASSERT_TRUE(WaitFor([&] { return fixture.store.MaxFetchesOfOneByte() >= 2 && !fixture.object->IsFetching(); }));
	EXPECT_EQ(fixture.store.MaxFetchesOfOneByte(), 2u) << "the reader's own read, then the later fetch ahead";
}

//! What the cost model measures at region: 25 ms to the first byte, 90 MiB/s per stream.
static CostModelSnapshot Region() {
	CostModelSnapshot region;
	region.first_byte_latency_s = 0.025;
	region.stream_bandwidth_bps = 90.0 * MiB;
	region.latency_samples = region.bandwidth_samples = 1;
	return region;
}

TEST(ReadAheadTuner, ColdAndMeasured) {
	IoSettings settings;
	CostModelSnapshot cold;
	auto tuning = ReadAheadTuner::Tune(settings, cold, 16, 256 * MiB);
	EXPECT_EQ(tuning.limits.max_ahead_bytes, 16 * ReadAheadTuner::COLD_BDP);
	auto region = Region();
	tuning = ReadAheadTuner::Tune(settings, region, 16, 256 * MiB);
	EXPECT_NEAR(static_cast<double>(tuning.limits.max_ahead_bytes), 16 * 0.025 * 90.0 * MiB, 1.0 * MiB);
	EXPECT_GT(tuning.min_bytes, settings.min_bytes) << "a window is cut in max_fanout pieces at most";
	EXPECT_EQ(tuning.split_min_bytes, settings.min_bytes) << "a whole file fetched ahead is cut as a split read is";
	EXPECT_EQ(tuning.split_max_fanout, settings.max_fanout);
	EXPECT_GE(tuning.limits.merge_gap_bytes, ReadAheadTuner::MIN_MERGE_GAP);
	EXPECT_LE(tuning.limits.merge_gap_bytes, ReadAheadTuner::MAX_MERGE_GAP);
	// Never more than half the budget ahead.
	EXPECT_EQ(ReadAheadTuner::Tune(settings, region, 16, 4 * MiB).limits.max_ahead_bytes, 2 * MiB);
	EXPECT_EQ(ReadAheadTuner::Tune(settings, region, 16, 256 * MiB).limits.ceiling_bytes, 128 * MiB);
}

TEST(ReadAheadTuner, AHostThatReadsAheadItselfHasNoGapMergedBeyondItsOwn) {
	// DuckDB 2.0 reads a row group's column chunks merged across gaps under 16 KiB, side by side on its pool: a wider
	// merge fetched the columns between them for nothing (the 30 KB of two columns per small file of the bench's
	// glob). DuckDB 1.5 reads them one after another: there a gap is cheaper than a round trip.
	IoSettings settings;
	auto region = Region();
	auto in_turn = ReadAheadTuner::Tune(settings, region, 16, 256 * MiB, 8, HostReads::IN_TURN);
	auto ahead = ReadAheadTuner::Tune(settings, region, 16, 256 * MiB, 8, HostReads::AHEAD);
	EXPECT_GT(in_turn.limits.merge_gap_bytes, 64 * KiB);
	EXPECT_EQ(ahead.limits.merge_gap_bytes, ReadAheadTuner::MIN_MERGE_GAP);
	EXPECT_EQ(ahead.limits.max_ahead_bytes, in_turn.limits.max_ahead_bytes);
}

TEST(ReadAheadTuner, FetchesAheadOnlyWhereTheWaitIsWorthHiding) {
	IoSettings settings;
	ASSERT_EQ(settings.min_latency_ms, 5u);
	auto fetch_ahead = [&](double latency_s, double mib_s) {
		CostModelSnapshot model;
		model.first_byte_latency_s = latency_s;
		model.latency_samples = 1;
		if (mib_s > 0) {
			model.stream_bandwidth_bps = mib_s * MiB;
			model.bandwidth_samples = 3;
		}
		return ReadAheadTuner::Tune(settings, model, 16, 256 * MiB).fetch_ahead;
	};
	// Until measured, read-ahead is on: a first scan at region must not pay the wait to find out.
	EXPECT_TRUE(ReadAheadTuner::Tune(settings, CostModelSnapshot(), 16, 256 * MiB).fetch_ahead);
	// region and far, from the first open on, whatever bandwidth a loaded client measures per stream.
	EXPECT_TRUE(fetch_ahead(0.025, 0));
	EXPECT_TRUE(fetch_ahead(0.027, 20));
	EXPECT_TRUE(fetch_ahead(0.080, 39));
	EXPECT_TRUE(fetch_ahead(0.006, 100));
	// The rig at 0 ms: first opens in 0.8-2 ms, streams measured at 20-440 MiB/s.
	EXPECT_FALSE(fetch_ahead(0.001, 0));
	EXPECT_FALSE(fetch_ahead(0.002, 436));
	EXPECT_FALSE(fetch_ahead(0.0008, 23));
	settings.min_latency_ms = 0;
	EXPECT_TRUE(fetch_ahead(0.0003, 500));
}

TEST(ReadAheadTuner, RangesWithinAFanoutShareOfTheWindowAreFetchedWhole) {
	IoSettings settings;
	auto region = Region();
	auto tuning = ReadAheadTuner::Tune(settings, region, 16, 256 * MiB);
	// As many streams as the stream controller starts with, within max_fanout.
	EXPECT_EQ(tuning.max_fanout, StreamController::START_STREAMS);
	EXPECT_EQ(tuning.min_bytes, tuning.limits.max_ahead_bytes / StreamController::START_STREAMS);
	// Streams the link rewarded cut the window finer, within max_fanout.
	EXPECT_EQ(ReadAheadTuner::Tune(settings, region, 16, 256 * MiB, 9).max_fanout, 9u);
	EXPECT_EQ(ReadAheadTuner::Tune(settings, region, 16, 256 * MiB, 64).max_fanout, settings.max_fanout);
	// A small window keeps the settings' min_bytes.
	EXPECT_EQ(ReadAheadTuner::Tune(settings, region, 16, 8 * MiB).min_bytes, settings.min_bytes);

	// A row group span of 3.8 MiB (above min_bytes, below a quarter of a 36 MiB window) is one request, not three:
	// the window has other row groups in flight beside it.
	Fixture fixture(64 * MiB);
	fixture.object->Prefetch({ByteRange {0, 3 * MiB + 800 * KiB}, ByteRange {16 * MiB, 40 * MiB}}, tuning);
	ASSERT_TRUE(WaitFor(
	    [&] { return fixture.stats.Snapshot().Get(Counter::READ_AHEAD_BYTES) == 3 * MiB + 800 * KiB + 40 * MiB; }));
	auto requests = fixture.store.Requests();
	ASSERT_FALSE(requests.empty());
	std::sort(requests.begin(), requests.end(),
	          [](const ByteRange &a, const ByteRange &b) { return a.offset < b.offset; });
	EXPECT_EQ(requests[0].offset, 0u);
	EXPECT_EQ(requests[0].length, 3 * MiB + 800 * KiB);
	EXPECT_GT(requests.size(), 2u) << "a range larger than the share is still cut into pieces";
}
