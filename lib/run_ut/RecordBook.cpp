#include "run_ut/RecordBook.h"

namespace probe::rut {
namespace {

// Names in the digests file: '%', TAB, CR and LF as %25, %09, %0D, %0A, so that one line is one record
// whatever a sender put in its key.
std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\t':
        out += "%09";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      default:
        out += c;
    }
  }
  return out;
}

int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = nibble(s[i + 1]), lo = nibble(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::optional<RecordDigest> parse_digest(std::string_view hex) {
  RecordDigest d{};
  if (hex.size() != 2 * d.size()) return std::nullopt;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    d[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return d;
}

}  // namespace

std::string hex_of(const RecordDigest& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * d.size());
  for (std::uint8_t b : d) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

std::string RecordBook::digest_line(std::string_view api, const RecordDigest& digest) {
  return escape(api) + '\t' + hex_of(digest) + '\n';
}

std::size_t RecordBook::resume(std::optional<std::string> run_id, const std::vector<std::string>& done,
                               std::string_view digests) {
  run_id_ = std::move(run_id);
  for (const std::string& api : done) seen_.emplace(api, std::nullopt);
  std::size_t at = 0, intact = 0;
  while (at < digests.size()) {
    std::size_t end = digests.find('\n', at);
    const bool whole = end != std::string_view::npos;
    if (!whole) end = digests.size();
    const std::string_view line = digests.substr(at, end - at);
    if (!whole) break;  // the torn tail of a killed server
    at = intact = end + 1;
    const std::size_t tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    auto api = unescape(line.substr(0, tab));
    auto d = parse_digest(line.substr(tab + 1));
    if (!api || !d) continue;
    // Only a name that was written keeps its digest; one accepted but never written is checked again.
    auto it = seen_.find(*api);
    if (it != seen_.end()) it->second = *d;
  }
  return intact;
}

Admission RecordBook::admit(const std::string& run_id, const std::optional<std::string>& api,
                            const RecordDigest& digest, bool* fixed_run) {
  if (fixed_run) *fixed_run = false;
  if (!run_id_) {
    run_id_ = run_id;
    if (fixed_run) *fixed_run = true;
  }
  if (run_id != *run_id_) return Admission::OtherRun;
  if (!api) return Admission::Ignored;
  auto [it, fresh] = seen_.emplace(*api, digest);
  if (fresh) return Admission::Check;
  if (!it->second || *it->second == digest) return Admission::Repeat;
  return Admission::Conflict;
}

}  // namespace probe::rut
