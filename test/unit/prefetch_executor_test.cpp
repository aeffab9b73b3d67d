// The DuckDB-free part of the prefetch executor (core/prefetch/prefetch_executor): the gate and de-duplication, the
// budget a fetch ahead is charged to, and the delivery bookkeeping of one fetch (abandoned unless delivered, counted
// when sent, delivered only when it answered with bytes that name their version).

#include "core/prefetch/prefetch_executor.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

using httpfs2::AheadFetch;
using httpfs2::Counter;
using httpfs2::GatedPredictions;
using httpfs2::GatePredictions;
using httpfs2::IoStats;
using httpfs2::ListedPath;
using httpfs2::MemoryBudget;
using httpfs2::OpenPrediction;
using httpfs2::QueryFiles;
using httpfs2::ReserveAhead;
using httpfs2::RunAheadFetch;
using std::string;
using std::vector;

namespace {

struct Fetched {
	string bytes;
	bool names_version = true;
};

//! What a query's opens saw of one fetch ahead.
struct FakeQuery {
	bool Start(const string &path, uint64_t expected) {
		started.push_back(path + "#" + std::to_string(expected));
		return start_answer;
	}
	void Deliver(const string &path, std::shared_ptr<Fetched> fetched, uint64_t expected) {
		delivered.push_back(path + "#" + std::to_string(expected) + "=" + fetched->bytes);
	}
	void Abandon(const string &path, uint64_t expected) {
		abandoned.push_back(path + "#" + std::to_string(expected));
	}

	bool start_answer = true;
	vector<string> started;
	vector<string> delivered;
	vector<string> abandoned;
};

using Fetch = AheadFetch<std::shared_ptr<FakeQuery>, Fetched>;

vector<string> Paths(const vector<OpenPrediction> &predictions) {
	vector<string> paths;
	for (auto &prediction : predictions) {
		paths.push_back(prediction.path);
	}
	return paths;
}

vector<OpenPrediction> Mixed() {
	return {OpenPrediction::Footer(ListedPath {"s3://b/1.parquet", false, {}}),
	        OpenPrediction::Tail("s3://b/2.parquet"), OpenPrediction::Whole("s3://b/m.avro", 100),
	        OpenPrediction::Footer(ListedPath {"s3://b/3.parquet", false, {}}),
	        OpenPrediction::Contents(ListedPath {"s3://b/4.bin", true, {}})};
}

} // namespace

TEST(PrefetchGate, SplitsFootersAndContentsFromFetchesForOpensInOrder) {
	QueryFiles files;
	auto gated = GatePredictions(Mixed(), true, &files, "s3://b/0.parquet");
	EXPECT_EQ(Paths(gated.footers), (vector<string> {"s3://b/1.parquet", "s3://b/3.parquet"}));
	EXPECT_EQ(Paths(gated.contents), vector<string> {"s3://b/4.bin"});
	EXPECT_EQ(Paths(gated.for_open), (vector<string> {"s3://b/2.parquet", "s3://b/m.avro"}));
	EXPECT_EQ(gated.for_open[1].length, 100u);
}

TEST(PrefetchGate, PredictsEachFileOnceAcrossPredictorsAndNeverTheOpenedOne) {
	QueryFiles files;
	GatePredictions({OpenPrediction::Tail("s3://b/1.parquet")}, true, &files, "s3://b/0.parquet");
	auto gated = GatePredictions(Mixed(), true, &files, "s3://b/2.parquet");
	EXPECT_EQ(Paths(gated.footers), (vector<string> {"s3://b/3.parquet"}));
	EXPECT_EQ(Paths(gated.for_open), (vector<string> {"s3://b/2.parquet", "s3://b/m.avro"}));
	// The opened file itself, once opened, is not predicted again.
	gated = GatePredictions({OpenPrediction::Tail("s3://b/0.parquet")}, true, &files, "");
	EXPECT_TRUE(gated.Empty());
}

TEST(PrefetchGate, ShutGateFetchesNothingButTheOpenIsStillTheQuerys) {
	QueryFiles files;
	auto gated = GatePredictions(Mixed(), false, &files, "s3://b/0.parquet");
	EXPECT_TRUE(gated.Empty());
	// What the shut gate kept may be predicted again; the opening file may not.
	gated = GatePredictions({OpenPrediction::Tail("s3://b/2.parquet"), OpenPrediction::Tail("s3://b/0.parquet")}, true,
	                        &files, "");
	EXPECT_EQ(Paths(gated.for_open), (vector<string> {"s3://b/2.parquet"}));
}

TEST(PrefetchGate, WithoutQueryFilesNothingIsDeduplicated) {
	auto gated = GatePredictions({OpenPrediction::Tail("s3://b/1.parquet"), OpenPrediction::Tail("s3://b/1.parquet")},
	                             true, nullptr, "s3://b/1.parquet");
	EXPECT_EQ(gated.for_open.size(), 2u);
}

TEST(PrefetchBudget, ChargedUntilTheLastOwnerLetsGoAndRefusedWhenFull) {
	MemoryBudget budget(1000);
	auto first = ReserveAhead<Fetched>(budget, 600);
	ASSERT_TRUE(first);
	EXPECT_EQ(budget.InUse(), 600u);
	EXPECT_FALSE(ReserveAhead<Fetched>(budget, 500));
	EXPECT_EQ(budget.InUse(), 600u);
	auto second_owner = first;
	first.reset();
	EXPECT_EQ(budget.InUse(), 600u);
	second_owner.reset();
	EXPECT_EQ(budget.InUse(), 0u);
	EXPECT_TRUE(ReserveAhead<Fetched>(budget, 1000));
}

