// stack.json and construct.json: small side files, parsed through a RapidJSON DOM. The DOM parse is
// iterative and the pool allocator frees without recursion, so hostile nesting cannot exhaust the stack;
// the walk below only looks a fixed number of levels deep.
#include <fmt/format.h>
#include <rapidjson/document.h>

#include <algorithm>

#include "dump/JsonSupport.h"
#include "probe/construct.h"
#include "probe/error.h"
#include "probe/stack.h"

namespace probe {

namespace {

constexpr unsigned kFlags = rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag |
                            rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag;

rapidjson::Document parse_object(std::string_view json, const std::string& path) {
  rapidjson::Document doc;
  doc.Parse<kFlags>(json.data(), json.size());
  if (doc.HasParseError())
    throw Error(
        ErrorKind::Format,
        fmt::format("invalid JSON at {}: {}", dump_detail::describe_position(json, doc.GetErrorOffset()),
                    dump_detail::parse_error_text(doc.GetParseError())),
        path);
  if (!doc.IsObject()) throw Error(ErrorKind::Format, "the top level must be a JSON object", path);
  return doc;
}

std::string_view text_of(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

std::vector<std::string> strings(const rapidjson::Value& v, const std::string& path,
                                 const std::string& field) {
  if (!v.IsArray()) throw Error(ErrorKind::Format, "expected a list of strings", path, field);
  std::vector<std::string> out;
  out.reserve(v.Size());
  for (const auto& s : v.GetArray()) {
    if (!s.IsString()) throw Error(ErrorKind::Format, "expected a list of strings", path, field);
    out.emplace_back(text_of(s));
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
  const rapidjson::Document doc = parse_object(json, path);
  StackInfo info;
  // msprobe's rule: a truthy "0" member means the de-duplicated format.
  const auto zero = doc.FindMember("0");
  info.legacy_ = !(zero != doc.MemberEnd() && zero->value.IsArray() && !zero->value.Empty());
  for (const auto& m : doc.GetObject()) {
    const std::string key(text_of(m.name));
    Group g;
    if (info.legacy_) {
      g.keys.push_back(key);
      g.frames = strings(m.value, path, key);
    } else {
      if (!m.value.IsArray() || m.value.Size() != 2)
        throw Error(ErrorKind::Format, "expected [record keys, stack frames]", path, key);
      g.keys = strings(m.value[0], path, key + ".0");
      g.frames = strings(m.value[1], path, key + ".1");
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
  const rapidjson::Document doc = parse_object(json, path);
  ConstructInfo info;
  auto parent_of = [&](const rapidjson::Value& v, const std::string& key) -> std::optional<std::string> {
    if (v.IsNull()) return std::nullopt;
    if (!v.IsString())
      throw Error(ErrorKind::Format, "expected a parent key, null, or [parent, step]", path, key);
    if (v.GetStringLength() == 0) return std::nullopt;  // older dumps write "" for "no parent"
    return std::string(text_of(v));
  };
  for (const auto& m : doc.GetObject()) {
    const std::string key(text_of(m.name));
    if (key == "megatron_micro_step_number") {
      if (!m.value.IsInt64()) throw Error(ErrorKind::Format, "expected an int", path, key);
      info.micro_steps_ = m.value.GetInt64();
      continue;
    }
    Node n;
    n.key = key;
    if (m.value.IsArray()) {
      if (m.value.Size() != 2 || !m.value[1].IsInt64())
        throw Error(ErrorKind::Format, "expected [parent, micro_step]", path, key);
      n.parent = parent_of(m.value[0], key);
      n.micro_step = m.value[1].GetInt64();
    } else {
      n.parent = parent_of(m.value, key);
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
