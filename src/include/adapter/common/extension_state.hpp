//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/common/extension_state.hpp
//
// What httpfs2 keeps per database: the IO pool, the cost model and the stats of each wrapped filesystem.
// Owned jointly by the wrapped filesystems and the extension callback, so it lives exactly as long as the
// database and its pool is joined when the database closes.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/cache/block_cache.hpp"
#include "core/common/cost_model.hpp"
#include "core/common/io_pool.hpp"
#include "core/common/memory_budget.hpp"
#include "core/upload/upload_budget.hpp"
#include "core/common/io_settings.hpp"
#include "core/common/io_stats.hpp"
#include "core/requests/credential_replacements.hpp"
#include "core/requests/hedge_policy.hpp"
#include "core/requests/request_gate.hpp"
#include "duckdb.hpp"

#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace httpfs2 {

//! What holds handles of the wrapped filesystems that must go when the database's last connection closes (each
//! WrappedFileSystem, registered for its lifetime).
class HandleKeeper {
public:
	virtual ~HandleKeeper() = default;
	virtual void ReleaseHandles() = 0;
};

class ExtensionState {
public:
	//! At most this many hedged range GETs in flight at once (a GET past it waits for a thread).
	static constexpr size_t REQUEST_THREADS = 256;
	//! Read-ahead buffers come from `allocator`.
	explicit ExtensionState(std::shared_ptr<BufferAllocator> allocator);

	//! The state of `db`, created on first use.
	static std::shared_ptr<ExtensionState> GetOrCreate(duckdb::DatabaseInstance &db);
	//! The state of `db`; throws when httpfs2 is not loaded in it.
	static std::shared_ptr<ExtensionState> Get(duckdb::DatabaseInstance &db);

	//! Stats of the wrapped filesystem called `name`, created on first use.
	std::shared_ptr<IoStats> StatsFor(const std::string &name);
	std::vector<std::pair<std::string, std::shared_ptr<IoStats>>> AllStats();
	//! Records that the filesystem `name` is wrapped; false when it already was.
	bool MarkWrapped(const std::string &name);
	//! The wrapped filesystems alive, for ReleaseHandles (each registers itself for its lifetime).
	void AddFileSystem(HandleKeeper &filesystem);
	void RemoveFileSystem(HandleKeeper &filesystem);
	//! When the database's last connection closes: every wrapped filesystem lets go of the wrapped filesystems'
	//! handles it keeps (read-ahead, kept version handles), which must not outlive the database's logging, and the
	//! parts of interrupted uploads still in flight end.
	void ReleaseHandles();

	//! The last values set with SET, for opens that come without a FileOpener.
	IoSettings LastSetSettings();
	//! Records a SET value; a global one also resizes what it sizes (the IO pool, the read-ahead and upload budgets).
	void ApplySetting(const SettingSpec &spec, int64_t value);
	void ApplyTextSetting(const SettingSpec &spec, const std::string &value);

	//! The database's block cache in the directory and bound `settings` name (whether or not it is enabled), opened
	//! on first use and opened again when they change; null, with `error` naming the directory and the reason, when
	//! it cannot be opened.
	std::shared_ptr<BlockCache> CacheFor(const IoSettings &settings, std::string &error);
	//! The cache opened last (null before any): its counters for httpfs2_stats().
	std::shared_ptr<BlockCache> CurrentCache();

	//! Declared before the pool, so they outlive its threads: tasks still queued when the pool is destroyed hold
	//! read-ahead charged to the budget, and a fetch that ends reports its time to the model.
	MemoryBudget read_ahead_budget;
	//! Shared with the uploads, whose part tasks may outlive the pool's queue.
	const std::shared_ptr<UploadBudget> upload_budget;
	CostModel cost_model;
	IoPool io_pool;
	//! The uploads' parts and completions: as many threads as parts may be sent at once (UploadBudget::streams), so
	//! that uploads follow the link past io_threads and never hold up reads' fetches.
	IoPool upload_pool;
	//! The admission gates of the stores' prefixes that every request httpfs2 sends passes (reads' and uploads'): one
	//! place that holds a throttled prefix to a rate, whichever reader, listing or upload hears the throttling.
	RequestGates request_gates;
	//! When range GETs are hedged (httpfs2_hedge_reads); declared before the threads that send them.
	HedgePolicy hedges;
	//! The threads hedged range GETs are sent on while their reader waits (RequestRace): one per GET in flight, and the
	//! losers running on to their end, never taking the IO pool's threads that reads need.
	IoPool request_threads;
	//! The same for upload parts (httpfs2_hedge_uploads): their policy learns from whole parts' times, and their
	//! threads are their own, as many as two per part in flight (UploadBudget::streams at most MAX_STREAMS).
	HedgePolicy upload_hedges {HedgeLimits::Uploads()};
	IoPool upload_request_threads;
	//! Credentials stores refused and what replaced them, which requests begun later with the refused ones start from
	//! (S3CredentialSource); shared with the sources, which may outlive this state in an upload's last part.
	const std::shared_ptr<CredentialReplacements> credential_replacements;

private:
	std::mutex lock;
	std::vector<std::pair<std::string, std::shared_ptr<IoStats>>> stats;
	std::set<std::string> wrapped;
	std::vector<HandleKeeper *> filesystems;
	IoSettings last_set;

	std::mutex cache_lock;
	std::shared_ptr<BlockCache> cache;
	std::string cache_directory;
};

} // namespace httpfs2
