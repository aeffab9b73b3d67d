//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/common/query_versions.hpp
//
// The object versions httpfs2 learnt with requests of its own during one query (an az:// blob's lookup, an s3://
// file's tail GET), so that the query's later opens of the same path (the scan's after the bind's) make no request,
// as httpfs answers them from what its first open learnt. Forgotten when the query ends, so each query sees changes,
// and when one begins, so that what a bind outside any query learnt (the Python relation API's) is not taken for it.
// A path httpfs2 fetches ahead of its open (an Iceberg manifest its list names, whole; a data file its manifest
// names, its tail) is awaited: its open waits for the fetch once it is sent, then takes the version and the bytes it
// gave; an open that comes before the fetch left the queue takes the path over and makes its own request.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/common/query_state.hpp"
#include "adapter/common/object_version.hpp"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace httpfs2 {

class QueryVersions : public QueryState<QueryVersions> {
public:
	static const char *StateName() {
		return "httpfs2_query_versions";
	}

	//! The version of `path` learnt in this query; waits first while a fetch of it is under way (Expect, Start),
	//! unless `give_up` says to stop (the query was interrupted). A fetch expected but not started within
	//! TAKE_OVER_AFTER is taken over: false, and the fetch is not sent.
	bool Find(const std::string &path, ObjectVersion &version, const std::function<bool()> &give_up = nullptr);
	//! Whether the query knows a version of `path` or awaits a fetch of it (no wait).
	bool Knows(const std::string &path);
	void Store(const std::string &path, const ObjectVersion &version);
	//! A version of `path` learnt without opening it (a folder's listing): kept unless the query knows, awaits or
	//! asks the store for one already, so that all its opens of `path` see one version.
	void Learn(const std::string &path, const ObjectVersion &version);
	//! Forgets `path` (it is being written).
	void Forget(const std::string &path);

	//! `path` is about to be fetched ahead of its open for this query: the number to give back to Start, Deliver and
	//! Abandon, or 0 when the path's version is known or awaited already, or an open of it is asking the store itself
	//! (a Find that found nothing): nothing to fetch.
	uint64_t Expect(const std::string &path);
	//! The fetch `expected` of `path` is being sent: its opens wait for it from now on. False when it is not to be
	//! sent (an open took the path over, the query ended, the path was written).
	bool Start(const std::string &path, uint64_t expected);
	//! What the fetch `expected` of `path` gave (bytes of `fetched->range` at `fetched->version`); ignored once its
	//! query ended.
	void Deliver(const std::string &path, std::shared_ptr<ObjectTail> fetched, uint64_t expected);
	void Abandon(const std::string &path, uint64_t expected);
	//! The bytes delivered for `path`, handed out once.
	std::shared_ptr<ObjectTail> TakeFetched(const std::string &path);

	//! Forgets all (a query began or ended).
	void Clear();

private:
	//! An open waits this long at most for a fetch (whose own timeouts end it first).
	static constexpr int MAX_WAIT_SECONDS = 300;
	//! An open waits this long for a queued fetch to start (a worker starting) before it sends its own request.
	static constexpr std::chrono::milliseconds TAKE_OVER_AFTER {10};

	std::mutex lock;
	std::condition_variable delivered;
	std::unordered_map<std::string, ObjectVersion> versions;
	struct Awaited {
		uint64_t number; //! what Expect gave
		bool started;    //! Start was called: opens wait
	};
	std::unordered_map<std::string, Awaited> awaited;
	std::unordered_map<std::string, std::shared_ptr<ObjectTail>> fetched;
	//! Paths an open found neither known nor awaited: it sends its own request, so none is fetched ahead.
	std::unordered_set<std::string> opening;
	uint64_t expectations = 0;
};

} // namespace httpfs2
