#include "core/requests/range_answer.hpp"

#include <gtest/gtest.h>

using namespace httpfs2;

namespace {

const ExpectedVersion VERSION {1000, "\"abc\"", 1764100000};
const char *const SAME_DATE = "Tue, 25 Nov 2025 19:46:40 GMT"; // 1764100000
const char *const ONE_SECOND_LATER = "Tue, 25 Nov 2025 19:46:41 GMT";
const char *const TWO_SECONDS_LATER = "Tue, 25 Nov 2025 19:46:42 GMT";

RangeAnswer Partial(const std::string &content_range, const std::string &length) {
	RangeAnswer answer;
	answer.status = 206;
	answer.content_range = content_range;
	answer.content_length = length;
	answer.etag = "\"abc\"";
	answer.last_modified = SAME_DATE;
	answer.date = ONE_SECOND_LATER;
	return answer;
}

//! The range asked, of the version's size and Last-Modified, with `etag` (empty: none).
RangeAnswer Tagged(const std::string &etag) {
	auto answer = Partial("bytes 100-199/1000", "100");
	answer.etag = etag;
	return answer;
}

struct Case {
	const char *what;
	ByteRange asked;
	RangeAnswer answer;
	RangeVerdict verdict;
};

} // namespace

//! Every way a server answers a range GET, with what httpfs2 makes of it.
TEST(RangeAnswer, EachAnswerGetsItsVerdict) {
	auto whole = Partial("", "1000");
	whole.status = 200;
	auto other_etag = Tagged("\"def\"");
	auto unquoted = Tagged("abc");
	auto later = Partial("bytes 100-199/1000", "100");
	later.last_modified = ONE_SECOND_LATER;
	auto no_validators = Tagged("");
	no_validators.last_modified.clear();
	auto grown = Partial("bytes 100-199/2000", "100");
	grown.etag = "\"def\"";
	auto error = Partial("", "");
	error.status = 403;
	std::vector<Case> cases = {
	    {"the range asked", {100, 100}, Partial("bytes 100-199/1000", "100"), RangeVerdict::EXACT},
	    {"no Content-Length (chunked)", {100, 100}, Partial("bytes 100-199/1000", ""), RangeVerdict::EXACT},
	    {"a shifted range of the same length",
	     {100, 100},
	     Partial("bytes 164-263/1000", "100"),
	     RangeVerdict::WRONG_RANGE},
	    {"a cache's answer to an earlier range",
	     {100, 100},
	     Partial("bytes 0-99/1000", "100"),
	     RangeVerdict::WRONG_RANGE},
	    {"a longer body", {100, 100}, Partial("bytes 100-299/1000", "200"), RangeVerdict::WRONG_RANGE},
	    {"an unknown total", {100, 100}, Partial("bytes 100-199/*", "100"), RangeVerdict::WRONG_RANGE},
	    {"a 206 with only a length", {100, 100}, Partial("", "100"), RangeVerdict::EXACT},
	    {"a 206 with only a wrong length", {100, 100}, Partial("", "99"), RangeVerdict::WRONG_RANGE},
	    {"a 206 with neither", {100, 100}, Partial("", ""), RangeVerdict::WRONG_RANGE},
	    {"200 with the whole object", {100, 100}, whole, RangeVerdict::RANGES_IGNORED},
	    {"200 for a range that is the whole object", {0, 1000}, whole, RangeVerdict::EXACT},
	    {"a wrong total under the version's ETag",
	     {100, 100},
	     Partial("bytes 100-199/2000", "100"),
	     RangeVerdict::WRONG_RANGE},
	    {"the object grew", {100, 100}, grown, RangeVerdict::OTHER_VERSION},
	    {"another ETag", {100, 100}, other_etag, RangeVerdict::OTHER_VERSION},
	    {"the same ETag unquoted", {100, 100}, unquoted, RangeVerdict::EXACT},
	    {"a later Last-Modified", {100, 100}, later, RangeVerdict::OTHER_VERSION},
	    {"no validators in the answer", {100, 100}, no_validators, RangeVerdict::UNPROVEN},
	    {"no ETag where the version has one", {100, 100}, Tagged(""), RangeVerdict::UNPROVEN},
	    {"the version's tag, weak", {100, 100}, Tagged("W/\"abc\""), RangeVerdict::UNPROVEN},
	    {"another tag, weak", {100, 100}, Tagged("W/\"def\""), RangeVerdict::OTHER_VERSION},
	    {"an error", {100, 100}, error, RangeVerdict::NOT_SUCCESS},
	};
	for (auto &example : cases) {
		std::string why;
		EXPECT_EQ(CheckRangeAnswer(example.asked, VERSION, example.answer, why), example.verdict) << example.what;
		EXPECT_EQ(why.empty(), example.verdict == RangeVerdict::EXACT) << example.what << ": " << why;
	}
}

TEST(RangeAnswer, AVersionWithoutETagTakesAStrongETagAsProof) {
	ExpectedVersion unnamed {1000, "", 0};
	auto answer = Partial("bytes 100-199/1000", "100");
	answer.date = SAME_DATE; // written just now: the ETag proves the version all the same
	std::string why;
	EXPECT_EQ(CheckRangeAnswer({100, 100}, unnamed, answer, why), RangeVerdict::EXACT);
	answer.content_range = "bytes 100-199/1001";
	EXPECT_EQ(CheckRangeAnswer({100, 100}, unnamed, answer, why), RangeVerdict::OTHER_VERSION);
	EXPECT_NE(why.find("1001"), std::string::npos);
}

//! Without an ETag on either side, Last-Modified proves the version only once its second is over: answers made at
//! least VOUCHED_AFTER_SECONDS after it are all of the last version written in that second.
TEST(RangeAnswer, WithoutETagLastModifiedProvesTheVersionOnceItsSecondIsOver) {
	ExpectedVersion unnamed {1000, "", 1764100000};
	auto answer = Partial("bytes 100-199/1000", "100");
	answer.etag.clear();
	struct Made {
		const char *date;
		RangeVerdict verdict;
	};
	for (auto made : {Made {SAME_DATE, RangeVerdict::UNPROVEN}, Made {ONE_SECOND_LATER, RangeVerdict::UNPROVEN},
	                  Made {TWO_SECONDS_LATER, RangeVerdict::EXACT}, Made {"", RangeVerdict::UNPROVEN},
	                  Made {"not a date", RangeVerdict::UNPROVEN}}) {
		answer.date = made.date;
		std::string why;
		EXPECT_EQ(CheckRangeAnswer({100, 100}, unnamed, answer, why), made.verdict) << made.date;
		EXPECT_EQ(why.empty(), made.verdict == RangeVerdict::EXACT) << made.date << ": " << why;
	}
	answer.date = TWO_SECONDS_LATER;
	answer.last_modified.clear();
	std::string why;
	EXPECT_EQ(CheckRangeAnswer({100, 100}, unnamed, answer, why), RangeVerdict::UNPROVEN);
	EXPECT_NE(why.find("no Last-Modified"), std::string::npos) << why;
	answer.last_modified = ONE_SECOND_LATER;
	EXPECT_EQ(CheckRangeAnswer({100, 100}, unnamed, answer, why), RangeVerdict::OTHER_VERSION);
}

TEST(RangeAnswer, OnlyAStrongETagNamesTheBytes) {
	EXPECT_TRUE(IsStrongEtag("\"abc\""));
	EXPECT_TRUE(IsStrongEtag("abc"));
	EXPECT_FALSE(IsStrongEtag("W/\"abc\""));
	EXPECT_FALSE(IsStrongEtag(""));
}
