#include "adapter/stores/s3_stand_in_get.hpp"

#include "adapter/stores/store_get.hpp"

#include "core/requests/s3_request.hpp"
#include "duckdb/main/client_context.hpp"

#include <algorithm>
#include <chrono>

namespace httpfs2 {

using std::string;

//! What one attempt's answer was (StoreGet's exchange), and what it was signed with.
struct S3StandInGet::Attempt : StoreGet::Exchange {
	S3StandInGet::Answer answer;
	//! The generation of the credentials it was signed with.
	uint64_t signed_with = 0;
};

S3StandInGet::S3StandInGet(IoStats &stats_p, std::unique_ptr<S3CredentialSource> credentials_p)
    : stats(stats_p), credentials(std::move(credentials_p)) {
}

std::shared_ptr<S3StandInGet> S3StandInGet::For(duckdb::ClientContext &context, const string &path,
                                                duckdb::optional_ptr<duckdb::FileOpener> opener,
                                                S3Credentials credentials, uint64_t timeout_seconds,
                                                ThrottleListeners listeners, IoStats &stats, Counter counted,
                                                bool hedged) {
	std::shared_ptr<S3StandInGet> get(new S3StandInGet(
	    stats, std::unique_ptr<S3CredentialSource>(new S3CredentialSource(path, std::move(credentials), opener))));
	auto params = QuietParams(duckdb::HTTPUtil::Get(*context.db), path, opener, &get->log);
	get->backoff = RetryBackoffOf(*params);
	get->max_attempts = params->retries + 1;
	// It stands in for a request of httpfs's: never longer than httpfs would wait for that one.
	uint64_t httpfs_seconds = params->timeout + (params->timeout_usec > 0 ? 1 : 0);
	params->timeout = httpfs_seconds == 0 ? timeout_seconds : std::min(timeout_seconds, httpfs_seconds);
	params->timeout_usec = 0;
	params->retries = 0;
	get->params = std::move(params);
	get->listeners = listeners;
	get->cancelled = QueryCancelled(context);
	get->counted = counted;
	if (hedged) {
		get->hedging = ReadHedging::For(context, opener);
	}
	return get;
}

S3Credentials S3StandInGet::Credentials() const {
	uint64_t generation;
	return credentials->Current(generation);
}

void S3StandInGet::SendOnce(const Sign &sign, uint64_t max_body, Attempt &attempt, RequestRace::Entry *entry) {
	stats.Add(counted);
	auto request = sign(credentials->Current(attempt.signed_with));
	auto start = std::chrono::steady_clock::now();
	auto since_start = [start]() {
		return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	};
	auto &answer = attempt.answer;
	auto head = [&](const duckdb::HTTPResponse &response) {
		answer.first_byte_seconds = since_start();
		answer.body.clear();
		auto status = static_cast<int>(response.status);
		bool success = !response.HasRequestError() && status >= 200 && status < 300;
		return success ? StoreGet::Head::WANTED : StoreGet::Head::ERROR_BODY;
	};
	auto body = [&](const char *data, size_t length) {
		if (answer.body.size() + length > max_body) {
			return false; // longer than any answer asked for (a server that ignored a range)
		}
		answer.body.append(data, length);
		return true;
	};
	StoreGet::Send(*params, log, request.first, request.second, nullptr, entry, head, body, attempt);
	answer.response = std::move(attempt.response);
	answer.seconds = since_start();
}

void S3StandInGet::SendHedged(const Sign &sign, uint64_t max_body, Attempt &attempt) {
	// The senders keep this request and its signing: the loser runs on after this returns.
	auto self = shared_from_this();
	RequestRace::RunInto(
	    *hedging.threads, *hedging.policy, static_cast<double>(params->timeout), hedging.BodySeconds(max_body), stats,
	    [self, sign, max_body](Attempt &sent, RequestRace::Entry &entry) {
		    self->SendOnce(sign, max_body, sent, &entry);
	    },
	    [](const Attempt &won) { return won.head == StoreGet::Head::WANTED; }, attempt);
}

AttemptOutcome S3StandInGet::Judge(const Attempt &attempt) {
	auto &response = attempt.answer.response;
	if (!response || response->HasRequestError()) {
		return AttemptOutcome::REFUSED; // the open goes on as without it
	}
	auto outcome = OutcomeOfStatus(static_cast<int>(response->status), XmlElement(attempt.error_body, "Code"), false);
	// Any other answer (a success, or a refusal such as 404) is the stand-in's: the open reads it as its own.
	return outcome == AttemptOutcome::REFUSED ? AttemptOutcome::DONE : outcome;
}

S3StandInGet::Answer S3StandInGet::Send(const Sign &sign, uint64_t max_body) {
	try {
		RequestAttempts attempts(backoff, max_attempts, listeners);
		attempts.CancelWith(cancelled);
		Attempt attempt;
		auto send = [&](Attempt &sent) {
			if (hedging.policy) {
				SendHedged(sign, max_body, sent);
			} else {
				SendOnce(sign, max_body, sent);
			}
			return Judge(sent);
		};
		auto refresh = [&](const Attempt &refused) {
			return credentials->Refresh(refused.signed_with, stats);
		};
		if (attempts.Run(attempt, send, refresh) == AttemptOutcome::REFUSED) {
			attempt.answer.response = nullptr;
		}
		return std::move(attempt.answer);
	} catch (std::exception &) {
		return Answer(); // the open goes on as without it
	}
}

} // namespace httpfs2
