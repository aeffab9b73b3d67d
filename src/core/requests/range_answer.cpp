#include "core/requests/range_answer.hpp"

#include "core/requests/http_parts.hpp"
#include "core/requests/s3_request.hpp"

#include <cstdlib>

namespace httpfs2 {

std::string UnquotedEtag(const std::string &etag) {
	if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
		return etag.substr(1, etag.size() - 2);
	}
	return etag;
}

bool IsStrongEtag(const std::string &etag) {
	return !etag.empty() && etag.compare(0, 2, "W/") != 0;
}

//! An ETag's tag, weak or strong: W/"x" and "x" name the same tag (RFC 9110's weak comparison).
static std::string OpaqueTag(const std::string &etag) {
	return UnquotedEtag(etag.compare(0, 2, "W/") == 0 ? etag.substr(2) : etag);
}

static std::string RangeText(uint64_t first, uint64_t last) {
	return std::to_string(first) + "-" + std::to_string(last);
}

static bool ParseLength(const std::string &text, uint64_t &length) {
	if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
		return false;
	}
	length = std::strtoull(text.c_str(), nullptr, 10);
	return true;
}

//! Checks the validators an answer carries against the read's version; the size is checked by the caller.
static bool SameVersion(const ExpectedVersion &expected, const RangeAnswer &answer, std::string &why) {
	if (!expected.etag.empty() && !answer.etag.empty() && OpaqueTag(expected.etag) != OpaqueTag(answer.etag)) {
		why = "ETag " + answer.etag + " where the read began with " + expected.etag;
		return false;
	}
	std::time_t modified;
	if (expected.last_modified != 0 && !answer.last_modified.empty() && ParseHttpDate(answer.last_modified, modified) &&
	    modified != expected.last_modified) {
		why = "Last-Modified " + answer.last_modified + " differs from the version the read began with";
		return false;
	}
	return true;
}

//! What an answer without a strong ETag has of one, for `why`.
static std::string EtagLacking(const RangeAnswer &answer) {
	return answer.etag.empty() ? std::string("no ETag") : "the weak ETag " + answer.etag;
}

bool NamesItsVersion(const RangeAnswer &answer, std::string &why) {
	if (IsStrongEtag(answer.etag)) {
		return true;
	}
	auto etag = EtagLacking(answer);
	std::time_t modified, made;
	if (!ParseHttpDate(answer.last_modified, modified)) {
		why = etag + " and no Last-Modified";
		return false;
	}
	if (!ParseHttpDate(answer.date, made) || made < modified + VOUCHED_AFTER_SECONDS) {
		why = etag + ", and Date '" + answer.date + "' within " + std::to_string(VOUCHED_AFTER_SECONDS) +
		      " s of Last-Modified '" + answer.last_modified + "': a write in that second would look the same";
		return false;
	}
	return true;
}

//! Whether the answer proves which version it is of (see the header): an answer without a strong ETag proves
//! nothing of a version that has one.
static bool ProvesVersion(const ExpectedVersion &expected, const RangeAnswer &answer, std::string &why) {
	if (IsStrongEtag(expected.etag) && !IsStrongEtag(answer.etag)) {
		why = EtagLacking(answer) + " where the version read has " + expected.etag;
		return false;
	}
	return NamesItsVersion(answer, why);
}

static RangeVerdict VersionVerdict(const ExpectedVersion &expected, const RangeAnswer &answer, std::string &why) {
	if (!SameVersion(expected, answer, why)) {
		return RangeVerdict::OTHER_VERSION;
	}
	return ProvesVersion(expected, answer, why) ? RangeVerdict::EXACT : RangeVerdict::UNPROVEN;
}

RangeVerdict CheckRangeAnswer(const ByteRange &asked, const ExpectedVersion &expected, const RangeAnswer &answer,
                              std::string &why) {
	auto asked_text = RangeText(asked.offset, asked.End() - 1);
	if (answer.status != 200 && answer.status != 206) {
		why = "HTTP " + std::to_string(answer.status);
		return RangeVerdict::NOT_SUCCESS;
	}
	uint64_t length = 0;
	bool has_length = ParseLength(answer.content_length, length);
	if (answer.status == 200) {
		// The whole object is the range only when the range is the whole object.
		bool whole = asked.offset == 0 && asked.length == expected.size && (!has_length || length == asked.length);
		if (!whole) {
			why = "HTTP 200 (the whole object, " + (has_length ? answer.content_length : std::string("?")) +
			      " bytes) for bytes " + asked_text;
			return RangeVerdict::RANGES_IGNORED;
		}
		return VersionVerdict(expected, answer, why);
	}
	if (has_length && length != asked.length) {
		why = "Content-Length " + answer.content_length + " for bytes " + asked_text;
		return RangeVerdict::WRONG_RANGE;
	}
	if (answer.content_range.empty()) {
		// A 206 without Content-Range breaks RFC 9110; its length (checked above) is all there is to check.
		if (!has_length) {
			why = "HTTP 206 with neither Content-Range nor Content-Length for bytes " + asked_text;
			return RangeVerdict::WRONG_RANGE;
		}
		return VersionVerdict(expected, answer, why);
	}
	uint64_t first, last, total;
	if (!ParseContentRange(answer.content_range, first, last, total)) {
		why = "Content-Range '" + answer.content_range + "' for bytes " + asked_text;
		return RangeVerdict::WRONG_RANGE;
	}
	if (total != expected.size) {
		why = "Content-Range '" + answer.content_range + "': the object has " + std::to_string(total) +
		      " bytes where the read began with " + std::to_string(expected.size);
		// Under the version's own strong ETag, a wrong total is the server's error, not another object.
		bool same_etag = IsStrongEtag(answer.etag) && UnquotedEtag(answer.etag) == UnquotedEtag(expected.etag);
		return same_etag ? RangeVerdict::WRONG_RANGE : RangeVerdict::OTHER_VERSION;
	}
	if (first != asked.offset || last + 1 != asked.End()) {
		why = "Content-Range '" + answer.content_range + "' for bytes " + asked_text;
		return RangeVerdict::WRONG_RANGE;
	}
	return VersionVerdict(expected, answer, why);
}

} // namespace httpfs2
