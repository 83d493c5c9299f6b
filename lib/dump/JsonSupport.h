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
/// Zero bytes appended after the text: RapidJSON's in-situ parse needs a terminator and its SIMD
/// whitespace skipping reads whole 16-byte blocks.
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

/// "line L, column C (byte offset O)" of `offset` in `text` (1-based line and column).
std::string describe_position(std::string_view text, std::size_t offset);

/// Human text of a RapidJSON parse error code (passed as int so no RapidJSON type leaks out).
std::string_view parse_error_text(int code);

}  // namespace probe::dump_detail
