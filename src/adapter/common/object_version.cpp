#include "adapter/common/object_version.hpp"

#include "core/requests/http_parts.hpp"
#include "core/requests/range_answer.hpp"
#include "core/requests/s3_request.hpp"
#include "duckdb/common/http_util.hpp"
#include "duckdb/main/client_context.hpp"

#include <algorithm>
#include <atomic>
#include <ctime>

namespace httpfs2 {

//! The query `opener` belongs to, numbered across the database (never 0); 0 outside one.
static uint64_t QueryNumber(duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto context = duckdb::FileOpener::TryGetClientContext(opener);
	if (!context || !context->transaction.HasActiveTransaction()) {
		return 0;
	}
	try {
		return (context->transaction.GetActiveQuery() + 1) & ~VersionKey::PER_OPEN;
	} catch (std::exception &) {
		return 0;
	}
}

VersionKey KeyOf(const std::string &path, const ObjectVersion &version,
                 duckdb::optional_ptr<duckdb::FileOpener> opener) {
	VersionKey key;
	key.path = path;
	key.etag = version.etag;
	key.last_modified = version.last_modified.value;
	key.size = version.size;
	if (!version.Recognizable()) {
		key.scope = QueryNumber(opener);
		if (key.scope == 0) {
			static std::atomic<uint64_t> opens {0};
			key.scope = ++opens | VersionKey::PER_OPEN;
		}
	}
	return key;
}

std::string EncodeVersion(const ObjectVersion &version) {
	return std::to_string(version.size) + "\n" + std::to_string(version.last_modified.value) + "\n" + version.etag;
}

bool DecodeVersion(const std::string &text, ObjectVersion &version) {
	auto first = text.find('\n');
	auto second = first == std::string::npos ? first : text.find('\n', first + 1);
	if (second == std::string::npos) {
		return false;
	}
	try {
		size_t used = 0;
		auto size_text = text.substr(0, first);
		version.size = std::stoull(size_text, &used);
		auto modified_text = text.substr(first + 1, second - first - 1);
		bool whole = used == size_text.size();
		version.last_modified = duckdb::timestamp_t(std::stoll(modified_text, &used));
		version.etag = text.substr(second + 1);
		return whole && used == modified_text.size();
	} catch (std::exception &) {
		return false; // not numbers
	}
}

bool ObjectVersion::IsContentHash() const {
	auto text = UnquotedEtag(etag);
	auto dash = text.find('-');
	auto hash = text.substr(0, dash);
	auto is_digit = [](char c) {
		return c >= '0' && c <= '9';
	};
	auto is_hex = [&](char c) {
		return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	};
	if (hash.size() != 32 || !std::all_of(hash.begin(), hash.end(), is_hex)) {
		return false;
	}
	if (dash == std::string::npos) {
		return true;
	}
	auto parts = text.substr(dash + 1);
	return !parts.empty() && std::all_of(parts.begin(), parts.end(), is_digit);
}

bool VersionOfRangeAnswer(const duckdb::HTTPResponse &response, ObjectVersion &version, ByteRange &range) {
	if (response.status != duckdb::HTTPStatusCode::PartialContent_206) {
		return false;
	}
	for (auto header : {"Content-Range", "Last-Modified"}) {
		if (!response.HasHeader(header)) {
			return false;
		}
	}
	uint64_t first, last, total;
	std::time_t modified;
	if (!ParseContentRange(response.GetHeaderValue("Content-Range"), first, last, total) ||
	    !ParseHttpDate(response.GetHeaderValue("Last-Modified"), modified)) {
		return false;
	}
	version.size = total;
	version.last_modified = duckdb::Timestamp::FromEpochSeconds(static_cast<int64_t>(modified));
	version.etag = response.HasHeader("ETag") ? response.GetHeaderValue("ETag") : std::string();
	range = ByteRange {first, last - first + 1};
	return true;
}

RangeAnswer RangeAnswerOf(const duckdb::HTTPResponse &response) {
	auto header = [&response](const char *name) {
		return response.HasHeader(name) ? response.GetHeaderValue(name) : std::string();
	};
	return {static_cast<int>(response.status), header("Content-Range"), header("Content-Length"), header("ETag"),
	        header("Last-Modified"),           header("Date")};
}

PredictedVersion ToKnown(const ObjectVersion &version) {
	PredictedVersion known;
	known.size = version.size;
	known.etag = version.etag;
	known.last_modified_us = version.last_modified.value;
	return known;
}

ObjectVersion FromKnown(const PredictedVersion &known) {
	ObjectVersion version;
	version.size = known.size;
	version.etag = known.etag;
	version.last_modified = duckdb::timestamp_t(known.last_modified_us);
	return version;
}

} // namespace httpfs2
