#include "support/JsonText.h"

#include <cstdio>

namespace probe::detail {
namespace {

void put_u16(std::string& out, unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04x", v & 0xFFFFu);
  out += buf;
}

// Decodes one UTF-8 sequence at text[i]; returns the code point (U+FFFD for an invalid sequence) and
// advances i past the bytes it used.
char32_t decode_utf8(std::string_view text, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  int len = b0 >= 0xF0 && b0 <= 0xF4 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 && b0 < 0xE0 ? 2 : 0;
  if (len == 0 || i + static_cast<std::size_t>(len) > text.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t cp = b0 & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  // Overlong forms and surrogates are not valid UTF-8.
  static constexpr char32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return 0xFFFD;
  }
  i += static_cast<std::size_t>(len);
  return cp;
}

}  // namespace

std::string json_quote(std::string_view text, bool html_safe) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '<':
        case '>':
        case '&':  // inside an HTML <script>, "</script>" and "<!--" must not appear literally
          if (html_safe)
            put_u16(out, c);
          else
            out += static_cast<char>(c);
          break;
        default:
          if (c < 0x20 || c == 0x7F)  // Python escapes everything outside ' '..'~'
            put_u16(out, c);
          else
            out += static_cast<char>(c);
      }
      continue;
    }
    const char32_t cp = decode_utf8(text, i);
    if (cp >= 0x10000) {  // Python writes astral characters as a UTF-16 surrogate pair
      const char32_t v = cp - 0x10000;
      put_u16(out, 0xD800 + static_cast<unsigned>(v >> 10));
      put_u16(out, 0xDC00 + static_cast<unsigned>(v & 0x3FF));
    } else {
      put_u16(out, static_cast<unsigned>(cp));
    }
  }
  out += '"';
  return out;
}

}  // namespace probe::detail
