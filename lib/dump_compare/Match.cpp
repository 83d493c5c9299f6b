// Matching NPU rows to bench rows (dump-and-compare §3.4): exact, fuzzy, cross-framework and mapped names.
#include <fmt/format.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "dump_compare/DumpCompareInternal.h"
#include "probe/error.h"
#include "support/FileOps.h"
#include "support/JsonDocument.h"
#include "support/Yaml.h"

namespace probe::dump_compare_detail {
namespace {

std::vector<std::pair<std::string, std::string>> parse_json_mapping(const std::string& text,
                                                                    const std::string& path) {
  const rapidjson::Document doc = detail::parse_json_document(text, path);
  if (!doc.IsObject()) throw Error(ErrorKind::Format, "a name mapping must be an object {npu: bench}", path);
  std::vector<std::pair<std::string, std::string>> out;
  // A const view: iterating rapidjson's mutable member iterators is ambiguous under C++20's
  // reversed operators (clang -Wambiguous-reversed-operator); the const ones compare cleanly.
  for (const auto& m : std::as_const(doc).GetObject()) {
    if (!m.value.IsString())
      throw Error(ErrorKind::Format, "mapping values must be strings", path, m.name.GetString());
    out.emplace_back(m.name.GetString(), m.value.GetString());
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> read_flat_mapping(const std::string& path) {
  if (path.ends_with(".json")) {
    const std::string text = detail::read_whole_file(path, "cannot open the mapping file");
    if (text.size() > (64u << 20)) throw Error(ErrorKind::Format, "mapping file larger than 64 MiB", path);
    return parse_json_mapping(text, path);
  }
  const detail::YamlNode doc = detail::yaml_read_file(path);
  std::vector<std::pair<std::string, std::string>> out;
  if (doc.is_null()) return out;
  if (doc.kind != detail::YamlNode::Kind::Mapping)
    throw Error(
        ErrorKind::Format,
        detail::yaml_where(doc) + "expected a mapping {NPU name: bench name}, got a " + doc.kind_name(),
        path);
  for (const auto& [k, v] : doc.members) {
    if (k.is_null() || k.text.empty())
      throw Error(ErrorKind::Format, detail::yaml_where(k) + "empty name in 'npu_name: bench_name'", path);
    if (v.kind != detail::YamlNode::Kind::Scalar)
      throw Error(ErrorKind::Format,
                  detail::yaml_where(k) + fmt::format("the value of '{}' is a {}; a name mapping is flat "
                                                      "{{NPU name: bench name}}",
                                                      k.text, v.kind_name()),
                  path, k.text);
    if (v.is_null() || v.text.empty())
      throw Error(ErrorKind::Format,
                  detail::yaml_where(k) + fmt::format("'{}' maps to nothing (empty name)", k.text), path,
                  k.text);
    out.emplace_back(k.text, v.text);
  }
  return out;
}

namespace {

using detail::YamlNode;

// One index list of an -am record: scalars as written (0, 1, or a kwarg name).
std::vector<std::string> index_list(const YamlNode& v, const std::string& key, const std::string& path) {
  std::vector<std::string> out;
  if (v.is_null()) return out;
  if (v.kind != YamlNode::Kind::Sequence)
    throw Error(
        ErrorKind::Format,
        detail::yaml_where(v) + fmt::format("'{}' must be a list of indices, got a {}", key, v.kind_name()),
        path, key);
  for (const YamlNode& i : v.items) {
    if (i.kind != YamlNode::Kind::Scalar || i.is_null())
      throw Error(ErrorKind::Format, detail::yaml_where(i) + fmt::format("'{}' holds a non-index entry", key),
                  path, key);
    for (const auto& seen : out)
      if (seen == i.text)
        throw Error(ErrorKind::Format,
                    detail::yaml_where(i) + fmt::format("index {} appears twice in '{}'", i.text, key), path,
                    key);
    out.push_back(i.text);
  }
  return out;
}

ApiMapRecord api_record(const YamlNode& m, const std::string& path) {
  if (m.kind != YamlNode::Kind::Mapping)
    throw Error(
        ErrorKind::Format,
        detail::yaml_where(m) + "an API mapping record must be a mapping {ms_api, pt_api, ms_args, ...}",
        path);
  static const char* const kLists[][2] = {{"ms_args", "pt_args"},
                                          {"ms_outputs", "pt_outputs"},
                                          {"ms_parameters", "pt_parameters"},
                                          {"ms_parameters_grad", "pt_parameters_grad"}};
  ApiMapRecord r;
  bool have[4][2] = {};
  std::size_t list_line[4] = {};
  for (const auto& [k, v] : m.members) {
    std::string key = k.text;
    // msprobe HEAD reads ms_output/pt_output for the output rows although it documents (and length-checks)
    // ms_outputs/pt_outputs; files written for it may carry either spelling. DECISIONS (compare -am)
    if (key == "ms_output" || key == "pt_output") key += "s";
    if (key == "ms_api" || key == "pt_api") {
      if (v.kind != YamlNode::Kind::Scalar || v.is_null() || v.text.empty())
        throw Error(ErrorKind::Format, detail::yaml_where(k) + fmt::format("'{}' must be an API name", key),
                    path, key);
      (key == "ms_api" ? r.ms_api : r.pt_api) = v.text;
      continue;
    }
    bool known = false;
    for (int g = 0; g < 4 && !known; ++g)
      for (int side = 0; side < 2 && !known; ++side)
        if (key == kLists[g][side]) {
          known = true;
          if (have[g][side])
            throw Error(ErrorKind::Format, detail::yaml_where(k) + fmt::format("'{}' given twice", key), path,
                        key);
          have[g][side] = true;
          if (!list_line[g]) list_line[g] = k.line;
          (side == 0 ? r.ms[g] : r.pt[g]) = index_list(v, key, path);
        }
    if (!known)
      throw Error(ErrorKind::Format,
                  detail::yaml_where(k) +
                      fmt::format("unknown key '{}' (expected ms_api, pt_api, ms_args, pt_args, ms_outputs, "
                                  "pt_outputs, ms_parameters, pt_parameters, ms_parameters_grad, "
                                  "pt_parameters_grad)",
                                  key),
                  path, key);
  }
  if (r.ms_api.empty() || r.pt_api.empty())
    throw Error(ErrorKind::Format, detail::yaml_where(m) + "an API mapping record needs ms_api and pt_api",
                path);
  for (const std::string* api : {&r.ms_api, &r.pt_api})
    if (std::count(api->begin(), api->end(), '.') != 1)
      throw Error(
          ErrorKind::Format,
          detail::yaml_where(m) + fmt::format("'{}' is not a two-part API name like Functional.abs", *api),
          path);
  // msprobe skips such a record with a warning; a silently ignored record is worse than a clear error.
  // DECISIONS (compare -am)
  for (int g = 0; g < 4; ++g)
    if (r.ms[g].size() != r.pt[g].size())
      throw Error(ErrorKind::Format,
                  fmt::format("line {}: {} has {} indices but {} has {} (the lists are paired)",
                              list_line[g] ? list_line[g] : m.line, kLists[g][0], r.ms[g].size(),
                              kLists[g][1], r.pt[g].size()),
                  path, kLists[g][0]);
  return r;
}

}  // namespace

std::vector<ApiMapRecord> read_api_mapping(const std::string& path) {
  const YamlNode doc = detail::yaml_read_file(path);
  std::vector<ApiMapRecord> out;
  if (doc.is_null()) return out;
  // msprobe's documentation shows one record as the whole file while its code iterates a list of records:
  // both forms are read.
  if (doc.kind == YamlNode::Kind::Mapping) {
    out.push_back(api_record(doc, path));
    return out;
  }
  if (doc.kind != YamlNode::Kind::Sequence)
    throw Error(ErrorKind::Format, detail::yaml_where(doc) + "expected a list of API mapping records", path);
  for (const YamlNode& m : doc.items) out.push_back(api_record(m, path));
  return out;
}

std::map<std::string, std::string> read_ms_to_pt_table(const std::string& path) {
  std::map<std::string, std::string> out;
  for (auto& [k, v] : read_flat_mapping(path)) out[k] = v;
  return out;
}

namespace {

std::string dtype_class(const std::string& d) {
  auto starts = [&](const char* p) { return d.rfind(p, 0) == 0; };
  if (starts("Int") || starts("UInt") || starts("torch.int") || starts("torch.uint")) return "int";
  if (starts("Float") || starts("BFloat") || starts("torch.float") || starts("torch.bfloat") ||
      d == "torch.half" || d == "torch.double")
    return "float";
  if (d == "Bool" || d == "torch.bool") return "bool";
  if (starts("Complex") || starts("torch.complex")) return "complex";
  return d;
}

bool dtype_compatible(const std::string& a, const std::string& b, bool cross) {
  if (cross) return dtype_class(a) == dtype_class(b);
  if (a == b) return true;
  auto in = [](const std::string& x, std::initializer_list<const char*> set) {
    for (const char* s : set)
      if (x == s) return true;
    return false;
  };
  if (in(a, {"Float16", "Float32", "BFloat16"}) && in(b, {"Float16", "Float32", "BFloat16"})) return true;
  return in(a, {"torch.float16", "torch.float32", "torch.bfloat16"}) &&
         in(b, {"torch.float16", "torch.float32", "torch.bfloat16"});
}

// The two-segment API name ("Functional.abs") a row name starts with, or "" for shorter names.
std::string_view api_of(std::string_view name) {
  const auto a = name.find('.');
  if (a == std::string_view::npos) return {};
  const auto b = name.find('.', a + 1);
  return b == std::string_view::npos ? name : name.substr(0, b);
}

// -am: the two-segment API prefix of a MindSpore name mapped onto PyTorch's: Mint -> Torch,
// MintFunctional -> Functional, else the built-in ms_to_pt table.
std::string api_mapped(const std::string& name, const std::map<std::string, std::string>& table) {
  if (name.rfind("MintFunctional.", 0) == 0) return "Functional." + name.substr(15);
  if (name.rfind("Mint.", 0) == 0) return "Torch." + name.substr(5);
  const std::string_view api = api_of(name);
  if (auto it = table.find(std::string(api)); it != table.end()) return it->second + name.substr(api.size());
  return name;
}

// -am with a user file (§3.4.3): the rows of a listed API get pt_api's name and the paired index; rows whose
// index is not listed get a key that never matches.
void apply_api_records(const std::vector<OpItem>& npu, const std::vector<OpItem>& bench,
                       const std::vector<ApiMapRecord>& records, std::vector<std::string>& keys) {
  std::set<std::string_view> npu_apis, bench_apis;
  for (const OpItem& o : npu) npu_apis.insert(api_of(o.name));
  for (const OpItem& o : bench) bench_apis.insert(api_of(o.name));
  for (const ApiMapRecord& r : records) {
    if (!npu_apis.count(r.ms_api) || !bench_apis.count(r.pt_api)) continue;
    for (std::size_t i = 0; i < npu.size(); ++i) {
      if (api_of(npu[i].name) != r.ms_api) continue;
      const std::string name = r.pt_api + npu[i].name.substr(r.ms_api.size());
      std::string origin = npu[i].entry_key;
      if (origin.rfind(r.ms_api, 0) == 0) origin = r.pt_api + origin.substr(r.ms_api.size());
      int group = -1;
      const char* pattern = "";
      switch (npu[i].state) {
        case RowState::Input:
          group = 0, pattern = ".input.";
          break;
        case RowState::Output:
          group = 1, pattern = ".output.";
          break;
        case RowState::Parameters:
          group = 2, pattern = ".parameters.";
          break;
        case RowState::ParametersGrad:
          group = 3, pattern = ".parameters_grad.";
          break;
        case RowState::Debug:
          continue;
      }
      std::string_view rest = name;
      const std::string head = origin + pattern;
      if (rest.substr(0, head.size()) == head) rest.remove_prefix(head.size());
      std::string key = name + "abandoned";
      for (std::size_t k = 0; k < r.ms[group].size(); ++k)
        if (rest == r.ms[group][k]) key = head + r.pt[group][k];
      keys[i] = std::move(key);
    }
  }
}

// -cm: Cell -> Module, and the cell path replaced by the module path of the mapping file.
std::string cell_mapped(const std::string& name, const std::map<std::string, std::string>& map) {
  std::size_t pos = std::string::npos;
  for (const char* marker : {".forward.", ".backward.", ".parameters_grad"}) {
    auto p = name.find(marker);
    if (p != std::string::npos && p < pos) pos = p;
  }
  if (pos == std::string::npos) return "N/A";
  const auto first = name.find('.');
  std::string head = name.substr(0, first);
  if (head == "Cell") head = "Module";
  if (first == std::string::npos || first >= pos) return head + name.substr(first);
  std::string path = name.substr(first + 1, pos - first - 1);
  if (auto it = map.find(path); it != map.end()) path = it->second;
  return head + "." + path + name.substr(pos);
}

}  // namespace

MatchResult match_rows(const std::vector<OpItem>& npu, const std::vector<OpItem>& bench,
                       const MatchConfig& cfg) {
  MatchResult r;
  r.bench.assign(npu.size(), std::nullopt);
  std::vector<std::string> keys(npu.size());
  for (std::size_t i = 0; i < npu.size(); ++i) {
    std::string k = npu[i].name;
    if (cfg.data_mapping) {
      if (auto it = cfg.data_map.find(k); it != cfg.data_map.end()) k = it->second;
    } else if (cfg.cross_framework) {
      if (cfg.cell_mapping && (npu[i].entry_key.rfind("Cell", 0) == 0)) k = cell_mapped(k, cfg.cell_map);
      if (cfg.api_mapping) k = api_mapped(k, cfg.ms_to_pt);
    }
    keys[i] = std::move(k);
  }
  if (!cfg.data_mapping && cfg.cross_framework && cfg.api_mapping && !cfg.api_records.empty())
    apply_api_records(npu, bench, cfg.api_records, keys);

  if (cfg.data_mapping) {
    // Left join on the key only: no shape and no dtype check (§3.4.4).
    std::unordered_map<std::string, std::size_t> by_name;
    for (std::size_t j = 0; j < bench.size(); ++j) by_name.emplace(bench[j].name, j);
    for (std::size_t i = 0; i < npu.size(); ++i)
      if (auto it = by_name.find(keys[i]); it != by_name.end()) r.bench[i] = it->second;
    return r;
  }

  if (!cfg.fuzzy) {
    std::unordered_map<std::string, std::size_t> by_key;
    for (std::size_t j = 0; j < bench.size(); ++j) by_key.emplace(bench[j].name + '\x1f' + bench[j].shape, j);
    for (std::size_t i = 0; i < npu.size(); ++i)
      if (auto it = by_key.find(keys[i] + '\x1f' + npu[i].shape); it != by_key.end()) r.bench[i] = it->second;
  } else {
    // Order-based queues (§3.4.2).
    std::vector<std::string> nk(npu.size()), bk(bench.size());
    for (std::size_t i = 0; i < npu.size(); ++i) nk[i] = fuzzy_key(keys[i]);
    for (std::size_t j = 0; j < bench.size(); ++j) bk[j] = fuzzy_key(bench[j].name);
    auto fits = [&](std::size_t i, std::size_t j) {
      return nk[i] == bk[j] && npu[i].shape == bench[j].shape;
    };
    std::vector<std::size_t> nq, bq;
    const std::size_t n = npu.size(), b = bench.size();
    for (std::size_t i = 0; i < std::max(n, b); ++i) {
      if (i < n) nq.push_back(i);
      if (i < b) bq.push_back(i);
      if (nq.empty() != bq.empty()) break;
      if (nq.empty()) continue;
      std::optional<std::pair<std::size_t, std::size_t>> hit;  // positions in the queues
      const std::size_t nn = nq.size() - 1, bn = bq.size() - 1;
      for (std::size_t q = 0; q < bn && !hit; ++q)
        if (fits(nq[nn], bq[q])) hit = {nn, q};
      if (!hit && fits(nq[nn], bq[bn])) hit = {nn, bn};
      for (std::size_t p = 0; p < nn && !hit; ++p)
        if (fits(nq[p], bq[bn])) hit = {p, bn};
      if (!hit) continue;
      r.bench[nq[hit->first]] = bq[hit->second];  // rows before it in the NPU queue stay unmatched
      nq.erase(nq.begin(), nq.begin() + static_cast<std::ptrdiff_t>(hit->first + 1));
      bq.erase(bq.begin(), bq.begin() + static_cast<std::ptrdiff_t>(hit->second + 1));
    }
  }
  // A matched pair with incompatible dtypes counts as unmatched (§3.4.1 post-filter).
  for (std::size_t i = 0; i < npu.size(); ++i)
    if (r.bench[i] && !dtype_compatible(npu[i].dtype, bench[*r.bench[i]].dtype, cfg.cross_framework))
      r.bench[i].reset();
  return r;
}

}  // namespace probe::dump_compare_detail
