//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/cache/fetching_blocks.hpp
//
// The blocks of the block cache being fetched now: a read that misses a block another read is fetching waits for
// that fetch's bytes rather than sending a GET of its own (two readers of one file, a read and read-ahead, a footer
// fetched ahead and the fill of its block). A fetch ends with its bytes or its failure, after which the waiter
// fetches the block itself; the fetch's own timeout and retries bound every wait, and a waiter whose query is
// cancelled stops waiting at once (the fetch goes on for the read that claimed it).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/cache/block_writer.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace httpfs2 {

//! Whether the query a wait is for was cancelled; empty: never.
using CancelCheck = std::function<bool()>;

//! Thrown by a wait for another read's fetch once its query was cancelled.
class BlockWaitCancelled : public std::exception {
public:
	const char *what() const noexcept override {
		return "the wait for a block being fetched was cancelled";
	}
};

class FetchingBlocks {
public:
	//! One block being fetched by one read.
	class Fetch {
	public:
		//! Waits until the fetch ends: the block's bytes, or null when it failed. Throws BlockWaitCancelled once
		//! `cancelled` says so (looked at every CANCEL_CHECK): the waiter holds the Fetch, so the fetch ending later
		//! touches nothing of the waiter's.
		SharedBytes Wait(const CancelCheck &cancelled);

		static constexpr std::chrono::milliseconds CANCEL_CHECK {50};

	private:
		friend class FetchingBlocks;
		std::mutex lock;
		std::condition_variable ended;
		bool done = false;
		SharedBytes bytes;
	};

	//! The fetch under way of block `index` of `key` to wait for, or null when there is none: the block is then the
	//! caller's to fetch, and to End.
	std::shared_ptr<Fetch> Claim(const CacheKey &key, uint64_t index);
	//! The fetch under way of the block, or null; claims nothing.
	std::shared_ptr<Fetch> Find(const CacheKey &key, uint64_t index);
	//! Ends the caller's fetch of the block: its waiters get `bytes` (null: it failed, they fetch it themselves).
	void End(const CacheKey &key, uint64_t index, SharedBytes bytes);
	//! Blocks being fetched now.
	size_t Count();

private:
	using BlockId = std::pair<std::string, uint64_t>;
	std::mutex lock;
	std::map<BlockId, std::shared_ptr<Fetch>> fetches;
};

//! The blocks one read claimed: those it did not End are ended as failed when it goes (the fetch threw), so no waiter
//! waits on a fetch that will not end.
class BlockClaims {
public:
	BlockClaims(FetchingBlocks &fetching, const CacheKey &key);
	~BlockClaims();
	BlockClaims(const BlockClaims &) = delete;
	BlockClaims &operator=(const BlockClaims &) = delete;

	//! FetchingBlocks::Claim; a block claimed is this read's to End.
	std::shared_ptr<FetchingBlocks::Fetch> Claim(uint64_t index);
	void End(uint64_t index, SharedBytes bytes);

private:
	FetchingBlocks &fetching;
	const CacheKey key;
	std::vector<uint64_t> claimed;
};

} // namespace httpfs2
