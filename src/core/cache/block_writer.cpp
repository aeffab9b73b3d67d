#include "core/cache/block_writer.hpp"

#include <cstring>

namespace httpfs2 {

BlockWriter::BlockWriter(uint64_t pending_limit_p, Store store_p)
    : pending_limit(pending_limit_p), store(std::move(store_p)) {
}

BlockWriter::~BlockWriter() {
	{
		std::lock_guard<std::mutex> guard(lock);
		stopping = true;
	}
	added.notify_all();
	if (thread.joinable()) {
		thread.join();
	}
}

BlockWriter::BlockId BlockWriter::IdOf(const CacheKey &key, uint64_t index) {
	// The separator is a byte no UTF-8 text holds, as in HashCacheKey.
	return BlockId(key.path + '\xff' + key.version, index);
}

bool BlockWriter::Add(PendingBlock block) {
	auto id = IdOf(block.key, block.index);
	{
		std::lock_guard<std::mutex> guard(lock);
		if (pending.count(id)) {
			return true;
		}
		if (pending_bytes + block.length > pending_limit) {
			return false;
		}
		pending_bytes += block.length;
		added_count++;
		order.push_back(id);
		pending.emplace(std::move(id), std::move(block));
		if (!thread.joinable()) {
			thread = std::thread([this] { Run(); });
		}
	}
	added.notify_one();
	return true;
}

bool BlockWriter::Find(const CacheKey &key, uint64_t index, uint64_t length, char *out) {
	SharedBytes data;
	{
		std::lock_guard<std::mutex> guard(lock);
		auto found = pending.find(IdOf(key, index));
		if (found == pending.end() || found->second.length != length) {
			return false;
		}
		data = found->second.data;
	}
	// The bytes are never written to once handed over: copied without the lock.
	std::memcpy(out, data.get(), length);
	return true;
}

bool BlockWriter::Contains(const CacheKey &key, uint64_t index) {
	std::lock_guard<std::mutex> guard(lock);
	return pending.count(IdOf(key, index)) != 0;
}

void BlockWriter::PendingIndices(const CacheKey &key, uint64_t first, uint64_t end, std::vector<uint64_t> &out) {
	std::lock_guard<std::mutex> guard(lock);
	auto id = IdOf(key, first);
	for (auto entry = pending.lower_bound(id);
	     entry != pending.end() && entry->first.first == id.first && entry->first.second < end; ++entry) {
		out.push_back(entry->first.second);
	}
}

void BlockWriter::Drop(const std::function<bool(const std::string &)> &matches, int64_t before_ns) {
	std::unique_lock<std::mutex> guard(lock);
	for (auto entry = pending.begin(); entry != pending.end();) {
		auto &block = entry->second;
		bool droppable = !(storing && entry->first == current) && block.queued_ns < before_ns;
		if (droppable && matches(block.key.path)) {
			pending_bytes -= block.length;
			done_count++;
			entry = pending.erase(entry);
		} else {
			++entry;
		}
	}
	stored.notify_all();
	stored.wait(guard, [this] { return !storing; });
}

void BlockWriter::Flush() {
	std::unique_lock<std::mutex> guard(lock);
	auto target = added_count;
	stored.wait(guard, [this, target] { return done_count >= target; });
}

uint64_t BlockWriter::PendingBytes() {
	std::lock_guard<std::mutex> guard(lock);
	return pending_bytes;
}

void BlockWriter::Run() {
	std::unique_lock<std::mutex> guard(lock);
	while (true) {
		added.wait(guard, [this] { return !order.empty() || stopping; });
		if (order.empty()) {
			return; // stopping, and all stored
		}
		auto id = std::move(order.front());
		order.pop_front();
		auto entry = pending.find(id);
		if (entry == pending.end()) {
			continue; // dropped
		}
		// A copy of the block (its bytes shared) stays pending, so that Find serves it while it is written.
		auto block = entry->second;
		storing = true;
		current = id;
		guard.unlock();
		try {
			store(block);
		} catch (...) {
			// Never out of this thread (that would end the process): a block not stored is a miss later.
		}
		guard.lock();
		storing = false;
		pending.erase(id);
		pending_bytes -= block.length;
		done_count++;
		stored.notify_all();
	}
}

} // namespace httpfs2
