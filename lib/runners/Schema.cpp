// Schema strings and argument binding. Binding is table-driven: a runner only states its signature.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <limits>

#include "probe/error.h"
#include "probe/runner.h"
#include "support/Text.h"

namespace probe {

namespace {

[[noreturn]] void bad_schema(std::string_view text, const std::string& why) {
  throw Error(ErrorKind::InvalidArgument, fmt::format("invalid runner schema '{}': {}", text, why));
}

using detail::trim;

// Splits on commas that are not inside brackets or quotes.
std::vector<std::string> split_top(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  char quote = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[' || c == '(') {
      ++depth;
    } else if (c == ']' || c == ')') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  std::string last = trim(s.substr(start));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

Value parse_default(std::string_view schema, const std::string& text) {
  if (text == "None") return Value(NoneValue{});
  if (text == "True") return Value(true);
  if (text == "False") return Value(false);
  if (text == "inf") return Value(std::numeric_limits<double>::infinity());
  if (text == "-inf") return Value(-std::numeric_limits<double>::infinity());
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"'))
    return Value(text.substr(1, text.size() - 2));
  if (text.size() >= 2 && text.front() == '[') {
    std::vector<Value> items;
    for (const auto& part : split_top(std::string_view(text).substr(1, text.size() - 2)))
      if (!part.empty()) items.push_back(parse_default(schema, part));
    return Value(std::move(items));
  }
  if (auto dt = parse_dtype(text)) return Value(*dt);
  // numbers: ints stay ints, anything with '.', 'e' is a float
  char* end = nullptr;
  if (text.find_first_of(".eE") == std::string::npos) {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (end && *end == 0 && !text.empty()) return Value(static_cast<std::int64_t>(v));
  }
  const double d = std::strtod(text.c_str(), &end);
  if (end && *end == 0 && !text.empty()) return Value(d);
  // Bare identifiers such as contiguous_format or mean: keep as strings.
  for (char c : text)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      bad_schema(schema, "bad default '" + text + "'");
  return Value(text);
}

Schema::Kind parse_kind(std::string_view schema, const std::string& base) {
  using K = Schema::Kind;
  if (base == "Tensor") return K::Tensor;
  if (base == "Scalar" || base == "Number") return K::Scalar;
  if (base == "int" || base == "SymInt") return K::Int;
  if (base == "float") return K::Float;
  if (base == "bool") return K::Bool;
  if (base == "str") return K::Str;
  if (base == "ScalarType") return K::DType;
  if (base == "Any" || base == "Layout" || base == "Device" || base == "Generator" ||
      base == "MemoryFormat" || base == "Dimname")
    return K::Any;
  bad_schema(schema, "unknown type '" + base + "'");
}

}  // namespace

int Schema::index_of(std::string_view param) const noexcept {
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].name == param) return static_cast<int>(i);
  return -1;
}

Schema parse_schema(std::string_view text) {
  Schema s;
  s.text = std::string(text);
  const auto open = text.find('(');
  if (open == std::string_view::npos) bad_schema(text, "missing '('");
  // matching close paren
  int depth = 0;
  std::size_t close = std::string_view::npos;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) {
      close = i;
      break;
    }
  }
  if (close == std::string_view::npos) bad_schema(text, "missing ')'");
  s.name = trim(text.substr(0, open));
  if (s.name.empty()) bad_schema(text, "missing name");
  const std::string rest = trim(text.substr(close + 1));
  if (!rest.empty()) {
    if (rest.rfind("->", 0) != 0) bad_schema(text, "expected '->' after the parameters");
    s.returns = trim(std::string_view(rest).substr(2));
  }
  bool kw_only = false;
  for (const std::string& p : split_top(text.substr(open + 1, close - open - 1))) {
    if (p.empty()) bad_schema(text, "empty parameter");
    if (p == "*") {
      kw_only = true;
      continue;
    }
    Schema::Param param;
    param.keyword_only = kw_only;
    std::string decl = p;
    if (auto eq = decl.find('='); eq != std::string::npos) {
      param.default_value = parse_default(text, trim(decl.substr(eq + 1)));
      decl = trim(decl.substr(0, eq));
    }
    const auto sp = decl.find_last_of(' ');
    if (sp == std::string::npos) bad_schema(text, "parameter '" + decl + "' needs a type and a name");
    param.name = trim(decl.substr(sp + 1));
    std::string type = trim(decl.substr(0, sp));
    // Trailing markers in any order: ?, [], [N], ...
    for (bool changed = true; changed;) {
      changed = false;
      if (!type.empty() && type.back() == '?') {
        param.optional = true;
        type.pop_back();
        changed = true;
      } else if (type.size() > 3 && type.compare(type.size() - 3, 3, "...") == 0) {
        param.varargs = param.is_list = true;
        type.resize(type.size() - 3);
        changed = true;
      } else if (!type.empty() && type.back() == ']') {
        const auto lb = type.rfind('[');
        if (lb == std::string::npos) bad_schema(text, "bad list type '" + type + "'");
        param.is_list = true;
        type.resize(lb);
        changed = true;
      }
    }
    param.kind = parse_kind(text, type);
    if (param.optional && !param.default_value) param.default_value = Value(NoneValue{});
    if (s.index_of(param.name) >= 0) bad_schema(text, "duplicate parameter '" + param.name + "'");
    s.params.push_back(std::move(param));
  }
  return s;
}

