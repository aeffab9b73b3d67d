//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/s3_stand_in_get.hpp
//
// A GET of httpfs2's that stands in for a request the open makes anyway (a tail GET for the HEAD, a listing for the
// next files' tail GETs), through the one retry policy (RequestAttempts) as a checked range GET goes: each attempt is
// signed afresh, a refusal of its credentials looks the secret up again and is sent once more (S3CredentialSource), a
// throttled answer is waited out within httpfs's retries, and where hedging is on a GET whose answer has not begun
// by the hedging deadline is sent again on another connection (RequestRace). Each attempt has a few seconds: a store
// that stalls it does not hold the open up for httpfs's http_timeout; an attempt that fails otherwise is not sent
// again, and the open goes on as without it.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/stores/s3_signing.hpp"
#include "adapter/stores/store_http.hpp"
#include "core/common/io_stats.hpp"
#include "core/requests/request_race.hpp"
#include "core/requests/retry_policy.hpp"
#include "duckdb/common/file_opener.hpp"
#include "duckdb/common/http_util.hpp"

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace httpfs2 {

class S3StandInGet : public std::enable_shared_from_this<S3StandInGet> {
public:
	//! The URL and headers of the GET signed with `credentials`, built afresh for each attempt. The sign function may
	//! be called after the caller returned (a hedge's loser runs on): it must own what it uses.
	using Sign = std::function<std::pair<std::string, duckdb::HTTPHeaders>(const S3Credentials &credentials)>;

	//! What the attempt that stands came to.
	struct Answer {
		//! Null when no attempt got an answer (a refusal that stood, a network error, a timeout).
		duckdb::unique_ptr<duckdb::HTTPResponse> response;
		//! A 2xx answer's body, up to the most asked.
		std::string body;
		//! Seconds from sending the attempt to its answer's headers, and to its end.
		double first_byte_seconds = 0;
		double seconds = 0;
	};

	//! A stand-in for `path` signed with `credentials` (as ResolveS3Object read them through `opener`, whose
	//! connection is where they are looked up again), each attempt within `timeout_seconds` (httpfs's http_timeout
	//! where shorter: it stands in for a request of httpfs's); `listeners` hear of throttled answers, `counted` is
	//! added to `stats` for each attempt. Hedged where the open's settings hedge reads (httpfs2_hedge_reads) and
	//! `hedged`.
	static std::shared_ptr<S3StandInGet> For(duckdb::ClientContext &context, const std::string &path,
	                                         duckdb::optional_ptr<duckdb::FileOpener> opener, S3Credentials credentials,
	                                         uint64_t timeout_seconds, ThrottleListeners listeners, IoStats &stats,
	                                         Counter counted, bool hedged);

	//! Sends the GET that `sign` makes, reading at most `max_body` bytes of a 2xx answer's body (a longer body stops
	//! the transfer: the answer is then incomplete). Never throws. Once the connection's query is cancelled, no
	//! other attempt is sent nor waited for (at the gate, or before a retry): the last answer, or none, comes back as
	//! when the attempts run out.
	Answer Send(const Sign &sign, uint64_t max_body);

	//! What the first attempt is signed with.
	S3Credentials Credentials() const;

private:
	struct Attempt;
	S3StandInGet(IoStats &stats, std::unique_ptr<S3CredentialSource> credentials);

	//! One attempt, no retry; in a race (hedged), `entry` is told when the answer begins.
	void SendOnce(const Sign &sign, uint64_t max_body, Attempt &attempt, RequestRace::Entry *entry = nullptr);
	//! One attempt as SendOnce, hedged when its answer is late (RequestRace).
	void SendHedged(const Sign &sign, uint64_t max_body, Attempt &attempt);
	//! What `attempt` came to: a stand-in is sent again only when throttled or refused its credentials.
	static AttemptOutcome Judge(const Attempt &attempt);

	IoStats &stats;
	const std::unique_ptr<S3CredentialSource> credentials;
	//! httpfs's parameters for the path, with the stand-in's timeout, retries made here and no HTTP log (RequestLog
	//! writes it, redacted).
	std::shared_ptr<duckdb::HTTPParams> params;
	RequestLog log;
	RetryBackoff backoff;
	uint64_t max_attempts = 1;
	ThrottleListeners listeners;
	//! The connection's query was cancelled (QueryCancelled).
	std::function<bool()> cancelled;
	Counter counted = Counter::VERSION_REQUESTS;
	//! How its GETs are hedged; not at all where the policy is null.
	ReadHedging hedging;
};

} // namespace httpfs2
