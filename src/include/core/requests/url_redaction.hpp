//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/url_redaction.hpp
//
// Paths in httpfs2's messages and stats never carry credentials: presigned URLs keep theirs in the query
// string and some URLs in user info.
//===----------------------------------------------------------------------===//

#pragma once

#include <string>

namespace httpfs2 {

//! `url` without user info ("user:pass@") and with its query string replaced by "?<redacted>".
std::string RedactUrl(const std::string &url);

//! `message` with every occurrence of `url` replaced by RedactUrl(url).
std::string RedactUrlIn(const std::string &message, const std::string &url);

} // namespace httpfs2
