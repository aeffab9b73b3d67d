//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/prefetch/prefetch_executor.hpp
//
// The DuckDB-free part of the one executor of what the predictors say (adapter/prefetch/prefetch_engine runs it on
// the stores and the query's state):
// - the gate and de-duplication across predictors (GatePredictions);
// - memory: bytes fetched ahead are charged to a budget until the last owner lets go (ReserveAhead);
// - delivery bookkeeping: a fetch is abandoned unless it delivered, however its task ends (AheadFetch), and what one
//   task sends, counts and delivers (RunAheadFetch).
// The query a fetch delivers to is a template parameter, a pointer to what has Start(path, expected),
// Deliver(path, fetched, expected) and Abandon(path, expected), as the adapter's QueryVersions has them.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/io_stats.hpp"
#include "core/common/memory_budget.hpp"
#include "core/prefetch/prediction.hpp"

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace httpfs2 {

//! What of a batch of predictions is fetched now: footers and contents (into read-ahead) and the rest (for the path's
//! open).
struct GatedPredictions {
	std::vector<OpenPrediction> footers;
	std::vector<OpenPrediction> contents;
	std::vector<OpenPrediction> for_open;

	bool Empty() const {
		return footers.empty() && contents.empty() && for_open.empty();
	}
};

//! `predictions` that pass the gate (`fetch_ahead`: the cost model says the link pays for fetching ahead) and that
//! `files` (the query's, or null) has not seen. `opening` (the path whose open predicted them, or empty) is the
//! query's even when the gate is shut: what the gate keeps may be predicted again once it opens.
GatedPredictions GatePredictions(std::vector<OpenPrediction> predictions, bool fetch_ahead, QueryFiles *files,
                                 const std::string &opening);

//! Room for a FETCHED of `bytes` fetched ahead, charged to `budget` until the last owner lets go; null when the
//! budget is full.
template <class FETCHED>
std::shared_ptr<FETCHED> ReserveAhead(MemoryBudget &budget, uint64_t bytes) {
	if (!budget.TryReserve(bytes)) {
		return nullptr;
	}
	return std::shared_ptr<FETCHED>(new FETCHED(), [&budget, bytes](FETCHED *freed) {
		delete freed;
		budget.Release(bytes);
	});
}

//! One fetch ahead of an open for the query QUERY_PTR points to: abandoned (its open goes on without it) unless it
//! delivered.
template <class QUERY_PTR, class FETCHED>
class AheadFetch {
public:
	AheadFetch(QUERY_PTR query_p, std::string path_p, uint64_t expected_p)
	    : query(std::move(query_p)), path(std::move(path_p)), expected(expected_p) {
	}
	~AheadFetch() {
		if (!delivered) {
			query->Abandon(path, expected);
		}
	}
	AheadFetch(const AheadFetch &) = delete;
	AheadFetch &operator=(const AheadFetch &) = delete;

	//! Whether to send the request: false once the path's open took it over (it was still queued).
	bool Start() {
		return query->Start(path, expected);
	}
	void Deliver(std::shared_ptr<FETCHED> fetched) {
		query->Deliver(path, std::move(fetched), expected);
		delivered = true;
	}
	const std::string &Path() const {
		return path;
	}

private:
	QUERY_PTR query;
	std::string path;
	uint64_t expected;
	bool delivered = false;
};

//! The task of one fetch ahead: sends unless the open took it over, counts the request (and a failure) when it
//! ended, and delivers what answered and names its version, after `before_delivery` (which may throw: then nothing
//! is delivered and the open makes its own request). `delivered_counter` counts a delivery. FETCHED has `bytes` and
//! `names_version`.
template <class QUERY_PTR, class FETCHED>
void RunAheadFetch(AheadFetch<QUERY_PTR, FETCHED> &fetch, const std::function<bool(FETCHED &)> &send,
                   std::shared_ptr<FETCHED> fetched, IoStats &stats,
                   const std::function<void(const FETCHED &)> &before_delivery, Counter delivered_counter) {
	if (!fetch.Start()) {
		return;
	}
	bool answered = false;
	try {
		answered = send(*fetched);
	} catch (std::exception &) {
		stats.Add(Counter::READ_AHEAD_FAILURES);
	}
	stats.Add(Counter::READ_AHEAD_REQUESTS);
	if (!answered || !fetched->names_version) {
		return; // the open makes its own request, and meets any error there as it would without httpfs2
	}
	stats.Add(Counter::READ_AHEAD_BYTES, fetched->bytes.size());
	try {
		if (before_delivery) {
			before_delivery(*fetched);
		}
		fetch.Deliver(std::move(fetched));
		stats.Add(delivered_counter);
	} catch (std::exception &) {
		// Not delivered (no memory to parse or hold it): the open makes its own request.
	}
}

} // namespace httpfs2
