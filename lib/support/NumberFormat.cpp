#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "probe/number_format.h"

namespace probe {
namespace {

// Renders shortest-digit scientific text ("d.ddde±x" from to_chars or printf) the way Python's
// repr and numpy's str do: positional for 1e-4 <= |v| < 1e16, else d.ddde±XX.
std::string render(std::string_view sci, double value) {
  bool negative = !sci.empty() && sci[0] == '-';
  if (negative) sci.remove_prefix(1);
  std::size_t e = sci.find('e');
  std::string_view mant = sci.substr(0, e);
  int exp10 = std::atoi(std::string(sci.substr(e + 1)).c_str());
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();

  std::string out = negative ? "-" : "";
  double mag = std::fabs(value);
  if (mag != 0 && (mag < 1e-4 || mag >= 1e16)) {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += fmt::format("e{}{:02d}", exp10 < 0 ? '-' : '+', std::abs(exp10));
    return out;
  }
  int point = exp10 + 1;  // digits before the decimal point
  // Appends one piece at a time: GCC 12 warns (-Wrestrict) on chains of string temporaries.
  if (point <= 0) {
    out.append("0.");
    out.append(static_cast<std::size_t>(-point), '0');
    out.append(digits);
  } else if (static_cast<std::size_t>(point) >= digits.size()) {
    out.append(digits);
    out.append(static_cast<std::size_t>(point) - digits.size(), '0');
    out.append(".0");
  } else {
    out.append(digits, 0, static_cast<std::size_t>(point));
    out += '.';
    out.append(digits, static_cast<std::size_t>(point));
  }
  return out;
}

template <class F>
std::string shortest(F v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  return render(std::string_view(buf, static_cast<std::size_t>(res.ptr - buf)), static_cast<double>(v));
}

}  // namespace

std::string format_fixed(double v, int precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.{}f}", v, precision);
}

std::string python_repr(double v) { return shortest(v); }
std::string python_repr(float v) { return shortest(v); }

std::string python_repr(float16_t v) {
  double d = to_double(v);
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Fewest significant digits whose decimal value rounds back to the same half.
  for (int digits = 1; digits <= 17; ++digits) {
    std::string text = fmt::format("{:.{}e}", d, digits - 1);
    if (to_float16(std::strtod(text.c_str(), nullptr)).bits == v.bits ||
        (d == 0 && to_float16(std::strtod(text.c_str(), nullptr)).bits == 0))
      return render(text, d);
  }
  return render(fmt::format("{:.16e}", d), d);
}

}  // namespace probe
