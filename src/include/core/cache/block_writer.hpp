//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/cache/block_writer.hpp
//
// The block cache's writes off the query's path: a read hands the blocks it fetched to this writer and returns as
// soon as its bytes are checked; one thread of the writer's own stores them. The blocks own their bytes (a buffer
// shared with the read that fetched them, never the caller's memory, which a cancelled query may free), their
// bytes are bounded (a block past the bound is not taken: the cache misses it next time, the query is not slowed),
// and a block still pending is served from its bytes. The writer stores every block taken before it is destroyed.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/cache/block_file.hpp"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace httpfs2 {

//! Bytes held by whoever needs them still: the read that fetched them and the writer until it stored them.
using SharedBytes = std::shared_ptr<const char>;

//! A block handed to the writer.
struct PendingBlock {
	CacheKey key;
	uint64_t index = 0;
	SharedBytes data;
	uint64_t length = 0;
	//! When it was handed over (CLOCK_REALTIME), for clears that drop what was read before a time.
	int64_t queued_ns = 0;
};

class BlockWriter {
public:
	//! Stores one block; called on the writer's thread, one block at a time, in the order they were added.
	using Store = std::function<void(const PendingBlock &block)>;

	//! Holds at most `pending_limit` bytes of blocks not yet stored. The thread starts with the first block added,
	//! so a cache that is only listed or cleared has none (nor does one used across a fork before any write).
	BlockWriter(uint64_t pending_limit, Store store);
	//! Stores what is pending, then joins the thread: no write runs once the cache is gone.
	~BlockWriter();
	BlockWriter(const BlockWriter &) = delete;
	BlockWriter &operator=(const BlockWriter &) = delete;

	//! Takes the block, unless the same block is pending already (true: it will be stored) or its bytes would take
	//! the pending bytes over the limit (false: it is not cached).
	bool Add(PendingBlock block);
	//! Block `index` of `key` while it is pending, `length` bytes, into `out`.
	bool Find(const CacheKey &key, uint64_t index, uint64_t length, char *out);
	//! Whether block `index` of `key` is pending.
	bool Contains(const CacheKey &key, uint64_t index);
	//! Appends to `out` the indices in [first, end) of the blocks of `key` pending.
	void PendingIndices(const CacheKey &key, uint64_t first, uint64_t end, std::vector<uint64_t> &out);
	//! Drops the pending blocks whose path `matches` that were handed over before `before_ns`, then waits for the
	//! block being stored: afterwards no block of theirs is written.
	void Drop(const std::function<bool(const std::string &)> &matches, int64_t before_ns);
	//! Waits until every block added before the call is stored (or failed to be).
	void Flush();
	uint64_t PendingBytes();

private:
	using BlockId = std::pair<std::string, uint64_t>;
	static BlockId IdOf(const CacheKey &key, uint64_t index);
	void Run();

	const uint64_t pending_limit;
	const Store store;
	std::mutex lock;
	std::condition_variable added;
	std::condition_variable stored;
	//! In the order added; blocks dropped leave their ids here, skipped when taken.
	std::deque<BlockId> order;
	//! Blocks added and not stored yet, the one being stored included (Find serves it until it is renamed in place).
	std::map<BlockId, PendingBlock> pending;
	uint64_t pending_bytes = 0;
	//! Blocks added and blocks done (stored, failed or dropped), for Flush.
	uint64_t added_count = 0;
	uint64_t done_count = 0;
	//! The thread is storing a block (still in `pending`).
	bool storing = false;
	BlockId current;
	bool stopping = false;
	std::thread thread;
};

} // namespace httpfs2