TEST(AheadFetchDelivery, AbandonedUnlessDelivered) {
	auto query = std::make_shared<FakeQuery>();
	{ Fetch fetch(query, "p", 7); }
	EXPECT_EQ(query->abandoned, (vector<string> {"p#7"}));
	{
		Fetch fetch(query, "q", 8);
		auto fetched = std::make_shared<Fetched>();
		fetched->bytes = "tail";
		fetch.Deliver(fetched);
	}
	EXPECT_EQ(query->delivered, (vector<string> {"q#8=tail"}));
	EXPECT_EQ(query->abandoned.size(), 1u);
}

namespace {
struct RunResult {
	std::shared_ptr<FakeQuery> query = std::make_shared<FakeQuery>();
	IoStats stats;
	bool sent = false;
	bool parsed = false;
};

void RunFetch(RunResult &result, std::function<bool(Fetched &)> send, std::function<void(const Fetched &)> parse = {}) {
	Fetch fetch(result.query, "p", 3);
	auto wrapped = [&](Fetched &fetched) {
		result.sent = true;
		return send(fetched);
	};
	auto wrapped_parse = [&](const Fetched &fetched) {
		result.parsed = true;
		if (parse) {
			parse(fetched);
		}
	};
	RunAheadFetch<std::shared_ptr<FakeQuery>, Fetched>(fetch, wrapped, std::make_shared<Fetched>(), result.stats,
	                                                   wrapped_parse, Counter::TAILS_FETCHED_AHEAD);
}
} // namespace

TEST(AheadFetchTask, DeliversAnAnswerThatNamesItsVersionAndCountsIt) {
	RunResult result;
	RunFetch(result, [](Fetched &fetched) {
		fetched.bytes = "abcd";
		return true;
	});
	EXPECT_TRUE(result.parsed);
	EXPECT_EQ(result.query->delivered, (vector<string> {"p#3=abcd"}));
	EXPECT_TRUE(result.query->abandoned.empty());
	EXPECT_EQ(result.stats.Snapshot().Get(Counter::READ_AHEAD_REQUESTS), 1u);
	EXPECT_EQ(result.stats.Snapshot().Get(Counter::READ_AHEAD_BYTES), 4u);
	EXPECT_EQ(result.stats.Snapshot().Get(Counter::TAILS_FETCHED_AHEAD), 1u);
	EXPECT_EQ(result.stats.Snapshot().Get(Counter::READ_AHEAD_FAILURES), 0u);
}

TEST(AheadFetchTask, TakenOverByItsOpenSendsNothing) {
	RunResult result;
	result.query->start_answer = false;
	RunFetch(result, [](Fetched &) { return true; });
	EXPECT_FALSE(result.sent);
	EXPECT_EQ(result.stats.Snapshot().Get(Counter::READ_AHEAD_REQUESTS), 0u);
	EXPECT_EQ(result.query->abandoned, (vector<string> {"p#3"}));
}

TEST(AheadFetchTask, AFailureIsCountedAndLeftToTheOpen) {
	RunResult result;
	RunFetch(result, [](Fetched &) -> bool { throw std::runtime_error("connection reset"); });
	EXPECT_EQ(result.stats.Snapshot().Get(Counter::READ_AHEAD_FAILURES), 1u);
	EXPECT_EQ(result.stats.Snapshot().Get(Counter::READ_AHEAD_REQUESTS), 1u);
	EXPECT_FALSE(result.parsed);
	EXPECT_TRUE(result.query->delivered.empty());
	EXPECT_EQ(result.query->abandoned, (vector<string> {"p#3"}));
}

TEST(AheadFetchTask, BytesThatDoNotNameTheirVersionAreNotDelivered) {
	RunResult result;
	RunFetch(result, [](Fetched &fetched) {
		fetched.bytes = "abcd";
		fetched.names_version = false;
		return true;
	});
	EXPECT_EQ(result.stats.Snapshot().Get(Counter::READ_AHEAD_REQUESTS), 1u);
	EXPECT_EQ(result.stats.Snapshot().Get(Counter::READ_AHEAD_BYTES), 0u);
	EXPECT_TRUE(result.query->delivered.empty());
	EXPECT_EQ(result.query->abandoned, (vector<string> {"p#3"}));
}

TEST(AheadFetchTask, AParseThatThrowsDeliversNothing) {
	RunResult result;
	RunFetch(
	    result,
	    [](Fetched &fetched) {
		    fetched.bytes = "manifest";
		    return true;
	    },
	    [](const Fetched &) { throw std::bad_alloc(); });
	EXPECT_EQ(result.stats.Snapshot().Get(Counter::READ_AHEAD_BYTES), 8u);
	EXPECT_EQ(result.stats.Snapshot().Get(Counter::TAILS_FETCHED_AHEAD), 0u);
	EXPECT_TRUE(result.query->delivered.empty());
	EXPECT_EQ(result.query->abandoned, (vector<string> {"p#3"}));
}
