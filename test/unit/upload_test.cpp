// Uploads against a simulated store that keeps objects and open multipart uploads, with latency per request and
// failures on demand: tests check the bytes of the object made, the parts sent, the budget and what is left open.
#include "core/upload/object_upload.hpp"

#include "core/requests/hedge_policy.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

using namespace httpfs2;

namespace {

constexpr uint64_t PART = 64 * 1024;

class SimulatedUploadStore : public UploadTarget {
public:
	explicit SimulatedUploadStore(std::chrono::microseconds latency_p = std::chrono::microseconds(0))
	    : latency(latency_p) {
	}

	std::string Begin() override {
		begins_asked++;
		Wait();
		std::lock_guard<std::mutex> guard(lock);
		if (fail_begin) {
			throw std::runtime_error("simulated 503 on CreateMultipartUpload");
		}
		auto id = "upload-" + std::to_string(++uploads_begun);
		open[id];
		return id;
	}

	std::string SendPart(const std::string &id, uint64_t number, const char *data, uint64_t size) override {
		bool straggles;
		{
			std::lock_guard<std::mutex> guard(lock);
			straggles = straggling_parts.count(number) && attempts[number] == 0;
			attempts[number]++;
		}
		if (straggles) {
			// Stored at once, answered late: the answer of a server that trickles it.
			Store(id, number, data, size);
			std::this_thread::sleep_for(straggle);
			return "etag-" + std::to_string(number);
		}
		// Later parts answer sooner, so parts are acknowledged out of order.
		Wait(number % 3 == 1 ? 3 : 1);
		std::lock_guard<std::mutex> guard(lock);
		if (failing_parts.count(number) && (fail_times < 0 || attempts[number] <= fail_times)) {
			throw std::runtime_error("simulated 500 on part " + std::to_string(number));
		}
		StoreLocked(id, number, data, size);
		return "etag-" + std::to_string(number);
	}

	void Store(const std::string &id, uint64_t number, const char *data, uint64_t size) {
		std::lock_guard<std::mutex> guard(lock);
		StoreLocked(id, number, data, size);
	}
	void StoreLocked(const std::string &id, uint64_t number, const char *data, uint64_t size) {
		EXPECT_TRUE(open.count(id)) << "part " << number << " of an upload that is not open";
		open[id][number] = std::string(data, size);
		part_sizes[number] = size;
	}

	void Complete(const std::string &id, const std::vector<std::string> &names) override {
		Wait();
		std::lock_guard<std::mutex> guard(lock);
		if (fail_complete) {
			throw std::runtime_error("simulated 200 with an error body on CompleteMultipartUpload");
		}
		if (lose_complete_answer && !open.count(id)) {
			throw std::runtime_error("simulated 404 NoSuchUpload: the retry of a completion whose answer was lost");
		}
		auto &parts = open.at(id);
		EXPECT_EQ(names.size(), parts.size());
		for (uint64_t n = 2; equal_parts_only && n < names.size(); n++) {
			if (parts.at(n).size() != parts.at(1).size()) {
				throw std::runtime_error("simulated 400 InvalidPart: all parts but the last must be of one size (R2)");
			}
		}
		for (uint64_t n = 1; n < names.size(); n++) {
			if (parts.at(n).size() < smallest_part) {
				throw std::runtime_error("simulated 400 EntityTooSmall: a part but the last under the smallest (S3)");
			}
		}
		std::string object;
		for (uint64_t n = 1; n <= names.size(); n++) {
			EXPECT_EQ(names[n - 1], "etag-" + std::to_string(n));
			object += parts.at(n);
		}
		this->object = object;
		completed_names = names;
		completed++;
		open.erase(id);
		if (lose_complete_answer) {
			throw std::runtime_error("simulated connection reset before the answer to CompleteMultipartUpload");
		}
	}

	bool Completed(const std::vector<std::string> &names) noexcept override {
		std::lock_guard<std::mutex> guard(lock);
		return completed > 0 && completed_names == names;
	}

	bool EqualPartsOnly() const override {
		return equal_parts_only;
	}

	void Abort(const std::string &id) noexcept override {
		std::lock_guard<std::mutex> guard(lock);
		open.erase(id);
		aborted++;
	}

	void PutWhole(const char *data, uint64_t size) override {
		Wait();
		std::lock_guard<std::mutex> guard(lock);
		if (fail_put) {
			throw std::runtime_error("simulated 500 on PutObject");
		}
		object = std::string(data, size);
		puts++;
	}

