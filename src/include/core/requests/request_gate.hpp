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
// window: cut to a share of the rate the store let pass (which proves it takes about that pace), grown back for each
// answer that passes, and open again after OPEN_AFTER_SECONDS without a throttled answer. Requests then wait here,
// where a wait costs the store nothing, rather than being refused there. A cut voids the turns booked at the rate
// before it (a request waiting for one books again), and answers to requests sent before it do not cut again: they
// answer the old pace. A store refusing a share of requests whatever their pace is not one to hold: an open gate
// closes only on many throttled answers that are a large share of the requests.
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
	//! A cut holds the prefix to PASSED_SHARE of the rate of answers passed in the second before it (or the highest
	//! such rate at a cut of the closed gate since it closed; no more than the rate before the cut): below the whole
	//! of it, as a store that counts refused requests toward the rate refuses at the pace it let pass once one more
	//! came. Never to less than DEEPEST_CUT of the rate before (where the gate was open, the rate admitted in the last
	//! second).
	static constexpr double PASSED_SHARE = 0.75;
	static constexpr double DEEPEST_CUT = 0.25;
	//! Requests a second the rate grows by for each answer that passes, once the rate the store takes is known (a cut
	//! of the closed gate showed it): at a rate r, by r / 10 each second.
	static constexpr double GROWTH_PER_PASS = 0.1;
	//! Until a cut of the closed gate showed the store's pace (the first cut's answers lag its burst), as TCP's slow
	//! start: at a rate r, by r / 2 each second.
	static constexpr double FIRST_GROWTH_PER_PASS = 0.5;
	//! An open gate starts to hold the prefix only once throttled answers are at least this share of the requests of
	//! the last second: a store past its pace refuses most of them (refused ones count toward it), one that refuses a
	//! share of all requests whatever the pace (a fault, a partition being split) refuses no fewer at a lower rate,
	//! which would only slow the reads.
	static constexpr double THROTTLED_SHARE_TO_CUT = 1.0 / 3;
	//! A gate holding the prefix cuts again once this share of the last second's answers is throttled: the prefix is
	//! known to be throttled by its pace, and a rate a little past the store's is refused a little.
	static constexpr double LIMITED_SHARE_TO_CUT = 0.1;
	//! Nor fewer throttled answers in the last second than these: an open gate needs more, as the first second of a
	//! read has few answers, and a scan's throttled ones come first (a 503 has no body to wait for): one in five of a
	//! scan's requests refused whatever its pace showed 3 of 9 in its first second. A store throttled by its rate
	//! refuses dozens in a second.
	static constexpr double MIN_THROTTLES_TO_LIMIT = 8;
	static constexpr double MIN_THROTTLES_TO_CUT = 3;
	//! The lowest rate the gate holds a prefix to, requests a second.
	static constexpr double MIN_RATE = 1;
	//! The gate opens again once the prefix has not been throttled for this long.
	static constexpr double OPEN_AFTER_SECONDS = 10;

	//! Before an attempt is sent at `now` (a steady clock in seconds): how long, in seconds, it must wait first (0
	//! while the gate is open). The time it waits is its own: the next request is admitted 1 / Rate() after it.
	//! `booking`, when given, receives what Booked asks after the wait. `again`: the same attempt asking anew after
	//! its turn was voided (not counted as another request).
	double Admit(double now, uint64_t *booking = nullptr, bool again = false);
	//! Whether the turn Admit booked still holds: no cut since. A request whose turn was voided asks again.
	bool Booked(uint64_t booking) const;
	//! An answer at `now` passed (the store took the request).
	void Passed(double now);
	//! An answer at `now` asked to slow down, to a request sent at `sent`. Returns whether the gate cut its rate (the
	//! prefix is past its pace). Answers to requests sent before the last cut answer the pace before it, as do those
	//! within WINDOW_SECONDS of it: they cut no further; nor do throttled answers below the shares to cut or
	//! MIN_THROTTLES_TO_CUT.
	bool Throttled(double now, double sent);
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
	double last_cut HTTPFS2_GUARDED_BY(lock) = -1;
	double last_throttle HTTPFS2_GUARDED_BY(lock) = 0;
	//! The cuts so far: a turn booked before the last is void.
	std::atomic<uint64_t> cuts {0};
	//! The highest rate of answers passed in the second before a cut of the closed gate since it closed (0: none).
	double shown HTTPFS2_GUARDED_BY(lock) = 0;
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
