// BlockWriter: blocks stored off the caller's thread, bounded in pending bytes, served while pending, dropped by
// clears, all stored before the writer goes.

#include "core/cache/block_writer.hpp"

#include <gtest/gtest.h>

#include <future>
#include <string>
#include <thread>
#include <vector>

using namespace httpfs2;

namespace {

SharedBytes BytesOf(const std::string &text) {
	std::shared_ptr<char> bytes(new char[text.size()], std::default_delete<char[]>());
	std::copy(text.begin(), text.end(), bytes.get());
	return bytes;
}

PendingBlock Block(const std::string &path, uint64_t index, const std::string &text, int64_t queued_ns = 0) {
	return PendingBlock {CacheKey {path, "v1"}, index, BytesOf(text), text.size(), queued_ns};
}

//! A store that records what it stored (path, index, bytes) and holds its first block until `Release`.
class GatedStore {
public:
	BlockWriter::Store Store() {
		return [this](const PendingBlock &block) {
			if (first) {
				first = false;
				taken.set_value();
				gate.get_future().wait();
			}
			std::lock_guard<std::mutex> guard(lock);
			stored.push_back(block.key.path + "#" + std::to_string(block.index) + "=" +
			                 std::string(block.data.get(), block.length));
		};
	}
	//! Waits until the writer's thread holds the first block.
	void WaitUntilTaken() {
		taken.get_future().wait();
	}
	void Release() {
		gate.set_value();
	}
	std::vector<std::string> Stored() {
		std::lock_guard<std::mutex> guard(lock);
		return stored;
	}

private:
	bool first = true;
	std::promise<void> taken;
	std::promise<void> gate;
	std::mutex lock;
	std::vector<std::string> stored;
};

} // namespace

TEST(BlockWriter, AnAddReturnsBeforeItsStoreAndThePendingBytesAreServed) {
	GatedStore store;
	BlockWriter writer(1 << 20, store.Store());
	ASSERT_TRUE(writer.Add(Block("s3://b/x", 0, "first")));
	store.WaitUntilTaken();
	ASSERT_TRUE(writer.Add(Block("s3://b/x", 1, "second")));
	EXPECT_TRUE(store.Stored().empty());
	std::string out(5, '\0');
	// The block being stored and the one waiting are both served from their bytes.
	EXPECT_TRUE(writer.Find(CacheKey {"s3://b/x", "v1"}, 0, 5, &out[0]));
	EXPECT_EQ(out, "first");
	out.assign(6, '\0');
	EXPECT_TRUE(writer.Find(CacheKey {"s3://b/x", "v1"}, 1, 6, &out[0]));
	EXPECT_EQ(out, "second");
	EXPECT_FALSE(writer.Find(CacheKey {"s3://b/x", "v2"}, 1, 6, &out[0]));
	EXPECT_FALSE(writer.Find(CacheKey {"s3://b/x", "v1"}, 1, 5, &out[0]));
	EXPECT_EQ(writer.PendingBytes(), 11u);
	store.Release();
	writer.Flush();
	EXPECT_EQ(store.Stored(), (std::vector<std::string> {"s3://b/x#0=first", "s3://b/x#1=second"}));
	EXPECT_EQ(writer.PendingBytes(), 0u);
	EXPECT_FALSE(writer.Find(CacheKey {"s3://b/x", "v1"}, 0, 5, &out[0]));
}

TEST(BlockWriter, ABlockOverThePendingLimitIsNotTaken) {
	GatedStore store;
	BlockWriter writer(10, store.Store());
	ASSERT_TRUE(writer.Add(Block("a", 0, "12345")));
	store.WaitUntilTaken();
	// The block being stored still counts: its bytes are held until it is on disk.
	EXPECT_TRUE(writer.Add(Block("a", 1, "6789")));
	EXPECT_FALSE(writer.Add(Block("a", 2, "XY")));
	// The same block again is pending already: taken, stored once.
	EXPECT_TRUE(writer.Add(Block("a", 1, "6789")));
	store.Release();
	writer.Flush();
	EXPECT_EQ(store.Stored(), (std::vector<std::string> {"a#0=12345", "a#1=6789"}));
	EXPECT_TRUE(writer.Add(Block("a", 2, "XY")));
	writer.Flush();
	EXPECT_EQ(store.Stored().back(), "a#2=XY");
}

TEST(BlockWriter, DropLeavesTheMatchingBlocksHandedOverBeforeItsTimeUnstored) {
	GatedStore store;
	BlockWriter writer(1 << 20, store.Store());
	ASSERT_TRUE(writer.Add(Block("s3://b/kept", 0, "k0", 100)));
	store.WaitUntilTaken();
	ASSERT_TRUE(writer.Add(Block("s3://b/gone", 0, "g0", 100)));
	ASSERT_TRUE(writer.Add(Block("s3://b/gone", 1, "g1", 300)));
	ASSERT_TRUE(writer.Add(Block("s3://b/kept", 1, "k1", 100)));
	// Drop waits for the block being stored: called on another thread, and the store released once it dropped.
	std::thread dropper([&] { writer.Drop([](const std::string &path) { return path == "s3://b/gone"; }, 200); });
	while (writer.PendingBytes() != 6) {
		std::this_thread::yield();
	}
	store.Release();
	dropper.join();
	writer.Flush();
	EXPECT_EQ(store.Stored(), (std::vector<std::string> {"s3://b/kept#0=k0", "s3://b/gone#1=g1", "s3://b/kept#1=k1"}));
	EXPECT_EQ(writer.PendingBytes(), 0u);
}

TEST(BlockWriter, EveryBlockTakenIsStoredBeforeTheWriterGoes) {
	std::vector<std::string> stored;
	{
		BlockWriter writer(1 << 20, [&stored](const PendingBlock &block) {
			stored.push_back(std::string(block.data.get(), block.length));
		});
		for (int index = 0; index < 50; index++) {
			ASSERT_TRUE(writer.Add(Block("p", index, "block " + std::to_string(index))));
		}
	}
	ASSERT_EQ(stored.size(), 50u);
	for (int index = 0; index < 50; index++) {
		EXPECT_EQ(stored[index], "block " + std::to_string(index));
	}
}

TEST(BlockWriter, AStoreThatThrowsLeavesTheWriterWorking) {
	std::vector<uint64_t> stored;
	BlockWriter writer(1 << 20, [&stored](const PendingBlock &block) {
		if (block.index == 1) {
			throw std::runtime_error("disk gone");
		}
		stored.push_back(block.index);
	});
	for (uint64_t index = 0; index < 3; index++) {
		ASSERT_TRUE(writer.Add(Block("p", index, "x")));
	}
	writer.Flush();
	EXPECT_EQ(stored, (std::vector<uint64_t> {0, 2}));
	EXPECT_EQ(writer.PendingBytes(), 0u);
}
