// Shared plumbing of the JSON readers in lib/dump: whole-file reads, and error positions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace probe::dump_detail {

/// msprobe refuses JSON files above 10 GiB; so does probe, before allocating anything.
inline constexpr std::uint64_t kMaxJsonBytes = 10ull << 30;
/// Zero bytes appended after the text: RapidJSON's in-situ parse needs a terminator, and its UTF-8
/// validation reads up to 3 bytes past a truncated multi-byte sequence before noticing it.
inline constexpr std::size_t kJsonPadding = 16;

/// A whole file in memory, followed by kJsonPadding zero bytes (writable: in-situ parsing).
struct JsonBuffer {
  std::unique_ptr<char[]> bytes;  // not value-initialised: no zero-fill of hundreds of MB
  std::size_t size = 0;           // without the padding
  char* data() noexcept { return bytes.get(); }
  std::string_view text() const noexcept { return {bytes.get(), size}; }
};

/// Reads `path` whole. Throws Io naming the file (missing, a directory, unreadable) or Unsupported
/// (over 10 GiB).
JsonBuffer read_json_file(const std::string& path);

/// Human text of a RapidJSON parse error code (passed as int so no RapidJSON type leaks out).
std::string_view parse_error_text(int code);

/// RapidJSON flags shared by probe's JSON readers. Every reader parses in situ, recursively (its handler
/// bounds the depth) and takes numbers as text: in that mode RapidJSON never pushes onto its internal
/// stack, whose first push computes `nullptr + n` (undefined behaviour that UBSan reports), and numbers
/// are converted by std::from_chars, which rounds correctly like Python's float().
inline constexpr unsigned kReaderFlags = 1 /*kParseInsituFlag*/ | 2 /*kParseValidateEncodingFlag*/ |
                                         64 /*kParseNumbersAsStringsFlag*/ | 256 /*kParseNanAndInfFlag*/;

/// A JSON number: int when written without '.', exponent or NaN/Infinity and within int64.
struct JsonNumber {
  bool is_int = false;
  std::int64_t i = 0;
  double d = 0;
};
/// Converts RapidJSON's raw number text; false if it is not a number (never for RapidJSON's output).
bool parse_json_number(std::string_view text, JsonNumber& out);

}  // namespace probe::dump_detail
