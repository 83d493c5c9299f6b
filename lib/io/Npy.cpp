// .npy reader and writer (numpy.lib.format versions 1.0, 2.0 and 3.0).
#include <bit>
#include <cstring>
#include <limits>
#include <optional>

#include "io/TensorIo.h"

namespace probe::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kMaxDims = 64;

struct Descr {
  DType dtype;
  bool swap;  // stored in the other byte order
};

// Validates UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n;
    std::uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else
      return false;
    if (i + n >= s.size()) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

std::optional<Descr> parse_descr(std::string_view d) {
  if (d.empty()) return std::nullopt;
  char order = '=';
  if (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=') {
    order = d[0];
    d.remove_prefix(1);
  }
  struct Code {
    std::string_view code;
    DType type;
  };
  static constexpr Code kCodes[] = {
      {"b1", DType::Bool},    {"?", DType::Bool},       {"u1", DType::UInt8},       {"i1", DType::Int8},
      {"i2", DType::Int16},   {"i4", DType::Int32},     {"i8", DType::Int64},       {"u2", DType::UInt16},
      {"u4", DType::UInt32},  {"u8", DType::UInt64},    {"f2", DType::Float16},     {"f4", DType::Float32},
      {"f8", DType::Float64}, {"c8", DType::Complex64}, {"c16", DType::Complex128},
  };
  for (const Code& c : kCodes)
    if (d == c.code) {
      bool big = order == '>' || (order == '=' && std::endian::native == std::endian::big);
      bool multi = itemsize(c.type) > 1;
      return Descr{c.type, multi && (big != (std::endian::native == std::endian::big))};
    }
  return std::nullopt;
}

// A tiny parser for the Python dict literal numpy writes:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& file) : s_(text), file_(file) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') {
        ++i_;
        break;
      }
      std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        if (have_descr) fail("duplicate key 'descr'");
        skip_ws();
        if (peek() != '\'' && peek() != '"')
          throw Error(ErrorKind::Unsupported,
                      "structured or non-string descr is not supported (only plain "
                      "numeric and bool arrays)",
                      file_, "npy header");
        descr = string_literal();
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_fortran) fail("duplicate key 'fortran_order'");
        fortran = boolean();
        have_fortran = true;
      } else if (key == "shape") {
        if (have_shape) fail("duplicate key 'shape'");
        shape = tuple();
        have_shape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() == '}') {
        ++i_;
        break;
      }
      fail("expected ',' or '}'");
    }
    skip_ws();
    if (i_ != s_.size()) fail("trailing characters after the dict");
    if (!have_descr || !have_fortran || !have_shape)
      fail("missing key (needs 'descr', 'fortran_order' and 'shape')");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorKind::Format, "malformed header at character " + std::to_string(i_) + ": " + what, file_,
                "npy header");
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string_literal() {
    skip_ws();
    char q = peek();
    if (q != '\'' && q != '"') fail("expected a string");
    std::size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\') fail("escapes are not supported in header strings");
      ++i_;
    }
    if (i_ >= s_.size()) fail("unterminated string");
    std::string out(s_.substr(start, i_ - start));
    ++i_;
    return out;
  }
  bool boolean() {
    skip_ws();
    if (s_.substr(i_, 4) == "True") {
      i_ += 4;
      return true;
    }
    if (s_.substr(i_, 5) == "False") {
      i_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  std::int64_t integer() {
    skip_ws();
    if (peek() < '0' || peek() > '9') fail("expected a non-negative integer");
    std::int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      int digit = peek() - '0';
      if (v > (std::numeric_limits<std::int64_t>::max() - digit) / 10) fail("dimension overflows int64");
      v = v * 10 + digit;
      ++i_;
    }
    if (peek() == 'L') ++i_;  // Python 2 long literal, as old numpy wrote
    return v;
  }
  Shape tuple() {
    expect('(');
    Shape out;
    skip_ws();
    if (peek() == ')') {
      ++i_;
      return out;
    }
    while (true) {
      out.push_back(integer());
      if (out.size() > kMaxDims) fail("more than " + std::to_string(kMaxDims) + " dimensions");
      skip_ws();
      if (peek() == ',') {
        ++i_;
        skip_ws();
        if (peek() == ')') {
          ++i_;
          break;
        }
        continue;
      }
      if (peek() == ')') {
        ++i_;
        if (out.size() == 1) fail("one-element tuple needs a trailing comma");
        break;
      }
      fail("expected ',' or ')' in shape");
    }
    return out;
  }

  std::string_view s_;
  const std::string& file_;
  std::size_t i_ = 0;
};

}  // namespace

