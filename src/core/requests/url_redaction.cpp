#include "core/requests/url_redaction.hpp"

namespace httpfs2 {

std::string RedactUrl(const std::string &url) {
	std::string result = url;
	auto query = result.find('?');
	if (query != std::string::npos) {
		result = result.substr(0, query) + "?<redacted>";
	}
	auto scheme_end = result.find("://");
	if (scheme_end != std::string::npos) {
		auto authority_start = scheme_end + 3;
		auto authority_end = result.find_first_of("/?", authority_start);
		auto at = result.find('@', authority_start);
		if (at != std::string::npos && (authority_end == std::string::npos || at < authority_end)) {
			result.erase(authority_start, at + 1 - authority_start);
		}
	}
	return result;
}

std::string RedactUrlIn(const std::string &message, const std::string &url) {
	auto redacted = RedactUrl(url);
	if (url.empty() || redacted == url) {
		return message;
	}
	std::string result;
	size_t position = 0;
	while (true) {
		auto found = message.find(url, position);
		if (found == std::string::npos) {
			result.append(message, position, std::string::npos);
			return result;
		}
		result.append(message, position, found - position);
		result.append(redacted);
		position = found + url.size();
	}
}

} // namespace httpfs2
