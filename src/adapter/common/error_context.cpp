#include "adapter/common/error_context.hpp"

#include "core/requests/url_redaction.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/common/exception/http_exception.hpp"

namespace httpfs2 {

using duckdb::ExceptionType;
using duckdb::unordered_map;

static const char *const HEADER_PREFIX = "header_";

[[noreturn]] static void ThrowHTTPException(const unordered_map<std::string, std::string> &extra_info,
                                            const std::string &message) {
	int status_code = 0;
	std::string response_body;
	std::string reason;
	unordered_map<std::string, std::string> headers;
	for (auto &entry : extra_info) {
		if (entry.first == "status_code") {
			status_code = std::atoi(entry.second.c_str());
		} else if (entry.first == "response_body") {
			response_body = entry.second;
		} else if (entry.first == "reason") {
			reason = entry.second;
		} else if (entry.first.rfind(HEADER_PREFIX, 0) == 0) {
			headers[entry.first.substr(std::string(HEADER_PREFIX).size())] = entry.second;
		}
	}
	throw duckdb::HTTPException(status_code, response_body, headers, reason, message);
}

void RethrowWithContext(const std::exception &error, const std::string &context, const std::string &url) {
	duckdb::ErrorData data(error);
	auto message = context + RedactUrlIn(data.RawMessage(), url);
	auto &extra_info = data.ExtraInfo();
	switch (data.Type()) {
	case ExceptionType::HTTP:
		ThrowHTTPException(extra_info, message);
	case ExceptionType::IO:
		throw duckdb::IOException(extra_info, message);
	case ExceptionType::INTERRUPT:
		throw duckdb::InterruptException();
	default:
		throw duckdb::Exception(extra_info, data.Type(), message);
	}
}

} // namespace httpfs2