BoundArgs::BoundArgs(std::shared_ptr<const Schema> schema, std::vector<Value> values,
                     std::vector<std::string> origins)
    : schema_(std::move(schema)), values_(std::move(values)), origins_(std::move(origins)) {}

const Value& BoundArgs::operator[](std::string_view param) const {
  const int i = schema_->index_of(param);
  if (i < 0)
    throw Error(ErrorKind::Internal, fmt::format("runner asked for '{}', which schema '{}' does not declare",
                                                 param, schema_->text));
  return values_[static_cast<std::size_t>(i)];
}

namespace {

// What an ill-typed argument is, never blank: an opaque descriptor says its dump type.
std::string describe(const Value& v) {
  if (const auto* o = std::get_if<OpaqueValue>(&v.storage()))
    return "'" + o->type + "'" + (o->text.empty() ? "" : " (" + o->text + ")");
  std::string text = v.to_string();
  return text.empty() ? std::string(to_string(v.kind())) : text;
}

// Checks and normalises one argument against its parameter type (as PyTorch's arg parser would).
Value convert(const Schema& s, const Schema::Param& p, Value v) {
  using K = Schema::Kind;
  auto bad = [&](const Value& got) -> Error {
    return Error(ErrorKind::InvalidArgument,
                 fmt::format("{}(): argument '{}' must be {}{}, not {}", s.name, p.name,
                             p.kind == K::Tensor   ? "Tensor"
                             : p.kind == K::Int    ? "int"
                             : p.kind == K::Float  ? "float"
                             : p.kind == K::Bool   ? "bool"
                             : p.kind == K::Str    ? "str"
                             : p.kind == K::DType  ? "dtype"
                             : p.kind == K::Scalar ? "Number"
                                                   : "a value",
                             p.is_list ? " list" : "", describe(got)));
  };
  if (v.is_none()) {
    if (p.optional || p.kind == K::Any || (p.default_value && p.default_value->is_none())) return v;
    throw bad(v);
  }
  if (p.kind == K::Any) return v;
  if (p.is_list) {
    if (v.kind() == Value::Kind::List) {
      std::vector<Value> items;
      Schema::Param elem = p;
      elem.is_list = false;
      for (const Value& it : v.list()) items.push_back(convert(s, elem, it));
      const auto* l = std::get_if<ValueList>(&v.storage());
      return Value(ValueList{std::move(items), l && l->is_tuple});
    }
    // PyTorch accepts a single int for int[N] parameters (and a tensor for Tensor[]? no).
    if (p.kind == K::Int && (v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Bool)) return v;
    throw bad(v);
  }
  switch (p.kind) {
    case K::Tensor:
      if (v.is_tensor() || v.is_number()) return v;
      throw bad(v);
    case K::Scalar:
      if (v.is_number()) return v;
      if (v.is_tensor() && v.tensor().numel() == 1) return v;
      throw bad(v);
    case K::Int:
      if (v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Bool) return v;
      if (v.is_tensor() && v.tensor().numel() == 1 && !is_floating(v.tensor().dtype()))
        return Value(static_cast<std::int64_t>(v.tensor().at(0)));
      throw bad(v);
    case K::Float:
      if (v.is_number()) return Value(v.as_double());
      throw bad(v);
    case K::Bool:
      if (v.kind() == Value::Kind::Bool) return v;
      if (v.kind() == Value::Kind::Int) return Value(v.as_int() != 0);
      throw bad(v);
    case K::Str:
      if (v.kind() == Value::Kind::String) return v;
      throw bad(v);
    case K::DType:
      if (v.kind() == Value::Kind::DType) return v;
      if (v.kind() == Value::Kind::String) {
        if (auto dt = parse_dtype(v.as_string())) return Value(*dt);
      }
      throw bad(v);
    case K::Any:
      return v;
  }
  return v;
}

}  // namespace

