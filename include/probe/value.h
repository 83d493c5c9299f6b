// probe::Value: one argument or result of an API call (a tensor, a Python scalar, a list, ...).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "probe/dtype.h"
#include "probe/export.h"
#include "probe/tensor.h"

namespace probe {

class Value;

/// Python `slice(start, stop, step)`; absent parts are None.
struct PROBE_API Slice {
  std::optional<std::int64_t> start, stop, step;
  bool operator==(const Slice&) const = default;
};
/// Python `...`.
struct PROBE_API EllipsisValue {
  bool operator==(const EllipsisValue&) const = default;
};
/// Python `None`.
struct PROBE_API NoneValue {
  bool operator==(const NoneValue&) const = default;
};
/// A list or tuple of values.
struct PROBE_API ValueList {
  std::vector<Value> items;
  bool is_tuple = false;
};
/// A value probe carries but cannot compute with (torch.device "npu:0", memory_format, ...):
/// its type name and text.
struct PROBE_API OpaqueValue {
  std::string type, text;
};

/// Argument or result of an API call.
class PROBE_API Value {
 public:
  using Storage = std::variant<NoneValue, bool, std::int64_t, double, std::string, Tensor, ValueList, DType,
                               Slice, EllipsisValue, OpaqueValue>;
  enum class Kind { None, Bool, Int, Float, String, Tensor, List, DType, Slice, Ellipsis, Opaque };

  Value() = default;
  Value(NoneValue) {}
  Value(bool v) : v_(v) {}
  Value(int v) : v_(static_cast<std::int64_t>(v)) {}
  Value(std::int64_t v) : v_(v) {}
  Value(double v) : v_(v) {}
  Value(const char* v) : v_(std::string(v)) {}
  Value(std::string v) : v_(std::move(v)) {}
  Value(Tensor v) : v_(std::move(v)) {}
  Value(ValueList v) : v_(std::move(v)) {}
  Value(std::vector<Value> items, bool is_tuple = false) : v_(ValueList{std::move(items), is_tuple}) {}
  Value(DType v) : v_(v) {}
  Value(Slice v) : v_(v) {}
  Value(EllipsisValue v) : v_(v) {}
  Value(OpaqueValue v) : v_(std::move(v)) {}

  Kind kind() const noexcept { return static_cast<Kind>(v_.index()); }
  bool is_none() const noexcept { return kind() == Kind::None; }
  bool is_tensor() const noexcept { return kind() == Kind::Tensor; }
  bool is_list() const noexcept { return kind() == Kind::List; }
  /// True for bool, int and float.
  bool is_number() const noexcept {
    return kind() == Kind::Bool || kind() == Kind::Int || kind() == Kind::Float;
  }

  /// Typed accessors; throw probe::Error (InvalidArgument) naming the expected and actual kind.
  const Tensor& tensor() const;
  Tensor& tensor();
  bool as_bool() const;
  std::int64_t as_int() const;  ///< bool or int
  double as_double() const;     ///< bool, int or float
  const std::string& as_string() const;
  const std::vector<Value>& list() const;
  std::vector<Value>& list();
  DType as_dtype() const;
  const Slice& as_slice() const;
  /// int list (also accepts a single int, as PyTorch does for `int[]` parameters).
  std::vector<std::int64_t> as_int_list() const;

  const Storage& storage() const noexcept { return v_; }
  /// Python-like rendering for messages: "tensor(float32, (2, 3))", "[1, 2]", "None".
  std::string to_string() const;

 private:
  Storage v_;
};

/// Name of a value kind ("Tensor", "int", ...).
PROBE_API std::string_view to_string(Value::Kind kind) noexcept;

}  // namespace probe
