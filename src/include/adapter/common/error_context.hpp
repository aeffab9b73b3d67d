//===----------------------------------------------------------------------===//
//                         httpfs2
//
// adapter/common/error_context.hpp
//
// Rethrows a wrapped filesystem's error with httpfs2's context in front of its message, keeping what callers and
// clients look at: the exception type (an HTTPException stays one, with its status code), its extra info, and no
// credentials in the URL.
//===----------------------------------------------------------------------===//

#pragma once

#include <exception>
#include <string>

namespace httpfs2 {

//! Throws `error` again as the same DuckDB exception type with `context` prepended to its message; occurrences of
//! `url` in the message are redacted (no user info, no query string).
[[noreturn]] void RethrowWithContext(const std::exception &error, const std::string &context, const std::string &url);

} // namespace httpfs2