namespace {

// What a .npy header says, checked against the bytes that follow it.
struct NpyLayout {
  Descr descr;
  bool fortran = false;
  Shape shape;
  std::int64_t numel = 0;
  std::size_t data_offset = 0;  // from the start of the .npy
};

// `size` bytes at `p` hold the header; `total` (>= size) is the size of the whole .npy, which the data
// declared by the header must fit in.
NpyLayout read_npy_layout(const std::byte* p, std::size_t size, const std::string& file,
                          std::uint64_t total) {
  if (size < kMagicLen + 4 || std::memcmp(p, kMagic, kMagicLen) != 0)
    throw Error(ErrorKind::Format,
                size < kMagicLen + 4 ? "file too short to be .npy" : "wrong magic (not a .npy file)", file);
  const auto major = static_cast<unsigned>(p[6]), minor = static_cast<unsigned>(p[7]);
  if (major < 1 || major > 3 || minor != 0)
    throw Error(ErrorKind::Unsupported,
                "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor),
                file);
  std::size_t hstart, hlen;
  if (major == 1) {
    hstart = 10;
    hlen = static_cast<std::size_t>(p[8]) | static_cast<std::size_t>(p[9]) << 8;
  } else {
    hstart = 12;
    if (size < hstart) throw Error(ErrorKind::Format, "truncated header length", file);
    hlen = 0;
    for (int k = 3; k >= 0; --k) hlen = (hlen << 8) | static_cast<std::size_t>(p[8 + k]);
  }
  if (hlen > size - hstart)
    throw Error(ErrorKind::Format,
                "header claims " + std::to_string(hlen) + " bytes but the file has only " +
                    std::to_string(size - hstart) + " after the prefix",
                file);
  std::string_view text(reinterpret_cast<const char*>(p + hstart), hlen);
  if (major == 3) {
    if (!valid_utf8(text)) throw Error(ErrorKind::Format, "header is not valid UTF-8", file, "npy header");
  } else {
    // Versions 1 and 2 are latin-1; numpy only ever writes ASCII, and nothing valid needs more.
    for (std::size_t k = 0; k < text.size(); ++k)
      if (static_cast<unsigned char>(text[k]) >= 0x80)
        throw Error(ErrorKind::Format, "header has a non-ASCII byte at " + std::to_string(k), file,
                    "npy header");
  }
  std::string descr;
  bool fortran = false;
  Shape shape;
  HeaderParser(text, file).parse(descr, fortran, shape);
  auto d = parse_descr(descr);
  if (!d)
    throw Error(
        ErrorKind::Unsupported,
        "unsupported dtype descr '" + descr + "' (plain numeric/bool only; object arrays are never loaded)",
        file, "descr");

  std::int64_t n;
  try {
    n = numel(shape);
  } catch (const Error& e) {
    throw e.with_context(file, "shape");
  }
  const std::size_t es = itemsize(d->dtype);
  const std::size_t data_off = hstart + hlen;
  const std::uint64_t avail = total - data_off;
  // Compare in element units so that a huge declared shape cannot overflow the byte count.
  if (static_cast<std::uint64_t>(n) > avail / es)
    throw Error(ErrorKind::Format,
                "header declares shape " + shape_to_string(shape) + " of " + descr + " but only " +
                    std::to_string(avail) + " data bytes follow",
                file);

  return {*d, fortran, std::move(shape), n, data_off};
}

NpyLayout read_npy_layout(const std::byte* p, std::size_t size, const std::string& file) {
  return read_npy_layout(p, size, file, size);
}

}  // namespace