	std::mutex lock;
	std::string object = "the old object";
	std::map<std::string, std::map<uint64_t, std::string>> open;
	std::map<uint64_t, int> attempts;
	std::set<uint64_t> failing_parts;
	int fail_times = -1; // -1: always
	//! The first attempt of these parts is stored at once and answered after `straggle`.
	std::set<uint64_t> straggling_parts;
	std::chrono::milliseconds straggle {0};
	bool fail_begin = false, fail_complete = false, fail_put = false;
	//! As R2: a completion of parts of other sizes but the last fails; false: as S3, any sizes.
	bool equal_parts_only = true;
	//! As S3: a completion with a part but the last under this many bytes fails (0: any size).
	uint64_t smallest_part = 0;
	//! Complete completes the object, then throws as a lost answer would.
	bool lose_complete_answer = false;
	std::vector<std::string> completed_names;
	//! Size of each part by number (parts arrive in any order).
	std::map<uint64_t, uint64_t> part_sizes;
	uint64_t uploads_begun = 0, completed = 0, aborted = 0, puts = 0;
	std::atomic<uint64_t> begins_asked {0};

private:
	void Wait(int times = 1) {
		std::this_thread::sleep_for(latency * times);
	}
	std::chrono::microseconds latency;
};

std::string RandomBytes(uint64_t size, uint64_t seed = 7) {
	std::mt19937_64 random(seed);
	std::string bytes(size, '\0');
	for (auto &byte : bytes) {
		byte = static_cast<char>(random());
	}
	return bytes;
}

//! Writes `bytes` in pieces of 1, 7, 1000, 3 * PART + 5, ... bytes, so writes straddle part boundaries.
void WriteInOddPieces(ObjectUpload &upload, const std::string &bytes) {
	const uint64_t sizes[] = {1, 7, 1000, 3 * PART + 5, PART - 1, 12345};
	uint64_t offset = 0;
	for (uint64_t i = 0; offset < bytes.size(); i++) {
		uint64_t n = std::min<uint64_t>(sizes[i % 6], bytes.size() - offset);
		upload.Write(bytes.data() + offset, n);
		offset += n;
	}
}

struct Fixture {
	explicit Fixture(uint64_t budget_bytes = 64 * PART,
	                 std::chrono::microseconds latency = std::chrono::microseconds(0))
	    : store(std::make_shared<SimulatedUploadStore>(latency)), pool(4),
	      budget(std::make_shared<UploadBudget>(budget_bytes)) {
	}
	std::unique_ptr<ObjectUpload> Upload(uint64_t min_part_size = PART / 4, UploadOptions options = UploadOptions()) {
		return UploadTo(store, min_part_size, PART / 4, options);
	}
	//! An upload of parts of PART bytes to `target`, sharing this fixture's pool and budget.
	std::unique_ptr<ObjectUpload> UploadTo(std::shared_ptr<SimulatedUploadStore> target, uint64_t min_part_size,
	                                       uint64_t charge_step = PART / 4, UploadOptions options = UploadOptions()) {
		options.part_size = PART;
		options.charge_step = charge_step;
		options.min_part_size = min_part_size;
		return std::unique_ptr<ObjectUpload>(new ObjectUpload(std::move(target), pool, budget, options));
	}
	std::shared_ptr<SimulatedUploadStore> store;
	IoPool pool;
	std::shared_ptr<UploadBudget> budget;
};

} // namespace

TEST(ObjectUpload, CutsPartsOfOneSizeWhateverTheWrites) {
	Fixture f(64 * PART, std::chrono::microseconds(200));
	auto bytes = RandomBytes(10 * PART + PART / 2);
	auto upload = f.Upload();
	WriteInOddPieces(*upload, bytes);
	upload->Close();
	EXPECT_EQ(f.store->object, bytes);
	ASSERT_EQ(f.store->part_sizes.size(), 11u);
	for (auto &part : f.store->part_sizes) {
		EXPECT_EQ(part.second, part.first < 11 ? PART : PART / 2) << "part " << part.first;
	}
	EXPECT_EQ(f.store->completed, 1u);
	EXPECT_TRUE(f.store->open.empty());
	EXPECT_EQ(f.budget->InUse(), 0u);
}

