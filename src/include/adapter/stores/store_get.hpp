//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/stores/store_get.hpp
//
// One GET of httpfs2's own, as each of them goes whoever sends it (a checked range GET of a read, read-ahead or
// prefetch; a tail or a listing that stands in for a request of the open): through DuckDB's HTTPUtil (httpfs's client,
// on a kept connection where one is given), written to DuckDB's HTTP log redacted (RequestLog), and in a race (hedged)
// telling its entry when the answer begins and asking it before a byte of the body is taken (RequestRace). What an
// answer is worth is the sender's to say; the start of any other answer's body is kept for the store's error code.
//===----------------------------------------------------------------------===//

#pragma once

#include "adapter/stores/store_http.hpp"
#include "core/requests/request_race.hpp"
#include "duckdb/common/http_util.hpp"

#include <functional>
#include <string>
#include <utility>

namespace httpfs2 {

class StoreGet {
public:
	//! What the sender makes of an answer's head.
	enum class Head : uint8_t {
		//! Its body is the one asked for: it goes to the sender's body function.
		WANTED,
		//! An error answer: the start of its body is kept (error_body).
		ERROR_BODY,
		//! Nothing of its body is read (httplib stops; curl has it already).
		STOP
	};
	//! Called for each answer's head; a client calls it again for a redirect's target: each answer starts over.
	using OnHead = std::function<Head(const duckdb::HTTPResponse &response)>;
	//! Called with a wanted body's bytes as they come; false stops the transfer.
	using OnBody = std::function<bool(const char *data, size_t length)>;
	//! How much of an error answer's body is kept.
	static constexpr size_t MAX_ERROR_BODY = 4096;

	//! What one GET came to; an attempt of a sender's derives from it.
	struct Exchange {
		//! An answer's head came.
		bool answered = false;
		//! What the sender made of the last head.
		Head head = Head::ERROR_BODY;
		//! Bytes of the wanted body handed to the sender.
		uint64_t taken = 0;
		//! The start of an error answer's body, for the store's error code.
		std::string error_body;
		//! The client's answer (or its failure, which it reports as an answer: attempts are the sender's to make).
		duckdb::unique_ptr<duckdb::HTTPResponse> response;
	};

	//! Sends the GET of `url` with `headers` (signed by the caller), on `client` where given, and fills `exchange`.
	//! In a race, `entry` is told of the answer's head and asked before its body is first handed over: a sender whose
	//! race another won takes nothing and stops.
	static void Send(duckdb::HTTPParams &params, const RequestLog &log, const std::string &url,
	                 const duckdb::HTTPHeaders &headers, duckdb::unique_ptr<duckdb::HTTPClient> *client,
	                 RequestRace::Entry *entry, const OnHead &head, const OnBody &body, Exchange &exchange);
};

} // namespace httpfs2