BoundArgs bind(std::shared_ptr<const Schema> schema, const ApiCall& call) {
  const Schema& s = *schema;
  std::vector<std::optional<Value>> vals(s.params.size());
  std::vector<std::string> origins(s.params.size());
  std::size_t pi = 0;
  for (std::size_t ai = 0; ai < call.args.size(); ++ai) {
    while (pi < s.params.size() && s.params[pi].keyword_only) ++pi;
    if (pi >= s.params.size())
      throw Error(
          ErrorKind::InvalidArgument,
          fmt::format("{}() takes {} positional arguments but {} were given", s.name, pi, call.args.size()));
    const auto& p = s.params[pi];
    if (p.keyword_only)
      throw Error(ErrorKind::InvalidArgument, fmt::format("{}() got too many positional arguments", s.name));
    if (p.varargs) {
      // `int... size`: either one list argument or the remaining positional ints.
      if (ai + 1 == call.args.size() && call.args[ai].is_list()) {
        vals[pi] = convert(s, p, call.args[ai]);
      } else {
        std::vector<Value> items(call.args.begin() + static_cast<std::ptrdiff_t>(ai), call.args.end());
        vals[pi] = convert(s, p, Value(std::move(items)));
      }
      origins[pi] = "input." + std::to_string(ai);
      ai = call.args.size();
      ++pi;
      break;
    }
    vals[pi] = convert(s, p, call.args[ai]);
    origins[pi] = "input." + std::to_string(ai);
    ++pi;
  }
  for (const auto& [key, v] : call.kwargs) {
    const int i = s.index_of(key);
    if (i < 0)
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("{}() got an unexpected keyword argument '{}'", s.name, key));
    const auto iu = static_cast<std::size_t>(i);
    if (vals[iu])
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("{}() got multiple values for argument '{}'", s.name, key));
    vals[iu] = convert(s, s.params[iu], v);
    origins[iu] = "kwargs." + key;
  }
  std::vector<Value> out;
  out.reserve(vals.size());
  for (std::size_t i = 0; i < vals.size(); ++i) {
    if (!vals[i]) {
      if (!s.params[i].default_value) {
        if (s.params[i].varargs) {
          out.push_back(Value(std::vector<Value>{}));
          continue;
        }
        throw Error(ErrorKind::InvalidArgument,
                    fmt::format("{}() missing required argument '{}'", s.name, s.params[i].name));
      }
      out.push_back(*s.params[i].default_value);
    } else {
      out.push_back(std::move(*vals[i]));
    }
  }
  return BoundArgs(std::move(schema), std::move(out), std::move(origins));
}

}  // namespace probe