TEST(ObjectUpload, AnObjectThatFitsInOnePartIsOnePut) {
	for (uint64_t size : {uint64_t(0), uint64_t(1), PART - 1, PART}) {
		Fixture f;
		auto bytes = RandomBytes(size);
		auto upload = f.Upload();
		upload->Write(bytes.data(), bytes.size());
		upload->Close();
		EXPECT_EQ(f.store->object, bytes) << size;
		EXPECT_EQ(f.store->puts, 1u) << size;
		EXPECT_EQ(f.store->uploads_begun, 0u) << size;
		EXPECT_EQ(f.budget->InUse(), 0u) << size;
	}
	Fixture f;
	auto bytes = RandomBytes(PART + 1);
	auto upload = f.Upload();
	upload->Write(bytes.data(), bytes.size());
	upload->Close();
	EXPECT_EQ(f.store->object, bytes);
	EXPECT_EQ(f.store->puts, 0u);
	EXPECT_EQ(f.store->part_sizes, (std::map<uint64_t, uint64_t> {{1, PART}, {2, 1}}));
}

TEST(ObjectUpload, WritesWaitForTheBudgetAndNeverExceedIt) {
	// Room for 3 buffers; parts take 2-6 ms each: the writer must wait for acknowledgements, several times.
	Fixture f(3 * PART, std::chrono::microseconds(2000));
	auto bytes = RandomBytes(40 * PART + 3);
	auto upload = f.Upload();
	WriteInOddPieces(*upload, bytes);
	upload->Close();
	EXPECT_EQ(f.store->object, bytes);
	EXPECT_LE(f.budget->Peak(), 3 * PART);
	EXPECT_EQ(f.budget->Peak(), 3 * PART);
	EXPECT_EQ(f.budget->InUse(), 0u);
	EXPECT_EQ(f.budget->PartsInFlight(), 0u);
}

TEST(ObjectUpload, ObjectsWrittenAtOnceShareTheBudget) {
	Fixture f(4 * PART, std::chrono::microseconds(500));
	std::vector<std::string> objects;
	std::vector<std::shared_ptr<SimulatedUploadStore>> stores;
	std::vector<std::thread> writers;
	for (uint64_t i = 0; i < 3; i++) {
		objects.push_back(RandomBytes(12 * PART + i, i));
		stores.push_back(std::make_shared<SimulatedUploadStore>(std::chrono::microseconds(500)));
	}
	for (uint64_t i = 0; i < 3; i++) {
		writers.emplace_back([&, i] {
			UploadOptions options;
			options.part_size = PART;
			ObjectUpload upload(stores[i], f.pool, f.budget, options);
			WriteInOddPieces(upload, objects[i]);
			upload.Close();
		});
	}
	for (auto &writer : writers) {
		writer.join();
	}
	for (uint64_t i = 0; i < 3; i++) {
		EXPECT_EQ(stores[i]->object, objects[i]) << i;
	}
	EXPECT_LE(f.budget->Peak(), 4 * PART);
	EXPECT_EQ(f.budget->InUse(), 0u);
}

//! A part's retries are its target's (the one retry policy of its requests): a part that fails fails the object.
TEST(ObjectUpload, APartThatFailsFailsTheObjectAndAbortsIt) {
	Fixture f;
	f.store->failing_parts = {3};
	auto bytes = RandomBytes(6 * PART);
	auto upload = f.Upload();
	try {
		WriteInOddPieces(*upload, bytes);
		upload->Close();
		FAIL() << "the upload succeeded with a part that always fails";
	} catch (std::runtime_error &e) {
		// From a later Write, or from Close when the part failed after the last Write.
		EXPECT_STREQ(e.what(), "simulated 500 on part 3");
	}
	// A failed Write leaves the abort to the handle's destruction (DuckDB's, after the error); Close does it itself.
	upload.reset();
	EXPECT_EQ(f.store->object, "the old object");
	EXPECT_EQ(f.store->attempts[3], 1);
	EXPECT_EQ(f.store->completed, 0u);
	EXPECT_EQ(f.store->aborted, 1u);
	EXPECT_TRUE(f.store->open.empty());
	EXPECT_EQ(f.budget->InUse(), 0u);
}

