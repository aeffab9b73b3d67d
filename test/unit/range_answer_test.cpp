#include "core/requests/range_answer.hpp"

#include <gtest/gtest.h>

using namespace httpfs2;

namespace {

const ExpectedVersion VERSION {1000, "\"abc\"", 1764100000};
const char *const SAME_DATE = "Tue, 25 Nov 2025 19:46:40 GMT"; // 1764100000

RangeAnswer Partial(const std::string &content_range, const std::string &length) {
	RangeAnswer answer;
	answer.status = 206;
	answer.content_range = content_range;
	answer.content_length = length;
	answer.etag = "\"abc\"";
	answer.last_modified = SAME_DATE;
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
	auto other_etag = Partial("bytes 100-199/1000", "100");
	other_etag.etag = "\"def\"";
	auto unquoted = Partial("bytes 100-199/1000", "100");
	unquoted.etag = "abc";
	auto later = Partial("bytes 100-199/1000", "100");
	later.last_modified = "Tue, 25 Nov 2025 19:46:41 GMT";
	auto no_validators = Partial("bytes 100-199/1000", "100");
	no_validators.etag.clear();
	no_validators.last_modified.clear();
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
	    {"the object grew", {100, 100}, Partial("bytes 100-199/2000", "100"), RangeVerdict::OTHER_VERSION},
	    {"another ETag", {100, 100}, other_etag, RangeVerdict::OTHER_VERSION},
	    {"the same ETag unquoted", {100, 100}, unquoted, RangeVerdict::EXACT},
	    {"a later Last-Modified", {100, 100}, later, RangeVerdict::OTHER_VERSION},
	    {"no validators in the answer", {100, 100}, no_validators, RangeVerdict::EXACT},
	    {"an error", {100, 100}, error, RangeVerdict::NOT_SUCCESS},
	};
	for (auto &example : cases) {
		std::string why;
		EXPECT_EQ(CheckRangeAnswer(example.asked, VERSION, example.answer, why), example.verdict) << example.what;
		EXPECT_EQ(why.empty(), example.verdict == RangeVerdict::EXACT) << example.what << ": " << why;
	}
}

TEST(RangeAnswer, AVersionWithoutValidatorsIsCheckedBySizeAlone) {
	ExpectedVersion unnamed {1000, "", 0};
	auto answer = Partial("bytes 100-199/1000", "100");
	std::string why;
	EXPECT_EQ(CheckRangeAnswer({100, 100}, unnamed, answer, why), RangeVerdict::EXACT);
	answer.content_range = "bytes 100-199/1001";
	EXPECT_EQ(CheckRangeAnswer({100, 100}, unnamed, answer, why), RangeVerdict::OTHER_VERSION);
	EXPECT_NE(why.find("1001"), std::string::npos);
}
