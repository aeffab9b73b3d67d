//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/range_answer.hpp
//
// Whether the answer to a range GET holds exactly the bytes asked for, of the version the read began with. Servers
// in front of object stores get this wrong in ways a length check alone misses: a gateway that ignores Range (200 and
// the whole object), one that serves another range of the same length (a shifted offset, a cache that answers every
// range with the first one it saw), an object replaced between two answers. httpfs checks only the length and, when
// both sides have one, the ETag; httpfs2 reads the headers of every answer to its own requests.
//
// An answer's bytes are used only when the answer proves which version it is of: pieces of one read come from many
// answers, and two versions whose validators look the same would be joined without a trace. A strong ETag proves it.
// Without one, Last-Modified does only once its second is over: a write after the answer was made carries a later
// second, so answers that name the same second and were made at least VOUCHED_AFTER_SECONDS after it (their Date) are
// all of the one version written last in that second (a store that reads its own writes, as S3 does since 2020).
//===----------------------------------------------------------------------===//

#pragma once

#include "core/split/range_planner.hpp"

#include <cstdint>
#include <ctime>
#include <string>

namespace httpfs2 {

//! What the checks need of an answer's status line and headers (absent headers as empty strings).
struct RangeAnswer {
	int status = 0;
	std::string content_range;
	std::string content_length;
	std::string etag;
	std::string last_modified;
	//! When the server made the answer (RFC 9110's Date).
	std::string date;
};

//! The version a read is bound to: every answer must agree with what is known of it.
struct ExpectedVersion {
	uint64_t size = 0;
	//! Empty when the object has none (a server that sends no ETag): then not checked.
	std::string etag;
	//! Seconds since the epoch; 0 when unknown: then not checked.
	std::time_t last_modified = 0;
};

//! How long after its Last-Modified an answer without a strong ETag must have been made to prove its version: one
//! second for Last-Modified's resolution, one for the skew between the clocks that stamp the two headers.
constexpr std::time_t VOUCHED_AFTER_SECONDS = 2;

//! Whether `etag` names the bytes: present and not weak (W/"...", which promises equivalent content only).
bool IsStrongEtag(const std::string &etag);

//! Whether `answer` alone says which version it is of: a strong ETag, or Last-Modified and a Date at least
//! VOUCHED_AFTER_SECONDS later. `why` says what it lacks.
bool NamesItsVersion(const RangeAnswer &answer, std::string &why);

enum class RangeVerdict : uint8_t {
	//! The body is the range asked for, of the expected version.
	EXACT,
	//! The server ignored Range: 200 with the whole object (or a length that is not the range's).
	RANGES_IGNORED,
	//! A 206 for other bytes than asked: a shifted range, a range-blind cache, a malformed Content-Range, a total that
	//! is not the object's size though the answer's ETag is the version's.
	WRONG_RANGE,
	//! Another version of the object: ETag, Last-Modified or total size differ from the read's.
	OTHER_VERSION,
	//! The range asked, but the answer cannot prove its version: no strong ETag where the version has one, or, where
	//! neither has one, no Last-Modified or a Date within VOUCHED_AFTER_SECONDS of it (an object written just now).
	UNPROVEN,
	//! Not a 200 or 206: an error or a redirect, for the caller to report or retry.
	NOT_SUCCESS
};

//! Checks `answer` to a GET of `asked` against `expected`; `why` says what was wrong, naming headers, not bodies.
RangeVerdict CheckRangeAnswer(const ByteRange &asked, const ExpectedVersion &expected, const RangeAnswer &answer,
                              std::string &why);

//! `etag` without surrounding quotes (some stores list ETags unquoted and send them quoted).
std::string UnquotedEtag(const std::string &etag);

} // namespace httpfs2
