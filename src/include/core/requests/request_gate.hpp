//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/request_gate.hpp
//
// The admission gate of one prefix of a store: every request httpfs2 sends to the prefix passes it before each
// attempt. S3 throttles per prefix (503 SlowDown past its request rate), counting the requests it refuses toward that
// rate: requests that each back off alone keep the prefix over it (DuckDB 2.0's own async reads of 2 MiB each, a
// stream each, made a retry storm of a read: most GETs refused). So the gate admits everything until the prefix is
// throttled past its pace, then holds its requests to a rate, additive increase and multiplicative decrease as TCP's
// window: cut to CUT of the rate admitted just before (never below PASSED_SHARE of the rate the store let pass, whose
// answers prove it takes about that pace), grown back by GROWTH_PER_PASS for each answer that passes, and open again
// after OPEN_AFTER_SECONDS without a throttled answer. Requests then wait here, where a wait costs the store nothing,
// rather than being refused there.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/thread_annotations.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

namespace httpfs2 {

class RequestGate {
public:
	//! The span S3 (and the hostile proxy) count a prefix's request rate over.
	static constexpr double WINDOW_SECONDS = 1;
	//! The share of the rate admitted before a throttled answer that the gate holds the prefix to.
	static constexpr double CUT = 0.5;
	//! The share of the rate of passed answers a cut goes no lower than. Below the whole of it: a store that counts
	//! refused requests toward the rate refuses at the pace it let pass once one more came.
	static constexpr double PASSED_SHARE = 0.75;
	//! Requests a second the rate grows by for each answer that passes: at a rate r, by r / 10 each second.
	static constexpr double GROWTH_PER_PASS = 0.1;
	//! Throttled answers cut only while they are at least this share of the requests of the last second: a store
	//! past its pace refuses most of them (refused ones count toward it), one that refuses a share of all requests
	//! whatever the pace (a fault, a partition being split) refuses no fewer at a lower rate, which would only slow
	//! the reads.
	static constexpr double THROTTLED_SHARE_TO_CUT = 1.0 / 3;
	//! Nor fewer throttled answers in the last second than this: one refused first request is a third of nothing.
	static constexpr double MIN_THROTTLES_TO_CUT = 3;
	//! The lowest rate the gate holds a prefix to, requests a second.
	static constexpr double MIN_RATE = 1;
	//! The gate opens again once the prefix has not been throttled for this long.
	static constexpr double OPEN_AFTER_SECONDS = 10;

	//! Before an attempt is sent at `now` (a steady clock in seconds): how long, in seconds, it must wait first (0
	//! while the gate is open). The time it waits is its own: the next request is admitted 1 / Rate() after it.
	double Admit(double now);
	//! An answer at `now` passed (the store took the request).
	void Passed(double now);
	//! An answer at `now` asked to slow down. Throttled answers within WINDOW_SECONDS of a cut answer requests sent
	//! at the pace before it, so they cut no further; nor do they below THROTTLED_SHARE_TO_CUT or
	//! MIN_THROTTLES_TO_CUT.
	void Throttled(double now);
	//! Whether the gate holds requests to a rate, and that rate (0 while open).
	bool Limited() const;
	double Rate() const;
	//! The end of the last second the gate admitted a request or heard of an answer in; below any clock's time when
	//! it never did.
	double LastUsed() const;

private:
	enum class Count : uint8_t { ADMITTED, PASSED, THROTTLED, COUNT };
	//! Requests admitted, answers passed and throttled in one whole second of the clock: the two last seconds give the
	//! rate of the last WINDOW_SECONDS. Atomics: the open gate counts without a lock (an increment lost where two
	//! threads start a second at once makes an estimate a little low).
	struct Second {
		std::atomic<int64_t> second {-1};
		std::atomic<uint64_t> counts[static_cast<size_t>(Count::COUNT)] {};
	};
	void Record(double now, Count what);
	//! Admitted, passed or throttled per second over the WINDOW_SECONDS before `now`.
	double RateOf(double now, Count what) const;

	std::atomic<bool> limited {false};
	Second seconds[2];
	mutable Mutex lock;
	double rate HTTPFS2_GUARDED_BY(lock) = 0;
	//! When the next request may be sent.
	double next_slot HTTPFS2_GUARDED_BY(lock) = 0;
	double last_cut HTTPFS2_GUARDED_BY(lock) = 0;
	double last_throttle HTTPFS2_GUARDED_BY(lock) = 0;
};

//! The gates of a database, one per store and prefix, made on first use and kept while in use (a prefix a database
//! read is likely read again). Gates are looked up once per reader, upload or request batch, not per request, so the
//! lookup's lock is off the path of each request. Once more than KEPT_GATES are kept (or twice what the last sweep
//! left), a lookup drops the gates no one holds that were not used for IDLE_SECONDS: open by then, they hold nothing a
//! new gate of their prefix would not.
class RequestGates {
public:
	static constexpr size_t KEPT_GATES = 64;
	static constexpr double IDLE_SECONDS = 60;
	static_assert(IDLE_SECONDS > RequestGate::OPEN_AFTER_SECONDS, "an idle gate is an open one");

	//! The gate of the prefix `path` (an object's path as a query names it: scheme, bucket or host, key) is in, at
	//! `now` (the clock of RequestGate's calls). The holder keeps it as long as it sends requests to that prefix.
	std::shared_ptr<RequestGate> For(const std::string &path, double now);
	//! Gates kept.
	size_t Size();
	//! The prefix a path is in: its folder, the path up to its last '/', query left out. S3 partitions a bucket's keys
	//! by prefix and throttles each partition on its own; a folder is the prefix files read together share, and the
	//! scheme and bucket (or host) name the store.
	static std::string PrefixOf(const std::string &path);

private:
	struct Kept {
		std::shared_ptr<RequestGate> gate;
		//! When it was last looked up.
		double lent = 0;
	};
	//! Drops the gates only the map holds that were not looked up nor used for IDLE_SECONDS before `now`.
	void DropIdleLocked(double now) HTTPFS2_REQUIRES(lock);

	Mutex lock;
	std::unordered_map<std::string, Kept> gates HTTPFS2_GUARDED_BY(lock);
	size_t sweep_above HTTPFS2_GUARDED_BY(lock) = KEPT_GATES;
};

} // namespace httpfs2
