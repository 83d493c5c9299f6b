// Matching NPU rows to bench rows (dump-and-compare §3.4): exact, fuzzy, cross-framework and mapped names.
#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <fstream>
#include <sstream>
#include <unordered_map>

#include "dump_compare/DumpCompareInternal.h"
#include "probe/error.h"

namespace probe::dump_compare_detail {
namespace {

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

// A YAML scalar of the simple subset: plain, 'single' ('' escapes ') or "double" (\" \\ escapes).
std::string yaml_scalar(std::string_view raw, const std::string& path, std::size_t line) {
  std::string s = trim(raw);
  if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') {
    std::string out;
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
      out += s[i];
      if (s[i] == '\'' && i + 2 < s.size() && s[i + 1] == '\'') ++i;
    }
    return out;
  }
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
    std::string out;
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
      if (s[i] == '\\' && i + 2 < s.size()) ++i;
      out += s[i];
    }
    return out;
  }
  if (!s.empty() && (s.front() == '\'' || s.front() == '"' || s.front() == '[' || s.front() == '{' ||
                     s.front() == '&' || s.front() == '*' || s.front() == '|' || s.front() == '>'))
    throw Error(ErrorKind::Format,
                fmt::format("line {}: only plain or quoted scalars are supported in a name mapping", line),
                path);
  // Plain scalars end at a comment.
  if (auto c = s.find(" #"); c != std::string::npos) s = trim(s.substr(0, c));
  return s;
}

// Finds the ':' separating key and value, outside quotes.
std::size_t key_colon(std::string_view s) {
  char q = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (q) {
      if (s[i] == q) q = 0;
      continue;
    }
    if (s[i] == '\'' || s[i] == '"')
      q = s[i];
    else if (s[i] == ':' && (i + 1 == s.size() || s[i + 1] == ' ' || s[i + 1] == '\t'))
      return i;
  }
  return std::string_view::npos;
}

std::vector<std::pair<std::string, std::string>> parse_json_mapping(const std::string& text,
                                                                    const std::string& path) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError())
    throw Error(ErrorKind::Format,
                fmt::format("invalid JSON at byte {}: {}", doc.GetErrorOffset(),
                            rapidjson::GetParseError_En(doc.GetParseError())),
                path);
  if (!doc.IsObject()) throw Error(ErrorKind::Format, "a name mapping must be an object {npu: bench}", path);
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& m : doc.GetObject()) {
    if (!m.value.IsString())
      throw Error(ErrorKind::Format, "mapping values must be strings", path, m.name.GetString());
    out.emplace_back(m.name.GetString(), m.value.GetString());
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> read_flat_mapping(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, "cannot open the mapping file", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.size() > (64u << 20)) throw Error(ErrorKind::Format, "mapping file larger than 64 MiB", path);
  if (path.ends_with(".json")) return parse_json_mapping(text, path);
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream lines(text);
  std::string line;
  std::size_t n = 0;
  while (std::getline(lines, line)) {
    ++n;
    std::string t = trim(line);
    if (t.empty() || t.front() == '#' || t == "---" || t == "...") continue;
    if (t == "{}") continue;
    if (line.front() == ' ' || line.front() == '\t')
      throw Error(
          ErrorKind::Format,
          fmt::format("line {}: nested YAML is not a flat {{NPU row name: bench row name}} mapping", n),
          path);
    if (t.front() == '-')
      throw Error(ErrorKind::Format, fmt::format("line {}: a YAML list is not a name mapping", n), path);
    const std::size_t colon = key_colon(t);
    if (colon == std::string::npos)
      throw Error(ErrorKind::Format, fmt::format("line {}: expected 'npu_name: bench_name'", n), path);
    std::string key = yaml_scalar(std::string_view(t).substr(0, colon), path, n);
    std::string value = yaml_scalar(std::string_view(t).substr(colon + 1), path, n);
    if (key.empty() || value.empty())
      throw Error(
          ErrorKind::Format,
          fmt::format("line {}: empty name in 'npu_name: bench_name' (nested YAML is not a flat mapping)", n),
          path);
    out.emplace_back(std::move(key), std::move(value));
  }
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

// -am: the two-segment API prefix of a MindSpore name mapped onto PyTorch's.
std::string api_mapped(const std::string& name) {
  if (name.rfind("MintFunctional.", 0) == 0) return "Functional." + name.substr(15);
  if (name.rfind("Mint.", 0) == 0) return "Torch." + name.substr(5);
  return name;
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
      if (cfg.api_mapping) k = api_mapped(k);
    }
    keys[i] = std::move(k);
  }

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
