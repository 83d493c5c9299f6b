#include "support/JsonDocument.h"

#include <fmt/format.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "probe/error.h"

namespace probe::detail {
namespace {

// Python's json (msprobe reads every one of these files with it) keeps the last value of a repeated key,
// at the position of its first occurrence; RapidJSON keeps every member and finds the first. Rewrites
// each object of `root` to Python's result.
void keep_last_of_repeated_keys(rapidjson::Value& root) {
  std::vector<rapidjson::Value*> todo{&root};
  std::unordered_map<std::string_view, rapidjson::SizeType> first;
  while (!todo.empty()) {
    rapidjson::Value& v = *todo.back();
    todo.pop_back();
    if (v.IsArray()) {
      for (auto& item : v.GetArray()) todo.push_back(&item);
      continue;
    }
    if (!v.IsObject()) continue;
    first.clear();
    bool repeated = false;
    for (rapidjson::SizeType k = 0; k < v.MemberCount(); ++k) {
      auto& m = *(v.MemberBegin() + k);
      auto [at, fresh] = first.emplace(std::string_view(m.name.GetString(), m.name.GetStringLength()), k);
      if (!fresh) {
        repeated = true;
        (v.MemberBegin() + at->second)->value.Swap(m.value);  // the later value wins, in the first place
      }
    }
    if (repeated) {
      // Drop every later occurrence (their values were swapped into the first one), keeping the order.
      std::vector<bool> keep(v.MemberCount(), false);
      for (const auto& [name, k] : first) keep[k] = true;
      for (rapidjson::SizeType k = v.MemberCount(); k-- > 0;)
        if (!keep[k]) v.EraseMember(v.MemberBegin() + k);
    }
    // Indexes, not a range-for: comparing mutable member iterators is ambiguous under C++20 for clang.
    for (rapidjson::SizeType k = 0; k < v.MemberCount(); ++k) todo.push_back(&(v.MemberBegin() + k)->value);
  }
}

}  // namespace

rapidjson::Document parse_json_document(std::string_view text, const std::string& origin) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseFullPrecisionFlag>(text.data(), text.size());
  if (doc.HasParseError())
    throw Error(ErrorKind::Format,
                fmt::format("invalid JSON at {}: {}", describe_json_position(text, doc.GetErrorOffset()),
                            rapidjson::GetParseError_En(doc.GetParseError())),
                origin);
  keep_last_of_repeated_keys(doc);
  return doc;
}

std::string describe_json_position(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view head = text.substr(0, offset);
  const auto line = 1 + std::count(head.begin(), head.end(), '\n');
  const auto last_nl = head.rfind('\n');
  const std::size_t column = offset - (last_nl == std::string_view::npos ? 0 : last_nl + 1) + 1;
  return fmt::format("line {}, column {} (byte offset {})", line, column, offset);
}

const rapidjson::Value& json_member(const rapidjson::Value& obj, const char* key, const std::string& origin) {
  const auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) throw Error(ErrorKind::Format, "missing key", origin, key);
  return it->value;
}

std::vector<std::string> json_strings(const rapidjson::Value& obj, const char* key,
                                      const std::string& origin) {
  const rapidjson::Value& v = json_member(obj, key, origin);
  if (!v.IsArray()) throw Error(ErrorKind::Format, "expected an array of strings", origin, key);
  std::vector<std::string> out;
  for (const auto& s : v.GetArray()) {
    if (!s.IsString()) throw Error(ErrorKind::Format, "expected an array of strings", origin, key);
    out.emplace_back(s.GetString(), s.GetStringLength());
  }
  return out;
}

}  // namespace probe::detail
