//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/common/io_pool.hpp
//
// httpfs2's own IO threads, separate from DuckDB's scheduler, so IO concurrency does not depend on `threads`.
// A task goes to the worker that went idle last: a few warm threads do the work of a light load, so their
// allocator arenas and HTTP buffers are reused instead of every thread of the pool faulting in pages of its own.
//===----------------------------------------------------------------------===//

#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace httpfs2 {

class IoPool {
public:
	//! Workers are started as tasks find none idle, up to `thread_count`: a database that never splits a read runs
	//! none, and one that reads a little runs a few.
	explicit IoPool(size_t thread_count);
	//! Stops the workers and joins them; tasks still queued are dropped (callers never depend on them).
	~IoPool();
	IoPool(const IoPool &) = delete;
	IoPool &operator=(const IoPool &) = delete;

	//! Sets the number of workers at most; shrinking waits for the removed workers to finish their current task.
	void Resize(size_t thread_count);
	size_t TargetSize() const;
	//! Number of worker threads currently running.
	size_t RunningThreads() const;
	//! Number of workers waiting for a task.
	size_t IdleThreads() const;

	void Submit(std::function<void()> task);
	//! Returns once no task is queued or running (tasks submitted meanwhile included).
	void WaitIdle();
	//! Runs every task once, on up to `helpers` workers and on the calling thread (which so never waits behind a
	//! busy pool), and returns when all have run. Tasks must not throw.
	void RunAll(std::vector<std::function<void()>> tasks, size_t helpers);

private:
	struct Worker {
		std::thread thread;
		//! Notified when `woken` is set (a task for it), or when it must leave.
		std::condition_variable wake;
		bool woken = false;
	};

	void WorkerLoop(size_t index, Worker &self);
	//! Starts one more worker; requires `lock` to be held.
	void StartWorkerLocked();
	//! Wakes the worker that went idle last; false when none is idle. Requires `lock` to be held.
	bool WakeOneLocked();
	//! Wakes every idle worker, so that removed ones see they must leave; requires `lock` to be held.
	void WakeAllLocked();

	//! Serialises Resize calls, which join threads outside `lock`.
	std::mutex resize_lock;
	mutable std::mutex lock;
	std::deque<std::function<void()>> tasks;
	std::vector<std::unique_ptr<Worker>> workers;
	//! Indexes of the workers waiting for a task, the one that went idle last at the back.
	std::vector<size_t> idle;
	//! Notified when a worker finds no task (WaitIdle).
	std::condition_variable went_idle;
	size_t target;
	bool stopping = false;
};

} // namespace httpfs2