//! A part whose answer does not come by the hedging deadline is sent again as the same part number on another
//! thread; the first answer is taken, and the object completes without waiting for the straggler.
TEST(ObjectUpload, APartThatStragglesIsSentAgainAndTheFirstAnswerTaken) {
	Fixture f;
	f.store->straggling_parts = {2};
	f.store->straggle = std::chrono::milliseconds(3000);
	IoPool race_threads(8);
	HedgePolicy hedges(HedgeLimits {0.05, 0.2, 3, 0.05, 2, 5});
	IoStats stats;
	UploadOptions options;
	options.race_threads = &race_threads;
	options.hedges = &hedges;
	options.request_timeout_seconds = 30;
	options.stats = &stats;
	auto bytes = RandomBytes(4 * PART);
	auto upload = f.Upload(PART / 4, options);
	auto start = std::chrono::steady_clock::now();
	WriteInOddPieces(*upload, bytes);
	upload->Close();
	auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	EXPECT_EQ(f.store->object, bytes);
	EXPECT_LT(seconds, 2.0) << "the object waited for the straggler";
	EXPECT_EQ(f.store->attempts[2], 2);
	EXPECT_EQ(f.store->attempts[1], 1) << "parts that answer in time are sent once";
	auto counted = stats.Snapshot();
	EXPECT_EQ(counted.Get(Counter::HEDGES_SENT), 1u);
	EXPECT_EQ(counted.Get(Counter::HEDGES_WON), 1u);
	EXPECT_TRUE(f.store->open.empty());
	upload.reset();
	race_threads.WaitIdle(); // the straggler ends on its own, holding its own bytes
	EXPECT_EQ(f.budget->InUse(), 0u);
}

TEST(ObjectUpload, AFailedBeginOrCompleteLeavesTheOldObject) {
	{
		Fixture f;
		f.store->fail_begin = true;
		auto bytes = RandomBytes(3 * PART);
		auto upload = f.Upload();
		EXPECT_THROW(
		    {
			    WriteInOddPieces(*upload, bytes);
			    upload->Close();
		    },
		    std::runtime_error);
		EXPECT_EQ(f.store->object, "the old object");
		EXPECT_TRUE(f.store->open.empty());
		EXPECT_EQ(f.budget->InUse(), 0u);
	}
	Fixture f;
	f.store->fail_complete = true;
	auto bytes = RandomBytes(3 * PART);
	auto upload = f.Upload();
	WriteInOddPieces(*upload, bytes);
	EXPECT_THROW(upload->Close(), std::runtime_error);
	EXPECT_EQ(f.store->object, "the old object");
	EXPECT_EQ(f.store->aborted, 1u);
	EXPECT_TRUE(f.store->open.empty());
}

TEST(ObjectUpload, ACompletionThatTookEffectButLostItsAnswerIsASuccess) {
	// The store completes the object, then the answer is lost: Close asks whether the object at the key is the one
	// these parts make, and returns without aborting. A completion that did not happen still fails (above).
	Fixture f;
	f.store->lose_complete_answer = true;
	auto bytes = RandomBytes(3 * PART + 9);
	auto upload = f.Upload();
	upload->Write(bytes.data(), bytes.size());
	upload->Close();
	EXPECT_EQ(f.store->object, bytes);
	EXPECT_EQ(f.store->completed, 1u);
	EXPECT_EQ(f.store->aborted, 0u);
	EXPECT_EQ(f.budget->InUse(), 0u);
}

TEST(ObjectUpload, DestroyedWithoutCloseAbortsAndNeverCompletes) {
	for (uint64_t size : {uint64_t(5), 5 * PART + 5}) {
		Fixture f(64 * PART, std::chrono::microseconds(1000));
		auto bytes = RandomBytes(size);
		{
			auto upload = f.Upload();
			WriteInOddPieces(*upload, bytes);
		}
		EXPECT_EQ(f.store->object, "the old object") << size;
		EXPECT_EQ(f.store->completed + f.store->puts, 0u) << size;
		EXPECT_TRUE(f.store->open.empty()) << size;
		EXPECT_EQ(f.store->aborted, size > PART ? 1u : 0u) << size;
		EXPECT_EQ(f.budget->InUse(), 0u) << size;
	}
}

TEST(ObjectUpload, ManyObjectsBeingWrittenHoldWhatTheyWroteNotAPartEach) {
	// 16 files of a partitioned COPY, each under the smallest part so far, in a budget of 8 parts.
	Fixture f(8 * PART);
	std::vector<std::unique_ptr<ObjectUpload>> uploads;
	auto bytes = RandomBytes(PART / 4);
	for (int i = 0; i < 16; i++) {
		uploads.push_back(f.Upload(PART / 2));
		uploads.back()->Write(bytes.data(), bytes.size());
	}
	EXPECT_EQ(f.budget->InUse(), 16 * PART / 4);
	for (auto &upload : uploads) {
		upload->Write(bytes.data(), 1);
		upload->Close();
	}
	EXPECT_EQ(f.store->puts, 16u);
	EXPECT_EQ(f.budget->InUse(), 0u);
	EXPECT_LE(f.budget->Peak(), 8 * PART);
}

