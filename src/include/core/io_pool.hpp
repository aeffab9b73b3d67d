//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/io_pool.hpp
//
// httpfs2's own IO threads, separate from DuckDB's scheduler, so IO concurrency does not depend on `threads`.
//===----------------------------------------------------------------------===//

#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace httpfs2 {

class IoPool {
public:
	//! Threads are started on the first Submit, so a database that never splits a read runs none.
	explicit IoPool(size_t thread_count);
	//! Stops the workers and joins them; tasks still queued are dropped (callers never depend on them).
	~IoPool();
	IoPool(const IoPool &) = delete;
	IoPool &operator=(const IoPool &) = delete;

	//! Sets the number of workers; shrinking waits for the removed workers to finish their current task.
	void Resize(size_t thread_count);
	size_t TargetSize() const;
	//! Number of worker threads currently running.
	size_t RunningThreads() const;

	void Submit(std::function<void()> task);
	//! Runs every task once, on up to `helpers` workers and on the calling thread (which so never waits behind a
	//! busy pool), and returns when all have run. Tasks must not throw.
	void RunAll(std::vector<std::function<void()>> tasks, size_t helpers);

private:
	void WorkerLoop(size_t index);
	//! Starts workers up to target; requires `lock` to be held.
	void StartWorkersLocked();

	//! Serialises Resize calls, which join threads outside `lock`.
	std::mutex resize_lock;
	mutable std::mutex lock;
	std::condition_variable task_ready;
	std::deque<std::function<void()>> tasks;
	std::vector<std::thread> workers;
	size_t target;
	bool started = false;
	bool stopping = false;
};

} // namespace httpfs2
