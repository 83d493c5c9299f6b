#include "probe/value.h"

#include <fmt/format.h>

#include "probe/number_format.h"

namespace probe {

std::string_view to_string(Value::Kind kind) noexcept {
  switch (kind) {
    case Value::Kind::None:
      return "None";
    case Value::Kind::Bool:
      return "bool";
    case Value::Kind::Int:
      return "int";
    case Value::Kind::Float:
      return "float";
    case Value::Kind::String:
      return "str";
    case Value::Kind::Tensor:
      return "Tensor";
    case Value::Kind::List:
      return "list";
    case Value::Kind::DType:
      return "dtype";
    case Value::Kind::Slice:
      return "slice";
    case Value::Kind::Ellipsis:
      return "ellipsis";
    case Value::Kind::Opaque:
      return "object";
  }
  return "object";
}

namespace {
[[noreturn]] void wrong_kind(std::string_view expected, Value::Kind actual) {
  throw Error(ErrorKind::InvalidArgument, fmt::format("expected {} but got {}", expected, to_string(actual)));
}
}  // namespace

const Tensor& Value::tensor() const {
  if (auto* t = std::get_if<Tensor>(&v_)) return *t;
  wrong_kind("Tensor", kind());
}
Tensor& Value::tensor() {
  if (auto* t = std::get_if<Tensor>(&v_)) return *t;
  wrong_kind("Tensor", kind());
}
bool Value::as_bool() const {
  if (auto* b = std::get_if<bool>(&v_)) return *b;
  if (auto* i = std::get_if<std::int64_t>(&v_)) return *i != 0;
  wrong_kind("bool", kind());
}
std::int64_t Value::as_int() const {
  if (auto* i = std::get_if<std::int64_t>(&v_)) return *i;
  if (auto* b = std::get_if<bool>(&v_)) return *b ? 1 : 0;
  wrong_kind("int", kind());
}
double Value::as_double() const {
  if (auto* d = std::get_if<double>(&v_)) return *d;
  if (auto* i = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*i);
  if (auto* b = std::get_if<bool>(&v_)) return *b ? 1.0 : 0.0;
  wrong_kind("float", kind());
}
const std::string& Value::as_string() const {
  if (auto* s = std::get_if<std::string>(&v_)) return *s;
  wrong_kind("str", kind());
}
const std::vector<Value>& Value::list() const {
  if (auto* l = std::get_if<ValueList>(&v_)) return l->items;
  wrong_kind("list", kind());
}
std::vector<Value>& Value::list() {
  if (auto* l = std::get_if<ValueList>(&v_)) return l->items;
  wrong_kind("list", kind());
}
DType Value::as_dtype() const {
  if (auto* d = std::get_if<DType>(&v_)) return *d;
  wrong_kind("dtype", kind());
}
const Slice& Value::as_slice() const {
  if (auto* s = std::get_if<Slice>(&v_)) return *s;
  wrong_kind("slice", kind());
}
std::vector<std::int64_t> Value::as_int_list() const {
  if (kind() == Kind::Int) return {as_int()};
  std::vector<std::int64_t> out;
  for (const Value& v : list()) out.push_back(v.as_int());
  return out;
}

std::string Value::to_string() const {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, NoneValue>)
          return "None";
        else if constexpr (std::is_same_v<T, bool>)
          return v ? "True" : "False";
        else if constexpr (std::is_same_v<T, std::int64_t>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>)
          return python_repr(v);
        else if constexpr (std::is_same_v<T, std::string>)
          return "'" + v + "'";
        else if constexpr (std::is_same_v<T, Tensor>)
          return fmt::format("tensor({}, {})", name(v.dtype()), shape_to_string(v.shape()));
        else if constexpr (std::is_same_v<T, ValueList>) {
          std::string s = v.is_tuple ? "(" : "[";
          for (std::size_t i = 0; i < v.items.size(); ++i) s += (i ? ", " : "") + v.items[i].to_string();
          if (v.is_tuple && v.items.size() == 1) s += ",";
          return s + (v.is_tuple ? ")" : "]");
        } else if constexpr (std::is_same_v<T, DType>)
          return std::string(torch_name(v));
        else if constexpr (std::is_same_v<T, Slice>) {
          auto part = [](const std::optional<std::int64_t>& p) { return p ? std::to_string(*p) : "None"; };
          return "slice(" + part(v.start) + ", " + part(v.stop) + ", " + part(v.step) + ")";
        } else if constexpr (std::is_same_v<T, EllipsisValue>)
          return "Ellipsis";
        else
          return v.text;
      },
      v_);
}

}  // namespace probe