TEST(ObjectUpload, APartTheBudgetCannotHoldGoesOnOnDiskInsteadOfWaitingForever) {
	// The smallest part the store takes is a whole part, and three files of almost a part each are written in turn
	// in a budget of two: nothing is in flight and no buffer can be sent, so the third writes its part to a file
	// on local disk; every object is complete and the budget is never exceeded.
	Fixture f(2 * PART);
	std::vector<std::shared_ptr<SimulatedUploadStore>> stores;
	std::vector<std::unique_ptr<ObjectUpload>> uploads;
	for (int i = 0; i < 3; i++) {
		stores.push_back(std::make_shared<SimulatedUploadStore>());
		uploads.push_back(f.UploadTo(stores.back(), PART));
	}
	auto bytes = RandomBytes(3 * PART + 5, 21);
	for (uint64_t offset = 0; offset < bytes.size(); offset += PART - 1) {
		for (auto &upload : uploads) {
			upload->Write(bytes.data() + offset, std::min<uint64_t>(PART - 1, bytes.size() - offset));
			EXPECT_LE(f.budget->InUse(), 2 * PART);
		}
	}
	for (int i = 0; i < 3; i++) {
		uploads[i]->Close();
		EXPECT_EQ(stores[i]->object, bytes) << i;
		EXPECT_EQ(stores[i]->part_sizes.begin()->second, PART) << i;
	}
	EXPECT_GT(uploads[2]->BytesSpilled(), 0u);
	EXPECT_LE(f.budget->Peak(), 2 * PART);
	EXPECT_EQ(f.budget->InUse(), 0u);
}

TEST(ObjectUpload, AnObjectKeptOnDiskWholeIsOnePut) {
	Fixture f(PART);
	auto holder = f.Upload(PART);
	auto filler = RandomBytes(PART - 10, 3);
	holder->Write(filler.data(), filler.size());
	auto upload = f.Upload(PART);
	auto bytes = RandomBytes(PART / 2, 4);
	upload->Write(bytes.data(), bytes.size());
	upload->Close();
	EXPECT_EQ(f.store->object, bytes);
	EXPECT_EQ(upload->BytesSpilled(), bytes.size());
	EXPECT_EQ(f.store->puts, 1u);
}

TEST(ObjectUpload, FilesWrittenInTurnShareTheBudgetFairly) {
	// Three files written in turn by one thread (a PARTITION_BY) in a budget of two parts: each object's parts are a
	// third of the budget, all the same size but the last, so the writer never waits for memory it holds itself.
	Fixture f(2 * PART);
	std::vector<std::unique_ptr<ObjectUpload>> uploads;
	std::vector<std::string> objects;
	auto stores = std::vector<std::shared_ptr<SimulatedUploadStore>>();
	for (int i = 0; i < 3; i++) {
		stores.push_back(std::make_shared<SimulatedUploadStore>());
		uploads.push_back(f.UploadTo(stores.back(), PART / 4));
		objects.push_back(RandomBytes(5 * PART + 77, 100 + i));
	}
	uint64_t piece = PART / 4;
	for (uint64_t offset = 0; offset < objects[0].size(); offset += piece) {
		for (int i = 0; i < 3; i++) {
			uploads[i]->Write(objects[i].data() + offset, std::min<uint64_t>(piece, objects[i].size() - offset));
			EXPECT_LE(f.budget->InUse(), 2 * PART);
		}
	}
	for (int i = 0; i < 3; i++) {
		uploads[i]->Close();
		EXPECT_EQ(stores[i]->object, objects[i]) << i;
		auto &sizes = stores[i]->part_sizes;
		ASSERT_GE(sizes.size(), 2u) << i;
		for (auto &part : sizes) {
			if (part.first < sizes.size()) {
				EXPECT_EQ(part.second, sizes.begin()->second) << "object " << i << " part " << part.first;
			}
		}
	}
	EXPECT_EQ(stores[0]->part_sizes.begin()->second, 2 * PART / 3);
	EXPECT_LE(f.budget->Peak(), 2 * PART);
	EXPECT_EQ(f.budget->InUse(), 0u);
}

