//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/request_race.hpp
//
// One request sent on a thread of its own while its caller waits, and sent again on another (a hedge) when its answer
// has not begun by HedgePolicy's deadline: the first sender to write into the caller's memory is the only one that
// ever does (Claim), and the caller returns once that one is done. httpfs's clients cannot be stopped before an answer
// begins, so the loser is not waited for: it runs on to its own end on `threads` (not the IO pool's, which the winner's
// read needs), writes nothing of the caller's, and is dropped.
//===----------------------------------------------------------------------===//

#pragma once

#include "core/common/io_pool.hpp"
#include "core/common/io_stats.hpp"
#include "core/requests/hedge_policy.hpp"

#include <array>
#include <cstddef>
#include <functional>
#include <memory>

namespace httpfs2 {

struct RaceState;

class RequestRace {
public:
	//! What one sender is told: which one it is, and the race's hooks.
	class Entry {
	public:
		Entry(std::shared_ptr<RaceState> race, size_t slot);
		//! 0 for the request, 1 for its hedge.
		const size_t slot;
		//! Its answer began (the status and headers came).
		void FirstByte();
		//! Asked before the sender first writes into the caller's memory: true when it may (no other sender ever will),
		//! false when another one does (this one then writes nothing and stops).
		bool Claim();

	private:
		std::shared_ptr<RaceState> race;
	};
	//! Sends one request, writing into the caller's memory only after Claim said so. It runs on `threads` and may run
	//! on after Run returned: it must own whatever it uses but the caller's memory.
	using Sender = std::function<void(Entry &)>;

	struct Outcome {
		//! The sender whose request stands: the one that claimed, else the first whose answer began, else the first.
		size_t winner = 0;
		bool hedged = false;
	};

	//! Sends the request and, past the deadline with no answer begun (the policy's when it comes, learnt meanwhile from
	//! the requests sent beside it, plus `body_seconds`: the time its body takes to come where the client tells of an
	//! answer only once its body is in, as curl does in httpfs; 0 where heads come first), its hedge (when the policy
	//! allows, asked again each deadline later while it does not; only within half of `timeout_seconds`, the request's
	//! own: later, its timeout and retry do as much); returns once the winner's sender returned (rethrowing what it
	//! threw): no sender writes into the caller's memory after that.
	static Outcome Run(IoPool &threads, HedgePolicy &policy, double timeout_seconds, Sender sender,
	                   double body_seconds = 0);

	//! Run for senders that each fill an answer of their own (`send(ANSWER &, Entry &)`, which must own what it uses
	//! but the caller's memory): `answer` gets the winner's; `stats` counts a hedge sent, and won where the hedge's
	//! answer is one the caller uses (`used(const ANSWER &)`).
	template <class ANSWER, class SEND, class USED>
	static void RunInto(IoPool &threads, HedgePolicy &policy, double timeout_seconds, double body_seconds,
	                    IoStats &stats, SEND send, USED used, ANSWER &answer) {
		auto answers = std::make_shared<std::array<ANSWER, 2>>();
		auto outcome = Run(
		    threads, policy, timeout_seconds, [answers, send](Entry &entry) { send((*answers)[entry.slot], entry); },
		    body_seconds);
		answer = std::move((*answers)[outcome.winner]);
		if (outcome.hedged) {
			stats.Add(Counter::HEDGES_SENT);
			if (outcome.winner == 1 && used(answer)) {
				stats.Add(Counter::HEDGES_WON); // its answer is the caller's
			}
		}
	}

	//! Whether the calling thread runs a sender whose race another sender won (claimed): its request's own retries
	//! stop there (RequestAttempts), since nobody waits for its answer, and a loser that sent on could outlive what its
	//! requests need (a database closed after the query took the winner's answer). False outside a race.
	static bool SenderLost();
};

} // namespace httpfs2
