#include "core/requests/request_race.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>

namespace httpfs2 {

using Clock = std::chrono::steady_clock;

static double Seconds(Clock::duration duration) {
	return std::chrono::duration<double>(duration).count();
}

static Clock::duration Duration(double seconds) {
	return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

struct RaceState;

namespace {
//! The race and slot of the sender the calling thread runs, if any (SenderLost).
thread_local RaceState *current_race = nullptr;
thread_local size_t current_slot = 0;
} // namespace

//! Shared by the caller and its senders; a loser keeps it after the caller left.
struct RaceState {
	static constexpr size_t NOBODY = 2;

	RaceState(HedgePolicy &policy_p, RequestRace::Sender sender_p, double body_seconds_p)
	    : policy(policy_p), sender(std::move(sender_p)), body_seconds(body_seconds_p) {
	}

	HedgePolicy &policy;
	const RequestRace::Sender sender;
	//! What of a sender's wait for its answer is the body coming (RequestRace::Run).
	const double body_seconds;

	std::mutex lock;
	std::condition_variable changed;
	size_t launched = 0;
	Clock::time_point started[2];
	bool began[2] = {false, false};
	bool finished[2] = {false, false};
	std::exception_ptr error[2];
	//! The sender that writes into the caller's memory.
	size_t claimed = NOBODY;
	//! The first sender whose answer began, and the first that finished with an answer begun.
	size_t first_began = NOBODY;
	size_t first_answered = NOBODY;

	//! Starts sender `slot` on `threads`; requires `lock`.
	void LaunchLocked(IoPool &threads, size_t slot, const std::shared_ptr<RaceState> &self) {
		launched = slot + 1;
		started[slot] = Clock::now();
		threads.Submit([self, slot] {
			RequestRace::Entry entry(self, slot);
			std::exception_ptr thrown;
			current_race = self.get();
			current_slot = slot;
			try {
				self->sender(entry);
			} catch (...) {
				thrown = std::current_exception();
			}
			current_race = nullptr;
			{
				std::lock_guard<std::mutex> guard(self->lock);
				self->error[slot] = thrown;
				self->finished[slot] = true;
				if (self->began[slot] && self->first_answered == NOBODY) {
					self->first_answered = slot;
				}
			}
			// Told outside the lock, so the caller woken does not wait for it at once (`self` keeps the state).
			self->changed.notify_all();
		});
	}

	//! Whether the caller may go; requires `lock`.
	bool DecidedLocked() const {
		if (claimed != NOBODY) {
			return finished[claimed];
		}
		for (size_t slot = 0; slot < launched; slot++) {
			if (!finished[slot]) {
				return false;
			}
		}
		return true;
	}
};

RequestRace::Entry::Entry(std::shared_ptr<RaceState> race_p, size_t slot_p) : slot(slot_p), race(std::move(race_p)) {
}

void RequestRace::Entry::FirstByte() {
	std::lock_guard<std::mutex> guard(race->lock);
	if (race->began[slot]) {
		return; // a redirect's target answered
	}
	race->began[slot] = true;
	if (race->first_began == RaceState::NOBODY) {
		// Only the first answer of a race is a latency of the store: a loser's comes after the caller left. What its
		// body took to come is not: a large GET is as slow as its size, not a straggler.
		race->first_began = slot;
		race->policy.ObserveFirstByte(Seconds(Clock::now() - race->started[slot]) - race->body_seconds);
	}
	// The caller is not woken for it: a begun answer only spares it the hedge it would send at its deadline, where it
	// looks. Waking it here and again at the end cost a GET a context switch and a wait on this lock (each GET is
	// handed to a thread of its own; with curl the head comes a moment before the end).
}

bool RequestRace::Entry::Claim() {
	std::lock_guard<std::mutex> guard(race->lock);
	if (race->claimed == RaceState::NOBODY) {
		race->claimed = slot;
	}
	return race->claimed == slot;
}

bool RequestRace::SenderLost() {
	if (!current_race) {
		return false;
	}
	std::lock_guard<std::mutex> guard(current_race->lock);
	return current_race->claimed != RaceState::NOBODY && current_race->claimed != current_slot;
}

RequestRace::Outcome RequestRace::Run(IoPool &threads, HedgePolicy &policy, double timeout_seconds, Sender sender,
                                      double body_seconds) {
	auto race = std::make_shared<RaceState>(policy, std::move(sender), body_seconds);
	auto deadline_now = [&]() {
		return race->started[0] + Duration(policy.DeadlineSeconds() + body_seconds);
	};
	policy.RequestSent();
	std::unique_lock<std::mutex> guard(race->lock);
	race->LaunchLocked(threads, 0, race);
	auto last = race->started[0] + Duration(timeout_seconds / 2);
	auto deadline = deadline_now();
	while (deadline <= last) {
		if (race->changed.wait_until(guard, deadline, [&] { return race->began[0] || race->finished[0]; })) {
			break;
		}
		// The deadline as the policy says now: a GET sent among a query's first is judged by what the GETs sent
		// beside it took, not by the few that had answered when it went out (the fastest of them).
		auto learnt = deadline_now();
		if (learnt > Clock::now()) {
			deadline = learnt;
			continue;
		}
		if (policy.TryHedge(Seconds(Clock::now().time_since_epoch()))) {
			race->LaunchLocked(threads, 1, race);
			break;
		}
		// Asked again each deadline later while the budget says no: it grows as other GETs go out, and stragglers
		// come in clusters (a hedge refused at the first look is not refused for good).
		deadline += Duration(policy.DeadlineSeconds());
	}
	race->changed.wait(guard, [&] { return race->DecidedLocked(); });
	Outcome outcome;
	outcome.hedged = race->launched > 1;
	if (race->claimed != RaceState::NOBODY) {
		outcome.winner = race->claimed;
	} else if (race->first_answered != RaceState::NOBODY) {
		outcome.winner = race->first_answered;
	}
	if (race->error[outcome.winner]) {
		std::rethrow_exception(race->error[outcome.winner]);
	}
	return outcome;
}

} // namespace httpfs2