TEST(ObjectUpload, AWriterOutOfBudgetSendsItsBufferEarlyAsTheFirstPart) {
	// Two files filled most of a budget of two parts before a third opened: when a write finds the budget held by
	// buffers being filled and nothing in flight, its own buffer (at least the smallest part) becomes its first part
	// at once, and the object's later parts are that size.
	Fixture f(2 * PART);
	auto own = std::make_shared<SimulatedUploadStore>();
	auto first = f.Upload();
	auto second = f.UploadTo(own, PART / 4);
	auto bytes = RandomBytes(4 * PART, 11);
	first->Write(bytes.data(), PART - 1);
	second->Write(bytes.data(), PART / 2);
	auto third = f.Upload();
	third->Write(bytes.data(), PART / 2);
	EXPECT_EQ(f.budget->InUse(), 2 * PART);
	second->Write(bytes.data() + PART / 2, bytes.size() - PART / 2);
	second->Close();
	EXPECT_EQ(own->object, bytes);
	ASSERT_GE(own->part_sizes.size(), 2u);
	for (auto &part : own->part_sizes) {
		if (part.first < own->part_sizes.size()) {
			EXPECT_EQ(part.second, PART / 2) << "part " << part.first;
		}
	}
	EXPECT_LE(f.budget->Peak(), 2 * PART);
}

TEST(ObjectUpload, AClosingFileMakesTheOthersSendTheirPartsEarly) {
	// The files of a PARTITION_BY are closed one after another: when the first closes, the others send what the
	// store takes as parts (a first part of what they hold when that is at least the smallest part; a full part),
	// so that their own closes only send their tails. A file under the smallest part stays one PUT.
	Fixture f(64 * PART);
	std::vector<std::shared_ptr<SimulatedUploadStore>> stores;
	std::vector<std::unique_ptr<ObjectUpload>> uploads;
	const uint64_t sizes[] = {PART / 8, PART / 2, PART / 8};
	std::vector<std::string> objects;
	for (int i = 0; i < 3; i++) {
		stores.push_back(std::make_shared<SimulatedUploadStore>());
		uploads.push_back(f.UploadTo(stores.back(), PART / 4, PART / 16));
		objects.push_back(RandomBytes(sizes[i], 30 + i));
		uploads[i]->Write(objects[i].data(), objects[i].size());
	}
	uploads[0]->Close();
	EXPECT_EQ(stores[0]->puts, 1u);
	for (int wait = 0; wait < 1000 && stores[1]->begins_asked.load() == 0; wait++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	EXPECT_EQ(stores[1]->begins_asked.load(), 1u) << "the second file's upload began before its close";
	EXPECT_EQ(stores[2]->begins_asked.load(), 0u) << "a file under the smallest part waits for its close";
	auto tail = RandomBytes(100, 40);
	uploads[1]->Write(tail.data(), tail.size());
	for (int i = 1; i < 3; i++) {
		uploads[i]->Close();
	}
	EXPECT_EQ(stores[1]->object, objects[1] + tail);
	EXPECT_EQ(stores[1]->part_sizes.at(1), PART / 2);
	EXPECT_EQ(stores[1]->part_sizes.at(2), tail.size());
	EXPECT_EQ(stores[2]->object, objects[2]);
	EXPECT_EQ(stores[2]->puts, 1u);
}

TEST(ObjectUpload, PartsDroppedWithThePoolFailTheObject) {
	// The pool stops while the upload begins (its parts are dropped when begun), or before it began (the begin is).
	for (bool worker_busy : {false, true}) {
		auto store = std::make_shared<SimulatedUploadStore>(std::chrono::microseconds(20000));
		auto budget = std::make_shared<UploadBudget>(64 * PART);
		auto bytes = RandomBytes(8 * PART);
		UploadOptions options;
		options.part_size = PART;
		std::unique_ptr<ObjectUpload> upload;
		{
			IoPool pool(1);
			if (worker_busy) {
				pool.Submit([] { std::this_thread::sleep_for(std::chrono::milliseconds(30)); });
			}
			upload.reset(new ObjectUpload(store, pool, budget, options));
			WriteInOddPieces(*upload, bytes);
			for (int ms = 0; !worker_busy && store->begins_asked == 0 && ms < 2000; ms++) {
				std::this_thread::sleep_for(std::chrono::milliseconds(1));
			}
		}
		try {
			upload->Close();
			FAIL() << "completed an object whose parts were never sent";
		} catch (std::runtime_error &e) {
			EXPECT_NE(std::string(e.what()).find(worker_busy ? "not begun" : "was not sent"), std::string::npos)
			    << e.what();
		}
		EXPECT_EQ(store->object, "the old object");
		EXPECT_TRUE(store->open.empty());
		EXPECT_EQ(store->uploads_begun, worker_busy ? 0u : 1u);
		EXPECT_EQ(budget->InUse(), 0u);
	}
}

TEST(ObjectUpload, ClosedInTheBackgroundTheObjectsCompleteTogether) {
	// DuckDB closes a PARTITION_BY's files one after another: closed in the background, none waits for another's
	// last parts and completion, and each is complete when its completion's Wait says so.
	Fixture f(64 * PART, std::chrono::microseconds(20000));
	std::vector<std::shared_ptr<SimulatedUploadStore>> stores;
	std::vector<std::string> objects;
	std::vector<std::shared_ptr<UploadCompletion>> completions;
	auto start = std::chrono::steady_clock::now();
	for (int i = 0; i < 4; i++) {
		stores.push_back(std::make_shared<SimulatedUploadStore>(std::chrono::microseconds(20000)));
		auto upload = f.UploadTo(stores.back(), PART / 4);
		objects.push_back(RandomBytes(i == 3 ? PART / 2 : 2 * PART + 100, 50 + i));
		upload->Write(objects.back().data(), objects.back().size());
		completions.push_back(upload->CloseInBackground());
		std::lock_guard<std::mutex> guard(stores.back()->lock);
		EXPECT_EQ(stores.back()->completed + stores.back()->puts, 0u) << "a close in the background waited";
	}
	auto closed = std::chrono::steady_clock::now() - start;
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(completions[i]->Wait(), nullptr);
		EXPECT_TRUE(completions[i]->Done());
		EXPECT_EQ(stores[i]->object, objects[i]);
		EXPECT_TRUE(stores[i]->open.empty());
	}
	EXPECT_LT(closed, std::chrono::milliseconds(60)) << "the closes waited for requests of 20-60 ms each";
	EXPECT_EQ(stores[3]->puts, 1u);
	EXPECT_EQ(f.budget->InUse(), 0u);
}

