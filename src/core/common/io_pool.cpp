#include "core/common/io_pool.hpp"

#include <algorithm>
#include <memory>

namespace httpfs2 {

IoPool::IoPool(size_t thread_count) : target(std::max<size_t>(thread_count, 1)) {
}

IoPool::~IoPool() {
	std::vector<std::unique_ptr<Worker>> to_join;
	decltype(tasks) dropped;
	{
		std::lock_guard<std::mutex> guard(lock);
		stopping = true;
		dropped.swap(tasks);
		WakeAllLocked();
		to_join.swap(workers);
	}
	// Outside the lock: a dropped task's destructor may submit (an upload's completion), which is then dropped too.
	dropped.clear();
	for (auto &worker : to_join) {
		worker->thread.join();
	}
}

void IoPool::StartWorkerLocked() {
	size_t index = workers.size();
	workers.emplace_back(new Worker());
	auto worker = workers.back().get();
	worker->thread = std::thread([this, index, worker] { WorkerLoop(index, *worker); });
}

bool IoPool::WakeOneLocked() {
	while (!idle.empty()) {
		size_t index = idle.back();
		idle.pop_back();
		if (index < workers.size() && index < target) {
			workers[index]->woken = true;
			workers[index]->wake.notify_one();
			return true;
		}
	}
	return false;
}

void IoPool::WakeAllLocked() {
	for (auto index : idle) {
		if (index < workers.size()) {
			workers[index]->wake.notify_one();
		}
	}
}

void IoPool::Resize(size_t thread_count) {
	std::lock_guard<std::mutex> resize_guard(resize_lock);
	std::vector<std::unique_ptr<Worker>> to_join;
	{
		std::lock_guard<std::mutex> guard(lock);
		target = std::max<size_t>(thread_count, 1);
		WakeAllLocked();
		while (workers.size() > target) {
			to_join.push_back(std::move(workers.back()));
			workers.pop_back();
		}
		// Growing: tasks already queued get workers of their own now, later ones as they come (Submit).
		for (auto queued = tasks.size(); queued > 0 && workers.size() < target; queued--) {
			StartWorkerLocked();
		}
	}
	// A removed worker only touches its own Worker (kept alive here) and the pool's lock while it leaves.
	for (auto &worker : to_join) {
		worker->thread.join();
	}
}

size_t IoPool::TargetSize() const {
	std::lock_guard<std::mutex> guard(lock);
	return target;
}

size_t IoPool::RunningThreads() const {
	std::lock_guard<std::mutex> guard(lock);
	return workers.size();
}

size_t IoPool::IdleThreads() const {
	std::lock_guard<std::mutex> guard(lock);
	return idle.size();
}

void IoPool::Submit(std::function<void()> task) {
	{
		std::lock_guard<std::mutex> guard(lock);
		if (stopping) {
			return;
		}
		tasks.push_back(std::move(task));
		// A worker is started when no idle one takes the task: a database runs as many as its busiest moment needed
		// (starting all of them at the first task cost a short query in a fresh process ~4 ms on 2 cores).
		if (!WakeOneLocked() && workers.size() < target) {
			StartWorkerLocked();
		}
	}
}

void IoPool::WaitIdle() {
	std::unique_lock<std::mutex> guard(lock);
	// Workers removed by Resize are out of `workers` and off `idle`: every worker left is idle once each is on it.
	went_idle.wait(guard, [&] { return stopping || (tasks.empty() && idle.size() >= workers.size()); });
}

//! Tasks report their own failures; one that throws anyway (out of memory where it did not expect it) must not end
//! the process, nor leave a RunAll batch waiting for it.
static void RunTask(const std::function<void()> &task) {
	try {
		task();
	} catch (...) {
	}
}

void IoPool::WorkerLoop(size_t index, Worker &self) {
	// `self` may already be out of `workers` (Resize removed it); it lives until this thread is joined.
	std::unique_lock<std::mutex> guard(lock);
	while (true) {
		// A worker whose index is at or past the target was removed by Resize and leaves.
		if (stopping || index >= target) {
			idle.erase(std::remove(idle.begin(), idle.end(), index), idle.end());
			return;
		}
		if (!tasks.empty()) {
			auto task = std::move(tasks.front());
			tasks.pop_front();
			guard.unlock();
			RunTask(task);
			task = nullptr; // its captures go outside the lock: what they release may submit (an upload's completion)
			guard.lock();
			continue;
		}
		self.woken = false;
		idle.push_back(index);
		went_idle.notify_all();
		// Woken for a task, it was taken off `idle`; woken to leave, the check above takes it off.
		self.wake.wait(guard, [&] { return self.woken || stopping || index >= target; });
	}
}

void IoPool::RunAll(std::vector<std::function<void()>> tasks, size_t helpers) {
	struct Batch {
		std::mutex lock;
		std::condition_variable all_done;
		std::vector<std::function<void()>> tasks;
		size_t next = 0;
		size_t finished = 0;
	};
	auto batch = std::make_shared<Batch>();
	batch->tasks = std::move(tasks);
	auto total = batch->tasks.size();
	auto drain = [batch, total] {
		while (true) {
			std::function<void()> task;
			{
				std::lock_guard<std::mutex> guard(batch->lock);
				if (batch->next == total) {
					return;
				}
				task = std::move(batch->tasks[batch->next++]);
			}
			RunTask(task);
			std::lock_guard<std::mutex> guard(batch->lock);
			if (++batch->finished == total) {
				batch->all_done.notify_all();
			}
		}
	};
	for (size_t i = 0; i + 1 < total && i < helpers; i++) {
		Submit(drain);
	}
	drain();
	std::unique_lock<std::mutex> guard(batch->lock);
	batch->all_done.wait(guard, [&] { return batch->finished == total; });
}

} // namespace httpfs2
