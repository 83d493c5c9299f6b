// Internal: the one JSON string writer. Python's json.dumps spelling (ensure_ascii), so text written by probe
// matches what msprobe's Python writes, and optionally safe to embed in an HTML <script>.
#pragma once

#include <string>
#include <string_view>

namespace probe::detail {

/// A JSON string literal with Python's ensure_ascii escaping (invalid UTF-8 bytes become U+FFFD). With
/// `html_safe`, '<', '>' and '&' are written as \u escapes too. Thread-safe.
std::string json_quote(std::string_view text, bool html_safe = false);

}  // namespace probe::detail
