#include "core/requests/http_parts.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace httpfs2 {

std::string PercentEncode(const std::string &text, bool keep_slashes) {
	static const char *hex = "0123456789ABCDEF";
	std::string encoded;
	for (unsigned char c : text) {
		if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slashes && c == '/')) {
			encoded += static_cast<char>(c);
		} else {
			encoded += '%';
			encoded += hex[c >> 4];
			encoded += hex[c & 15];
		}
	}
	return encoded;
}

std::string PercentEncodePath(const std::string &name) {
	return PercentEncode(name, true);
}

static const char *const WEEKDAYS[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const MONTHS[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

std::string FormatHttpDate(std::time_t seconds) {
	std::tm parts {};
	gmtime_r(&seconds, &parts);
	char text[64];
	std::snprintf(text, sizeof(text), "%s, %02d %s %04d %02d:%02d:%02d GMT", WEEKDAYS[parts.tm_wday], parts.tm_mday,
	              MONTHS[parts.tm_mon], parts.tm_year + 1900, parts.tm_hour, parts.tm_min, parts.tm_sec);
	return text;
}

bool ParseHttpDate(const std::string &text, std::time_t &seconds) {
	char weekday[4] = {0};
	char month[4] = {0};
	std::tm parts {};
	char zone[4] = {0};
	if (std::sscanf(text.c_str(), "%3s, %d %3s %d %d:%d:%d %3s", weekday, &parts.tm_mday, month, &parts.tm_year,
	                &parts.tm_hour, &parts.tm_min, &parts.tm_sec, zone) != 8 ||
	    std::strcmp(zone, "GMT") != 0) {
		return false;
	}
	auto found = std::find_if(std::begin(MONTHS), std::end(MONTHS),
	                          [&](const char *name) { return std::strcmp(name, month) == 0; });
	if (found == std::end(MONTHS)) {
		return false;
	}
	parts.tm_mon = static_cast<int>(found - std::begin(MONTHS));
	parts.tm_year -= 1900;
	seconds = timegm(&parts);
	return true;
}

} // namespace httpfs2