std::uint64_t npy_declared_size(const std::byte* p, std::size_t size, const std::string& file) {
  // The data is not here: check the header only (the declared data "fits" in any total).
  const NpyLayout l = read_npy_layout(p, size, file, std::numeric_limits<std::uint64_t>::max());
  const std::uint64_t es = itemsize(l.descr.dtype), n = static_cast<std::uint64_t>(l.numel);
  const std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
  return n > (most - l.data_offset) / es ? most : l.data_offset + n * es;
}

TensorHeader parse_npy_header(const std::shared_ptr<Storage>& buf, std::size_t begin, std::size_t size,
                              const std::string& file) {
  NpyLayout l = read_npy_layout(buf->data() + begin, size, file);
  return {l.descr.dtype, std::move(l.shape)};
}

Tensor parse_npy(const std::shared_ptr<Storage>& buf, std::size_t begin, std::size_t size,
                 const std::string& file) {
  const std::byte* p = buf->data() + begin;
  NpyLayout l = read_npy_layout(p, size, file);
  const auto& d = l.descr;
  const Shape& shape = l.shape;
  const std::int64_t n = l.numel;
  const std::size_t data_off = l.data_offset;
  Tensor t;
  if (l.fortran && shape.size() > 1 && n > 0) {
    // n > 0: no dimension is 0, so every partial product of dims fits (found by the npy fuzzer:
    // with a 0 dimension the others may be huge).
    std::vector<std::int64_t> strides(shape.size());
    std::int64_t s = 1;
    for (std::size_t k = 0; k < shape.size(); ++k) {
      strides[k] = s;
      s *= shape[k];
    }
    t = materialise(d.dtype, shape, strides, p + data_off);
  } else {
    t = Tensor::from_storage(d.dtype, shape, buf, begin + data_off);
    // Swapping must not write through a view of the caller's buffer (from_storage copies only when
    // the data is misaligned).
    if (d.swap && t.storage() == buf) t = t.clone();
  }
  if (d.swap) byteswap_inplace(t);
  return normalise_bool(std::move(t));
}

std::string npy_header(DType dtype, const Shape& shape) {
  std::string descr;
  switch (dtype) {
    case DType::Bool:
      descr = "|b1";
      break;
    case DType::UInt8:
      descr = "|u1";
      break;
    case DType::Int8:
      descr = "|i1";
      break;
    case DType::Int16:
      descr = "<i2";
      break;
    case DType::Int32:
      descr = "<i4";
      break;
    case DType::Int64:
      descr = "<i8";
      break;
    case DType::UInt16:
      descr = "<u2";
      break;
    case DType::UInt32:
      descr = "<u4";
      break;
    case DType::UInt64:
      descr = "<u8";
      break;
    case DType::Float16:
      descr = "<f2";
      break;
    case DType::BFloat16:  // widened by save_npy, as MindSpore's dump does
    case DType::Float32:
      descr = "<f4";
      break;
    case DType::Float64:
      descr = "<f8";
      break;
    case DType::Complex64:
      descr = "<c8";
      break;
    case DType::Complex128:
      descr = "<c16";
      break;
  }
  // Mirrors numpy.lib.format._write_array_header: sorted keys, repr(shape), spare room for the first
  // axis to grow to 21 digits, then spaces and '\n' up to a multiple of 64 bytes.
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_to_string(shape) + ", }";
  if (!shape.empty()) dict.append(21 - std::to_string(shape[0]).size(), ' ');
  std::size_t hlen = dict.size() + 1;
  bool v2 = hlen + (64 - (10 + hlen) % 64) > 65535;  // version 1.0's uint16 length would overflow
  std::size_t prefix = v2 ? 12 : 10;
  std::size_t pad = 64 - (prefix + hlen) % 64;
  std::size_t total = hlen + pad;
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (std::size_t k = 0; k < (v2 ? 4u : 2u); ++k) out += static_cast<char>((total >> (8 * k)) & 0xFF);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  return out;
}

}  // namespace probe::io
