#include "dump/JsonSupport.h"

#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

#include "probe/error.h"

namespace probe::dump_detail {

JsonBuffer read_json_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw Error(ErrorKind::Io, "file not found", path);
  if (!std::filesystem::is_regular_file(status)) throw Error(ErrorKind::Io, "not a regular file", path);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw Error(ErrorKind::Io, fmt::format("cannot open: {}", std::strerror(errno)), path);
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot determine the file size", path);
  if (size > kMaxJsonBytes)
    throw Error(ErrorKind::Unsupported,
                fmt::format("{} bytes is above the 10 GiB limit for JSON files", size), path);
  JsonBuffer buf;
  buf.bytes.reset(new char[static_cast<std::size_t>(size) + kJsonPadding]);
  const std::size_t got = std::fread(buf.data(), 1, static_cast<std::size_t>(size), f.get());
  // The file may change between stat and read; trust what was read.
  if (std::ferror(f.get())) throw Error(ErrorKind::Io, "read error", path);
  buf.size = got;
  std::fill(buf.data() + got, buf.data() + got + kJsonPadding, '\0');
  return buf;
}

std::string_view parse_error_text(int code) {
  return rapidjson::GetParseError_En(static_cast<rapidjson::ParseErrorCode>(code));
}

static_assert(kReaderFlags == (rapidjson::kParseInsituFlag | rapidjson::kParseValidateEncodingFlag |
                               rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseNanAndInfFlag));

bool parse_json_number(std::string_view text, JsonNumber& out) {
  const char* first = text.data();
  const char* last = first + text.size();
  const bool integral = text.find_first_of(".eEIN") == std::string_view::npos;  // NaN, Infinity
  if (integral) {
    const auto [p, ec] = std::from_chars(first, last, out.i);
    if (ec == std::errc() && p == last) {
      out.is_int = true;
      return true;
    }
    // Python ints are unbounded; beyond int64 keep the magnitude as a float.
  }
  out.is_int = false;
  // from_chars takes no leading '+'; RapidJSON never produces one.
  const auto [p, ec] = std::from_chars(first, last, out.d);
  if (p != last) return false;
  if (ec == std::errc::result_out_of_range) {
    // 1e400 is Infinity for Python's json; a denormal underflow is 0.0.
    const bool negative = text.starts_with('-');
    const bool tiny =
        text.find_first_of("eE") != std::string_view::npos && text[text.find_first_of("eE") + 1] == '-';
    out.d = tiny ? (negative ? -0.0 : 0.0)
                 : (negative ? -std::numeric_limits<double>::infinity()
                             : std::numeric_limits<double>::infinity());
    return true;
  }
  return ec == std::errc();
}

}  // namespace probe::dump_detail