TEST(ObjectUpload, AFailedCompletionInTheBackgroundLeavesTheOldObjectAndTheOthersComplete) {
	Fixture f(64 * PART);
	auto failing = std::make_shared<SimulatedUploadStore>();
	failing->fail_complete = true;
	auto fine = std::make_shared<SimulatedUploadStore>();
	auto bytes = RandomBytes(3 * PART);
	std::vector<std::shared_ptr<UploadCompletion>> completions;
	for (auto &store : {failing, fine}) {
		auto upload = f.UploadTo(store, PART / 4);
		upload->Write(bytes.data(), bytes.size());
		completions.push_back(upload->CloseInBackground());
	}
	auto failure = completions[0]->Wait();
	ASSERT_NE(failure, nullptr);
	try {
		std::rethrow_exception(failure);
	} catch (std::runtime_error &e) {
		EXPECT_NE(std::string(e.what()).find("CompleteMultipartUpload"), std::string::npos) << e.what();
	}
	EXPECT_EQ(failing->object, "the old object");
	EXPECT_TRUE(failing->open.empty()) << "the failed upload was aborted";
	EXPECT_EQ(completions[1]->Wait(), nullptr);
	EXPECT_EQ(fine->object, bytes);
}

TEST(ObjectUpload, ACancelledCompletionAbortsTheUpload) {
	// A rollback (a failed or interrupted statement) cancels the objects it closed in the background: each is then
	// absent with no upload left, or, when its completion had been sent already, complete.
	Fixture f(64 * PART, std::chrono::microseconds(20000));
	auto bytes = RandomBytes(4 * PART);
	auto upload = f.Upload();
	upload->Write(bytes.data(), bytes.size());
	auto completion = upload->CloseInBackground();
	upload.reset();
	completion->Cancel();
	auto failure = completion->Wait();
	EXPECT_NE(failure, nullptr);
	EXPECT_TRUE(f.store->object == "the old object" || f.store->object == bytes);
	EXPECT_EQ(f.store->object, "the old object") << "cancelled while its parts were in flight";
	for (int ms = 0; ms < 2000 && !f.store->open.empty(); ms++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	EXPECT_TRUE(f.store->open.empty()) << "an upload was left behind";
	f.budget->WaitUntilNoPartInFlight();
	EXPECT_EQ(f.budget->InUse(), 0u);
}

TEST(ObjectUpload, AStoreThatTakesOnlyEqualPartsGetsThem) {
	// A file that holds a part's worth but less than a part when another closes: a store that takes parts of any
	// size (S3) gets what it holds as a part, and the last buffer cut into parts that each go quickly; one that takes
	// only equal parts (R2) gets full parts alone. Both objects are the bytes written.
	for (bool equal_only : {true, false}) {
		Fixture f(64 * PART);
		auto store = std::make_shared<SimulatedUploadStore>();
		store->equal_parts_only = equal_only;
		auto other = std::make_shared<SimulatedUploadStore>();
		f.budget->PartSent(4 * PART, 1.0); // a link fast enough for parts of PART
		auto writing = f.UploadTo(store, PART / 4);
		auto closing = f.UploadTo(other, PART / 4);
		auto bytes = RandomBytes(2 * PART + PART / 2, 60);
		writing->Write(bytes.data(), PART + PART / 2);
		closing->Write(bytes.data(), 100);
		closing->Close();
		writing->Write(bytes.data() + PART + PART / 2, PART);
		writing->Close();
		EXPECT_EQ(store->object, bytes) << "equal parts only: " << equal_only;
		std::set<uint64_t> sizes;
		for (auto &part : store->part_sizes) {
			if (part.first < store->part_sizes.size()) {
				sizes.insert(part.second);
			}
		}
		if (equal_only) {
			EXPECT_EQ(sizes, std::set<uint64_t>({PART})) << "all parts but the last of one size";
		} else {
			EXPECT_GT(sizes.size(), 1u) << "what the file held was sent early as a part of its own size";
			EXPECT_EQ(store->part_sizes.at(2), PART / 2) << "the early part";
		}
	}
}

//! As S3: parts of any size, none but the last under PART / 16.
static std::shared_ptr<SimulatedUploadStore> S3LikeStore() {
	auto store = std::make_shared<SimulatedUploadStore>(std::chrono::microseconds(100000));
	store->equal_parts_only = false;
	store->smallest_part = PART / 16;
	return store;
}

//! An upload to `store` over a link on which PART / 4 takes PART_SECONDS: its parts are PART / 4 long.
static std::unique_ptr<ObjectUpload> UploadFollowingTheLink(Fixture &f,
                                                            const std::shared_ptr<SimulatedUploadStore> &store) {
	auto upload = f.UploadTo(store, PART / 16);
	f.budget->PartSent(PART, 1.0);
	return upload;
}

TEST(ObjectUpload, LastBytesUnderTwoSmallestPartsGoAsTheSmallestAndTheRest) {
	// A close that leaves between one and two of the smallest parts sends the smallest and the rest side by side
	// (the last part of an S3 object may be under the smallest), not one part of up to twice the smallest.
	Fixture f(64 * PART);
	auto store = S3LikeStore();
	auto upload = UploadFollowingTheLink(f, store);
	auto bytes = RandomBytes(2 * PART + 3 * PART / 32, 71);
	upload->Write(bytes.data(), bytes.size()); // parts 1-8 sealed; 3 * PART / 32 held
	upload->Close();
	EXPECT_EQ(store->object, bytes);
	ASSERT_EQ(store->part_sizes.size(), 10u);
	EXPECT_EQ(store->part_sizes.at(9), PART / 16) << "the smallest part first";
	EXPECT_EQ(store->part_sizes.at(10), PART / 32) << "then the rest, as the object's last part";
	EXPECT_EQ(f.budget->InUse(), 0u);
}

TEST(ObjectUpload, PartsFollowTheLinkAndTheLastBytesGoAsSeveralSmallParts) {
	// Where the store takes any sizes, parts follow the rate one connection sends at (about PART_SECONDS each), and
	// the bytes a close leaves go as several parts side by side rather than one slow one.
	Fixture f(64 * PART);
	auto store = S3LikeStore();
	auto upload = UploadFollowingTheLink(f, store);
	auto bytes = RandomBytes(2 * PART, 70);
	upload->Write(bytes.data(), bytes.size()); // parts 1-7 sealed before any is answered; PART / 4 held
	upload->Close();
	EXPECT_EQ(store->object, bytes);
	ASSERT_EQ(store->part_sizes.size(), 11u);
	for (uint64_t n = 1; n <= 11; n++) {
		EXPECT_EQ(store->part_sizes.at(n), n <= 7 ? PART / 4 : PART / 16) << "part " << n;
	}
	EXPECT_EQ(f.budget->InUse(), 0u);
}
