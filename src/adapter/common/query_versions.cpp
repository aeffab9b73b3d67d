#include "adapter/common/query_versions.hpp"

#include <chrono>

namespace httpfs2 {

constexpr std::chrono::milliseconds QueryVersions::TAKE_OVER_AFTER;

void QueryVersions::Clear() {
	{
		std::lock_guard<std::mutex> guard(lock);
		versions.clear();
		awaited.clear();
		fetched.clear();
		opening.clear();
	}
	delivered.notify_all();
}

bool QueryVersions::Find(const std::string &path, ObjectVersion &version, const std::function<bool()> &give_up) {
	// Woken by every delivery; looks at `give_up` at least every GIVE_UP_CHECK meanwhile.
	static constexpr std::chrono::milliseconds GIVE_UP_CHECK {50};
	auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(MAX_WAIT_SECONDS);
	auto take_over = std::chrono::steady_clock::now() + TAKE_OVER_AFTER;
	std::unique_lock<std::mutex> guard(lock);
	for (auto waiting = awaited.find(path); waiting != awaited.end() && std::chrono::steady_clock::now() < deadline;
	     waiting = awaited.find(path)) {
		if (!waiting->second.started && std::chrono::steady_clock::now() >= take_over) {
			awaited.erase(waiting); // still queued: the open's own request is sooner than waiting behind the queue
			break;
		}
		if (give_up && give_up()) {
			return false;
		}
		delivered.wait_for(guard, waiting->second.started ? GIVE_UP_CHECK : TAKE_OVER_AFTER);
	}
	auto found = versions.find(path);
	if (found == versions.end()) {
		opening.insert(path); // the open asks the store itself: no fetch of it is started after this
		return false;
	}
	version = found->second;
	return true;
}

bool QueryVersions::Knows(const std::string &path) {
	std::lock_guard<std::mutex> guard(lock);
	return versions.count(path) || awaited.count(path);
}

void QueryVersions::Store(const std::string &path, const ObjectVersion &version) {
	std::lock_guard<std::mutex> guard(lock);
	versions[path] = version;
}

void QueryVersions::Learn(const std::string &path, const ObjectVersion &version) {
	std::lock_guard<std::mutex> guard(lock);
	if (!awaited.count(path) && !opening.count(path)) {
		versions.emplace(path, version);
	}
}

void QueryVersions::Forget(const std::string &path) {
	{
		std::lock_guard<std::mutex> guard(lock);
		versions.erase(path);
		awaited.erase(path);
		fetched.erase(path);
		opening.erase(path);
	}
	delivered.notify_all();
}

uint64_t QueryVersions::Expect(const std::string &path) {
	std::lock_guard<std::mutex> guard(lock);
	if (versions.count(path) || awaited.count(path) || opening.count(path)) {
		return 0;
	}
	awaited[path] = Awaited {++expectations, false};
	return expectations;
}

bool QueryVersions::Start(const std::string &path, uint64_t expected) {
	std::lock_guard<std::mutex> guard(lock);
	auto waiting = awaited.find(path);
	if (waiting == awaited.end() || waiting->second.number != expected) {
		return false;
	}
	waiting->second.started = true;
	delivered.notify_all(); // an open waiting for it to start waits for its answer now
	return true;
}

void QueryVersions::Deliver(const std::string &path, std::shared_ptr<ObjectTail> tail, uint64_t expected) {
	{
		std::lock_guard<std::mutex> guard(lock);
		auto waiting = awaited.find(path);
		if (waiting == awaited.end() || waiting->second.number != expected) {
			return; // the query ended, or the path was written meanwhile
		}
		awaited.erase(waiting);
		versions[path] = tail->version;
		fetched[path] = std::move(tail);
	}
	delivered.notify_all();
}

void QueryVersions::Abandon(const std::string &path, uint64_t expected) {
	{
		std::lock_guard<std::mutex> guard(lock);
		auto waiting = awaited.find(path);
		if (waiting == awaited.end() || waiting->second.number != expected) {
			return;
		}
		awaited.erase(waiting);
	}
	delivered.notify_all();
}

std::shared_ptr<ObjectTail> QueryVersions::TakeFetched(const std::string &path) {
	std::lock_guard<std::mutex> guard(lock);
	auto found = fetched.find(path);
	if (found == fetched.end()) {
		return nullptr;
	}
	auto taken = std::move(found->second);
	fetched.erase(found);
	return taken;
}

} // namespace httpfs2
