// Internal: JSON text exactly as Python's json.dump(obj, indent=1) writes msprobe's dump files: one space per
// level, each array element and object member on its own line, ", " never used, ensure_ascii escapes,
// floats in repr form and the bare NaN/Infinity/-Infinity tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "support/JsonText.h"

namespace probe::dump_writer {

using detail::json_quote;
/// A float token: repr digits, or NaN / Infinity / -Infinity.
std::string json_float(double v);

/// Writes the members of one object or the items of one array into `out`, opened at `depth` (the
/// indentation of the line holding the opening bracket).
class JsonBlock {
 public:
  JsonBlock(std::string& out, int depth, bool is_object);
  /// Starts a member "key": (objects) — the value text follows.
  void key(std::string_view name);
  /// Starts an array item.
  void item();
  /// Writes a member whose value is already a token.
  void member(std::string_view name, std::string_view token) {
    key(name);
    out_ += token;
  }
  /// Depth for a nested block opened as the current value.
  int child_depth() const noexcept { return depth_ + 1; }
  /// Closes the block: "{}" / "[]" when empty.
  void close();

 private:
  void separate();
  std::string& out_;
  int depth_;
  bool is_object_, empty_ = true, closed_ = false;
};

}  // namespace probe::dump_writer
