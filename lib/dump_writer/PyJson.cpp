#include "dump_writer/PyJson.h"

#include <cmath>
#include <cstdio>

#include "probe/number_format.h"

namespace probe::dump_writer {

std::string json_float(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return python_repr(v);
}

JsonBlock::JsonBlock(std::string& out, int depth, bool is_object)
    : out_(out), depth_(depth), is_object_(is_object) {
  out_ += is_object ? '{' : '[';
}

void JsonBlock::separate() {
  if (!empty_) out_ += ',';
  empty_ = false;
  out_ += '\n';
  out_.append(static_cast<std::size_t>(depth_ + 1), ' ');
}

void JsonBlock::key(std::string_view name) {
  separate();
  out_ += json_quote(name);
  out_ += ": ";
}

void JsonBlock::item() { separate(); }

void JsonBlock::close() {
  if (closed_) return;
  closed_ = true;
  if (!empty_) {
    out_ += '\n';
    out_.append(static_cast<std::size_t>(depth_), ' ');
  }
  out_ += is_object_ ? '}' : ']';
}

}  // namespace probe::dump_writer
