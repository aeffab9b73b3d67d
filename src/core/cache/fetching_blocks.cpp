#include "core/cache/fetching_blocks.hpp"

#include <algorithm>

namespace httpfs2 {

namespace {
std::pair<std::string, uint64_t> IdOf(const CacheKey &key, uint64_t index) {
	// The separator is a byte no UTF-8 text holds, as in HashCacheKey.
	return std::make_pair(key.path + '\xff' + key.version, index);
}
} // namespace

constexpr std::chrono::milliseconds FetchingBlocks::Fetch::CANCEL_CHECK;

SharedBytes FetchingBlocks::Fetch::Wait(const CancelCheck &cancelled) {
	std::unique_lock<std::mutex> guard(lock);
	while (!ended.wait_for(guard, CANCEL_CHECK, [this]() { return done; })) {
		if (cancelled && cancelled()) {
			throw BlockWaitCancelled();
		}
	}
	return bytes;
}

std::shared_ptr<FetchingBlocks::Fetch> FetchingBlocks::Claim(const CacheKey &key, uint64_t index) {
	std::lock_guard<std::mutex> guard(lock);
	auto inserted = fetches.emplace(IdOf(key, index), nullptr);
	if (!inserted.second) {
		return inserted.first->second;
	}
	inserted.first->second = std::make_shared<Fetch>();
	return nullptr;
}

std::shared_ptr<FetchingBlocks::Fetch> FetchingBlocks::Find(const CacheKey &key, uint64_t index) {
	std::lock_guard<std::mutex> guard(lock);
	auto found = fetches.find(IdOf(key, index));
	return found == fetches.end() ? nullptr : found->second;
}

void FetchingBlocks::End(const CacheKey &key, uint64_t index, SharedBytes bytes) {
	std::shared_ptr<Fetch> fetch;
	{
		std::lock_guard<std::mutex> guard(lock);
		auto found = fetches.find(IdOf(key, index));
		if (found == fetches.end()) {
			return;
		}
		fetch = std::move(found->second);
		fetches.erase(found);
	}
	{
		std::lock_guard<std::mutex> guard(fetch->lock);
		fetch->done = true;
		fetch->bytes = std::move(bytes);
	}
	fetch->ended.notify_all();
}

size_t FetchingBlocks::Count() {
	std::lock_guard<std::mutex> guard(lock);
	return fetches.size();
}

BlockClaims::BlockClaims(FetchingBlocks &fetching_p, const CacheKey &key_p) : fetching(fetching_p), key(key_p) {
}

BlockClaims::~BlockClaims() {
	for (auto index : claimed) {
		fetching.End(key, index, nullptr);
	}
}

std::shared_ptr<FetchingBlocks::Fetch> BlockClaims::Claim(uint64_t index) {
	auto other = fetching.Claim(key, index);
	if (!other) {
		claimed.push_back(index);
	}
	return other;
}

void BlockClaims::End(uint64_t index, SharedBytes bytes) {
	auto found = std::find(claimed.begin(), claimed.end(), index);
	if (found == claimed.end()) {
		return;
	}
	claimed.erase(found);
	fetching.End(key, index, std::move(bytes));
}

} // namespace httpfs2
