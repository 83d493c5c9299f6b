// stack.json and construct.json: small side files with a fixed, shallow schema. They are read through
// a depth-limited SAX handler into a tiny tree, so hostile nesting can exhaust neither stack nor memory.
#include <fmt/format.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dump/JsonSupport.h"
#include "probe/construct.h"
#include "probe/error.h"
#include "probe/stack.h"
#include "support/JsonDocument.h"

namespace probe {

namespace {

constexpr unsigned kFlags = dump_detail::kReaderFlags;
constexpr int kMaxDepth = 16;  // the schemas need 4

struct JsonValue {
  enum Kind { Null, Bool, Int, Double, String, Array, Object };
  JsonValue() = default;
  explicit JsonValue(Kind k) : kind(k) {}
  Kind kind = Null;
  std::int64_t i = 0;
  std::string str;
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;
  bool is_array() const { return kind == Array; }
  bool is_string() const { return kind == String; }
};

class TreeBuilder {
 public:
  JsonValue root;
  bool too_deep = false;

  bool Null() { return add(JsonValue()); }
  bool Bool(bool) { return add(JsonValue(JsonValue::Bool)); }
  bool Int(int v) { return add_int(v); }
  bool Uint(unsigned v) { return add_int(v); }
  bool Int64(std::int64_t v) { return add_int(v); }
  bool Uint64(std::uint64_t) { return add(JsonValue(JsonValue::Double)); }
  bool Double(double) { return add(JsonValue(JsonValue::Double)); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    dump_detail::JsonNumber num;
    if (!dump_detail::parse_json_number(std::string_view(s, n), num)) return false;
    return num.is_int ? add_int(num.i) : add(JsonValue(JsonValue::Double)) != nullptr;
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    JsonValue v{JsonValue::String};
    v.str.assign(s, n);
    return add(std::move(v));
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    key_.assign(s, n);
    return true;
  }
  bool StartObject() { return open(JsonValue::Object); }
  bool StartArray() { return open(JsonValue::Array); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool EndArray(rapidjson::SizeType) { return close(); }

 private:
  bool add_int(std::int64_t i) {
    JsonValue v{JsonValue::Int};
    v.i = i;
    return add(std::move(v));
  }
  JsonValue* add(JsonValue v) {
    if (open_.empty()) {
      root = std::move(v);
      return &root;
    }
    JsonValue& parent = *open_.back();
    if (parent.kind == JsonValue::Array) {
      parent.items.push_back(std::move(v));
      return &parent.items.back();
    }
    parent.members.emplace_back(key_, std::move(v));
    return &parent.members.back().second;
  }
  bool open(JsonValue::Kind kind) {
    if (open_.size() >= kMaxDepth) {
      too_deep = true;
      return false;  // the recursive parser stops here, kMaxDepth frames deep
    }
    open_.push_back(add(JsonValue(kind)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }
  // Children are only appended to the innermost open container, so these pointers stay valid.
  std::vector<JsonValue*> open_;
  std::string key_;
};

// A repeated key takes its last value, at the place of its first occurrence, as Python's json does.
void keep_last_of_repeated_keys(JsonValue& root) {
  std::vector<JsonValue*> todo{&root};
  std::unordered_map<std::string_view, std::size_t> first;
  while (!todo.empty()) {
    JsonValue& v = *todo.back();
    todo.pop_back();
    if (v.kind == JsonValue::Object) {
      first.clear();
      std::vector<std::pair<std::string, JsonValue>> kept;
      bool repeated = false;
      for (std::size_t k = 0; k < v.members.size() && !repeated; ++k)
        repeated = !first.emplace(v.members[k].first, k).second;
      if (repeated) {
        first.clear();
        kept.reserve(v.members.size());  // never reallocated: `first` views the names in `kept`
        for (auto& m : v.members) {
          if (auto at = first.find(m.first); at != first.end()) {
            kept[at->second].second = std::move(m.second);
          } else {
            kept.push_back(std::move(m));
            first.emplace(kept.back().first, kept.size() - 1);
          }
        }
        v.members = std::move(kept);
      }
      for (auto& m : v.members) todo.push_back(&m.second);
    } else if (v.kind == JsonValue::Array) {
      for (auto& item : v.items) todo.push_back(&item);
    }
  }
}

JsonValue parse_object(std::string_view json, const std::string& path) {
  // Zero padding: RapidJSON's UTF-8 validation reads a truncated multi-byte sequence past the terminator.
  std::string text(json);
  text.append(dump_detail::kJsonPadding, '\0');
  rapidjson::Reader reader;
  TreeBuilder builder;
  rapidjson::InsituStringStream stream(text.data());
  const rapidjson::ParseResult ok = reader.Parse<kFlags>(stream, builder);
  if (builder.too_deep)
    throw Error(ErrorKind::Format, fmt::format("JSON nested deeper than {} levels", kMaxDepth), path);
  if (!ok || stream.Tell() < json.size())
    throw Error(ErrorKind::Format,
                fmt::format("invalid JSON at {}: {}",
                            detail::describe_json_position(json, ok ? stream.Tell() : ok.Offset()),
                            ok ? "embedded NUL byte" : dump_detail::parse_error_text(ok.Code())),
                path);
  if (builder.root.kind != JsonValue::Object)
    throw Error(ErrorKind::Format, "the top level must be a JSON object", path);
  keep_last_of_repeated_keys(builder.root);
  return std::move(builder.root);
}

std::vector<std::string> strings(const JsonValue& v, const std::string& path, const std::string& field) {
  if (!v.is_array()) throw Error(ErrorKind::Format, "expected a list of strings", path, field);
  std::vector<std::string> out;
  out.reserve(v.items.size());
  for (const auto& s : v.items) {
    if (!s.is_string()) throw Error(ErrorKind::Format, "expected a list of strings", path, field);
    out.push_back(s.str);
  }
  return out;
}

std::string unpadded_file(const std::string& path) {
  return std::string(dump_detail::read_json_file(path).text());
}

}  // namespace

// --- stack.json ------------------------------------------------------------------------------------

StackInfo StackInfo::open(const std::string& path) { return parse(unpadded_file(path), path); }

StackInfo StackInfo::parse(std::string_view json, const std::string& path) {
  const JsonValue doc = parse_object(json, path);
  StackInfo info;
  // msprobe's rule: a truthy "0" member (Python dict semantics: the last duplicate wins) means the
  // de-duplicated format.
  const JsonValue* zero = nullptr;
  for (const auto& [k, v] : doc.members)
    if (k == "0") zero = &v;
  info.legacy_ = !(zero && zero->is_array() && !zero->items.empty());
  for (const auto& [key, value] : doc.members) {
    Group g;
    if (info.legacy_) {
      g.keys.push_back(key);
      g.frames = strings(value, path, key);
    } else {
      if (!value.is_array() || value.items.size() != 2)
        throw Error(ErrorKind::Format, "expected [record keys, stack frames]", path, key);
      g.keys = strings(value.items[0], path, key + ".0");
      g.frames = strings(value.items[1], path, key + ".1");
    }
    info.groups_.push_back(std::move(g));
  }
  return info;
}

const std::vector<std::string>* StackInfo::frames_of(std::string_view key) const noexcept {
  for (const Group& g : groups_)
    if (std::find(g.keys.begin(), g.keys.end(), key) != g.keys.end()) return &g.frames;
  return nullptr;
}

std::size_t StackInfo::key_count() const noexcept {
  std::size_t n = 0;
  for (const Group& g : groups_) n += g.keys.size();
  return n;
}

// --- construct.json --------------------------------------------------------------------------------

ConstructInfo ConstructInfo::open(const std::string& path) { return parse(unpadded_file(path), path); }

ConstructInfo ConstructInfo::parse(std::string_view json, const std::string& path) {
  const JsonValue doc = parse_object(json, path);
  ConstructInfo info;
  auto parent_of = [&](const JsonValue& v, const std::string& key) -> std::optional<std::string> {
    if (v.kind == JsonValue::Null) return std::nullopt;
    if (!v.is_string())
      throw Error(ErrorKind::Format, "expected a parent key, null, or [parent, step]", path, key);
    if (v.str.empty()) return std::nullopt;  // older dumps write "" for "no parent"
    return v.str;
  };
  for (const auto& [key, value] : doc.members) {
    if (key == "megatron_micro_step_number") {
      if (value.kind != JsonValue::Int) throw Error(ErrorKind::Format, "expected an int", path, key);
      info.micro_steps_ = value.i;
      continue;
    }
    Node n;
    n.key = key;
    if (value.is_array()) {
      if (value.items.size() != 2 || value.items[1].kind != JsonValue::Int)
        throw Error(ErrorKind::Format, "expected [parent, micro_step]", path, key);
      n.parent = parent_of(value.items[0], key);
      n.micro_step = value.items[1].i;
    } else {
      n.parent = parent_of(value, key);
    }
    info.nodes_.push_back(std::move(n));
  }
  return info;
}

const ConstructInfo::Node* ConstructInfo::find(std::string_view key) const noexcept {
  for (const Node& n : nodes_)
    if (n.key == key) return &n;
  return nullptr;
}

}  // namespace probe
