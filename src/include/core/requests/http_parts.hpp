//===----------------------------------------------------------------------===//
//                         httpfs2
//
// core/requests/http_parts.hpp
//
// What the S3 and Azure request builders of this folder share: a header or query parameter as (name, value), and
// the percent-encoding of URL parts, the dates of HTTP headers.
//===----------------------------------------------------------------------===//

#pragma once

#include <ctime>
#include <string>
#include <utility>

namespace httpfs2 {

//! One header (or query parameter) of a request httpfs2 builds itself.
using HttpHeader = std::pair<std::string, std::string>;

//! RFC 3986 percent-encoding: unreserved characters (and with `keep_slashes` '/') kept, every other byte %XX.
std::string PercentEncode(const std::string &text, bool keep_slashes = false);

//! `path` percent-encoded except unreserved characters and '/' (as Azure and S3 expect object names in URLs).
std::string PercentEncodePath(const std::string &path);

//! RFC 1123 date in GMT ("Sun, 06 Nov 1994 08:49:37 GMT"), as Date, Last-Modified and x-ms-date carry it.
std::string FormatHttpDate(std::time_t seconds);
//! False when `text` is not an RFC 1123 date.
bool ParseHttpDate(const std::string &text, std::time_t &seconds);

} // namespace httpfs2
