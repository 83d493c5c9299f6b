// `compare -da`: find the first different entry of a multi-rank run (dump-and-compare §3.12).
//
// Interpretation of msprobe's find-first-diff, as probe implements it:
// * Each rank pair is compared like a statistics/md5 compare (tensor dumps by their recorded statistics).
//   An entry differs when one of its OUTPUT rows has a relative error above the data file's threshold
//   (statistics) or an md5 Result "Different"; the data file lists outputs to ignore (npu_fusion_attention
//   outputs 4 and 5, whose contents are not meant to match).
// * Phase 1: per rank, the first different entry before the rank's first communication op.
// * Phase 2 (nothing found): communication ops become graph nodes. Consecutive ops of a rank are ordered;
//   point-to-point ops are linked to their partner (send<->recv, isend<->irecv, ...) on the peer rank,
//   collectives to the same API on every rank of their group, each pair in call order. Linked ops share a
//   layer; a layer is the longest chain of ordered, linked ops before a node (ops in a cycle, e.g. isend and
//   irecv posted in opposite orders on two ranks, share a layer). Different compute entries between two
//   communication ops belong to the later op. Nodes that neither differ nor carry different compute entries
//   are pruned; in the earliest remaining layer, each rank reports its first different entry there.
// * Phase 3 (still nothing): per rank, the first different entry after its last communication op.
#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "dump_compare/DumpCompareInternal.h"
#include "probe/dump.h"
#include "probe/error.h"
#include "support/DataFiles.h"
#include "support/FileOps.h"
#include "support/JsonDocument.h"
#include "support/RankWork.h"
#include "support/Timestamp.h"

namespace probe {
namespace fs = std::filesystem;
using namespace dump_compare_detail;

namespace {

constexpr const char* kConfigName = "diff_analyze.json";

// data/diff_analyze.json: every threshold and list -da uses.
struct DiffConfig {
  std::vector<std::pair<std::string, double>> thresholds;  // column -> relative error (fraction)
  std::string md5_different = "Different";
  std::map<std::string, std::set<long long>> ignored_outputs;  // API name -> output indices
  std::vector<std::string> comm_prefixes, comm_keywords, ignored_entries;
  std::map<std::string, std::string> p2p_pairs;
};

DiffConfig load_config() {
  const std::string path = detail::data_file_path(kConfigName);
  const std::string text = detail::read_whole_file(path, "cannot open the -da configuration");
  const rapidjson::Document doc = detail::parse_json_document(text, path);
  if (!doc.IsObject()) throw Error(ErrorKind::Format, "the -da configuration must hold a JSON object", path);
  // Read through a const view: comparing rapidjson's mutable member iterators is ambiguous under C++20's
  // reversed operators (clang -Wambiguous-reversed-operator); the const ones compare cleanly.
  const rapidjson::Value& root = doc;
  auto member = [&](const char* key) -> const rapidjson::Value& {
    return detail::json_member(root, key, path);
  };
  auto strings = [&](const char* key) { return detail::json_strings(root, key, path); };
  DiffConfig c;
  const auto& th = member("relative_error_thresholds");
  if (!th.IsObject() || th.MemberCount() == 0)
    throw Error(ErrorKind::Format, "expected {column: threshold}", path, "relative_error_thresholds");
  for (const auto& m : th.GetObject()) {
    if (!m.value.IsNumber())
      throw Error(ErrorKind::Format, "expected a number", path,
                  std::string("relative_error_thresholds.") + m.name.GetString());
    c.thresholds.emplace_back(m.name.GetString(), m.value.GetDouble());
  }
  const auto& md5 = member("md5_different");
  if (!md5.IsString()) throw Error(ErrorKind::Format, "expected a string", path, "md5_different");
  c.md5_different = md5.GetString();
  const auto& io = member("ignored_outputs");
  if (!io.IsObject()) throw Error(ErrorKind::Format, "expected {api: [indices]}", path, "ignored_outputs");
  for (const auto& m : io.GetObject()) {
    if (!m.value.IsArray()) throw Error(ErrorKind::Format, "expected an array", path, "ignored_outputs");
    for (const auto& i : m.value.GetArray()) {
      if (!i.IsInt64()) throw Error(ErrorKind::Format, "expected integers", path, "ignored_outputs");
      c.ignored_outputs[m.name.GetString()].insert(i.GetInt64());
    }
  }
  c.comm_prefixes = strings("communication_prefixes");
  // Shared with nan_analyze.json, which holds them ({"from": "nan_analyze.json"}).
  c.comm_keywords = detail::data_strings(root, "communication_keywords", path);
  c.ignored_entries = strings("ignored_entries");
  c.p2p_pairs = detail::data_string_table(root, "point_to_point_pairs", path);
  return c;
}

bool is_communication(const DiffConfig& c, const std::string& key) {
  const bool prefixed = std::any_of(c.comm_prefixes.begin(), c.comm_prefixes.end(),
                                    [&](const std::string& p) { return key.starts_with(p); });
  return prefixed && std::any_of(c.comm_keywords.begin(), c.comm_keywords.end(),
                                 [&](const std::string& k) { return key.find(k) != std::string::npos; });
}

// Substring match, as msprobe (Torch.empty also covers Torch.empty_like). DECISIONS (compare -da, ignore
// list): the data file writes "Tensor.to." with its dot so that Tensor.topk / Tensor.tolist stay analysed.
bool is_ignored(const DiffConfig& c, const std::string& key) {
  return std::any_of(c.ignored_entries.begin(), c.ignored_entries.end(),
                     [&](const std::string& p) { return key.find(p) != std::string::npos; });
}

std::size_t column(const DumpCompareTable& t, std::string_view name) {
  auto it = std::find(t.header.begin(), t.header.end(), name);
  return it == t.header.end() ? t.header.size() : static_cast<std::size_t>(it - t.header.begin());
}

// The output index of a row ("….output.4" or "….output.4.x" -> 4), or -1.
long long output_index(const std::string& row_name, const std::string& entry_key) {
  if (!row_name.starts_with(entry_key + ".output.")) return -1;
  const std::string rest = row_name.substr(entry_key.size() + 8);
  std::size_t n = 0;
  while (n < rest.size() && n < 18 && rest[n] >= '0' && rest[n] <= '9') ++n;
  if (n == 0 || (n < rest.size() && rest[n] != '.')) return -1;
  return std::stoll(rest.substr(0, n));
}

bool row_differs(const DiffConfig& c, const DumpCompareTable& t, const std::vector<std::string>& row) {
  if (t.mode == DumpCompareMode::Md5) {
    const std::size_t col = column(t, "Result");
    return col < row.size() && row[col] == c.md5_different;
  }
  for (const auto& [name, threshold] : c.thresholds) {
    const std::size_t col = column(t, name);
    if (col >= row.size()) continue;
    const std::string& cell = row[col];
    // Only the "…%" texts count: "N/A" (unmatched, bench zero) and "Nan" never make a row different.
    if (cell.size() < 2 || cell.back() != '%') continue;
    const double v = std::strtod(cell.c_str(), nullptr) / 100.0;
    if (v > threshold) return true;
  }
  return false;
}

std::string state_name(RowState s) {
  switch (s) {
    case RowState::Input:
      return "input";
    case RowState::Output:
      return "output";
    case RowState::Parameters:
      return "parameters";
    case RowState::ParametersGrad:
      return "parameters_grad";
    case RowState::Debug:
      return "debug";
  }
  return "input";
}

// Every integer in a text like "[0, 1, 3]" or "2".
std::vector<long long> integers_in(const std::string& text) {
  std::vector<long long> out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] >= '0' && text[i] <= '9') {
      std::size_t j = i;
      while (j < text.size() && j - i < 18 && text[j] >= '0' && text[j] <= '9') ++j;
      out.push_back(std::stoll(text.substr(i, j - i)));
      while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

struct CommNode {
  std::size_t rank = 0, entry = 0;  // rank index, entry index
  std::string api, partner;
  bool directed = false;  // point-to-point: never linked to "every rank"
  std::set<long long> peers;
  std::vector<std::size_t> diffs_before;  // different compute entries since the previous node of the rank
  bool diff = false;
  long long layer = 0;
};

// The ranks an op talks to: src/dst/group_src/group_dst values, a process group's ranks, P2POp peers.
std::set<long long> peers_of(const DiffAnalyzeRank& r, const DiffAnalyzeRank::Entry& e) {
  const DumpCompareTable& t = r.table;
  const std::size_t value_col = column(t, t.mode == DumpCompareMode::Md5 ? "NPU MD5" : "NPU max"),
                    state_col = column(t, "state"), peer_col = column(t, "NPU P2POp peer");
  std::set<long long> peers;
  for (std::size_t i = e.first_row; i < e.first_row + e.rows; ++i) {
    const auto& row = t.rows[i];
    if (row[state_col] != "input") continue;
    const std::string& name = row[0];
    const std::string last = name.substr(name.rfind('.') + 1);
    if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst" || last == "group" ||
        last == "peer") {
      for (long long v : integers_in(row[value_col])) peers.insert(v);
    }
    if (row[peer_col] != "None")
      for (long long v : integers_in(row[peer_col])) peers.insert(v);
  }
  return peers;
}

// Layers: linked nodes are merged (union-find), strongly connected groups of the "happens before" graph
// are merged too, and a unit's layer is the longest chain of units before it.
void assign_layers(std::vector<CommNode>& nodes, const std::vector<std::vector<std::size_t>>& by_rank,
                   std::vector<std::size_t>& parent) {
  std::function<std::size_t(std::size_t)> find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  const std::size_t n = nodes.size();
  std::vector<std::vector<std::size_t>> succ(n), pred(n);
  for (const auto& chain : by_rank)
    for (std::size_t k = 1; k < chain.size(); ++k) {
      const std::size_t a = find(chain[k - 1]), b = find(chain[k]);
      if (a != b) {
        succ[a].push_back(b);
        pred[b].push_back(a);
      }
    }
  // Kosaraju, iteratively: order by finish time on succ, then components on pred.
  std::vector<std::size_t> order;
  std::vector<char> seen(n, 0);
  for (std::size_t s = 0; s < n; ++s) {
    if (find(s) != s || seen[s]) continue;
    std::vector<std::pair<std::size_t, std::size_t>> stack{{s, 0}};
    seen[s] = 1;
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      if (i < succ[v].size()) {
        const std::size_t w = succ[v][i++];
        if (!seen[w]) {
          seen[w] = 1;
          stack.emplace_back(w, 0);
        }
      } else {
        order.push_back(v);
        stack.pop_back();
      }
    }
  }
  std::vector<std::size_t> comp(n, n);
  std::size_t ncomp = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (comp[*it] != n) continue;
    std::vector<std::size_t> stack{*it};
    comp[*it] = ncomp;
    while (!stack.empty()) {
      const std::size_t v = stack.back();
      stack.pop_back();
      for (std::size_t w : pred[v])
        if (comp[w] == n) {
          comp[w] = ncomp;
          stack.push_back(w);
        }
    }
    ++ncomp;
  }
  // Kosaraju numbers components in a topological order of the condensation.
  std::vector<long long> layer(ncomp, 0);
  std::vector<std::vector<std::size_t>> members(ncomp);
  for (std::size_t v = 0; v < n; ++v)
    if (find(v) == v) members[comp[v]].push_back(v);
  for (std::size_t c = 0; c < ncomp; ++c)
    for (std::size_t v : members[c])
      for (std::size_t w : succ[v])
        if (comp[w] != c) layer[comp[w]] = std::max(layer[comp[w]], layer[c] + 1);
  for (std::size_t v = 0; v < n; ++v) nodes[v].layer = layer[comp[find(v)]];
}

void link_nodes(std::vector<CommNode>& nodes, const std::vector<std::vector<std::size_t>>& by_rank,
                const std::vector<long long>& rank_numbers, std::vector<std::size_t>& parent) {
  auto find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto talks_to = [&](const CommNode& a, long long rank) {
    return a.peers.count(rank) > 0 || (a.peers.empty() && !a.directed);
  };
  // Each ordered rank pair once, from the lower rank's side; the k-th op of a pair links to the k-th.
  for (std::size_t r = 0; r < by_rank.size(); ++r)
    for (std::size_t p = r + 1; p < by_rank.size(); ++p) {
      std::set<std::size_t> used;  // nodes of rank p already linked to rank r
      for (std::size_t a : by_rank[r]) {
        if (!talks_to(nodes[a], rank_numbers[p])) continue;
        for (std::size_t b : by_rank[p]) {
          if (used.count(b) || nodes[b].api != nodes[a].partner || !talks_to(nodes[b], rank_numbers[r]))
            continue;
          used.insert(b);
          parent[find(a)] = find(b);
          break;
        }
      }
    }
}

// A rank's -da table as ranks exchange it (RankWork.h).
void put_rank(detail::WireOut& out, const DiffAnalyzeRank& r) {
  out.str(r.rank_dir);
  out.u64(static_cast<std::uint64_t>(r.rank));
  const DumpCompareTable& t = r.table;
  out.u64(static_cast<std::uint64_t>(t.mode));
  out.strs(t.header);
  out.u64(t.rows.size());
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    out.strs(t.rows[i]);
    out.u64(t.kinds[i].size());
    for (CellKind k : t.kinds[i]) out.u64(static_cast<std::uint64_t>(k));
  }
  out.u64(t.colours.size());
  for (RowColour c : t.colours) out.u64(static_cast<std::uint64_t>(c));
  out.u64(t.first_suspect);
  out.u64(t.suspects);
  out.u64(t.unreadable);
  out.str(t.first_unreadable);
  out.u64(t.unmatched);
  out.u64(t.cancelled ? 1 : 0);
  out.u64(r.entries.size());
  for (const DiffAnalyzeRank::Entry& e : r.entries) {
    out.str(e.key);
    out.u64(e.is_same ? 1 : 0);
    out.u64(e.first_row);
    out.u64(e.rows);
    out.strs(e.stack);
  }
}

DiffAnalyzeRank get_rank(detail::WireIn& in) {
  DiffAnalyzeRank r;
  r.rank_dir = in.str();
  r.rank = static_cast<long long>(in.u64());
  DumpCompareTable& t = r.table;
  t.mode = static_cast<DumpCompareMode>(in.u64());
  t.header = in.strs();
  const std::size_t rows = in.u64();
  t.rows.resize(rows);
  t.kinds.resize(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    t.rows[i] = in.strs();
    t.kinds[i].resize(in.u64());
    for (CellKind& k : t.kinds[i]) k = static_cast<CellKind>(in.u64());
  }
  t.colours.resize(in.u64());
  for (RowColour& c : t.colours) c = static_cast<RowColour>(in.u64());
  t.first_suspect = in.u64();
  t.suspects = in.u64();
  t.unreadable = in.u64();
  t.first_unreadable = in.str();
  t.unmatched = in.u64();
  t.cancelled = in.u64() != 0;
  r.entries.resize(in.u64());
  for (DiffAnalyzeRank::Entry& e : r.entries) {
    e.key = in.str();
    e.is_same = in.u64() != 0;
    e.first_row = in.u64();
    e.rows = in.u64();
    e.stack = in.strs();
  }
  return r;
}

}  // namespace

DiffAnalyzeResult analyze_first_diff(const CompareInput& input, const DumpCompareOptions& options) {
  std::error_code ec;
  for (const std::string* p : {&input.npu_path, &input.bench_path}) {
    const char* field = p == &input.npu_path ? "npu_path" : "bench_path";
    detail::require_exists(*p, "no such file or directory", field);
    if (!fs::is_directory(*p, ec))
      throw Error(ErrorKind::InvalidArgument,
                  "-da needs step directories holding rank* directories, not a file", *p, field);
  }
  const DiffConfig cfg = load_config();
  const auto npu_ranks = rank_dirs(input.npu_path), bench_ranks = rank_dirs(input.bench_path);
  if (npu_ranks.empty()) throw Error(ErrorKind::InvalidArgument, "no rank directories", input.npu_path);
  auto names = [](const std::vector<RankDir>& v) {
    std::string s;
    for (const auto& r : v) s += (s.empty() ? "" : ", ") + r.name;
    return s.empty() ? std::string("none") : s;
  };
  // DECISIONS (compare -da, rank sets): msprobe pairs rank directories by position; -da links ranks by the
  // numbers their peers and groups name, so the two sides must hold the same rank directories.
  bool same = npu_ranks.size() == bench_ranks.size();
  for (std::size_t i = 0; same && i < npu_ranks.size(); ++i) same = npu_ranks[i].name == bench_ranks[i].name;
  if (!same)
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("the NPU and bench steps hold different ranks (NPU: {}; bench: {})",
                            names(npu_ranks), names(bench_ranks)),
                input.bench_path);
  for (std::size_t i = 1; i < npu_ranks.size(); ++i)
    if (std::max(npu_ranks[i].index, 0LL) == std::max(npu_ranks[i - 1].index, 0LL))
      throw Error(ErrorKind::InvalidArgument, "'rank' and 'rank0' name the same rank", input.npu_path);

  DumpCompareOptions opt = options;
  opt.highlight = false;
  DiffAnalyzeResult res;
  auto build_rank = [&](const RankDir& rd) {
    const fs::path n = fs::path(input.npu_path) / rd.name / "dump.json",
                   b = fs::path(input.bench_path) / rd.name / "dump.json";
    std::error_code missing;
    for (const fs::path& f : {n, b})
      if (!fs::is_regular_file(f, missing))
        throw Error(ErrorKind::Io, "missing dump.json", f.string(), rd.name);
    DiffAnalyzeRank r;
    r.rank_dir = rd.name;
    r.rank = std::max(rd.index, 0LL);
    std::vector<RowFacts> facts;
    r.table = compare_dump_files_ex(n.string(), b.string(), "", opt, true, &facts);
    DumpCompareTable& t = r.table;
    for (const char* h :
         {"state", "api_origin_name", "NPU P2POp op", "Bench P2POp op", "NPU P2POp peer", "Bench P2POp peer"})
      t.header.emplace_back(h);
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const RowFacts& f = facts[i];
      t.rows[i].push_back(state_name(f.state));
      t.rows[i].push_back(f.entry_key);
      t.rows[i].push_back(f.npu_op);
      t.rows[i].push_back(f.bench_op);
      t.rows[i].push_back(f.npu_peer);
      t.rows[i].push_back(f.bench_peer);
      t.kinds[i].resize(t.rows[i].size(), CellKind::Text);
      if (r.entries.empty() || r.entries.back().key != f.entry_key) {
        DiffAnalyzeRank::Entry e;
        e.key = f.entry_key;
        e.first_row = i;
        e.stack = f.stack;
        r.entries.push_back(std::move(e));
      }
      DiffAnalyzeRank::Entry& e = r.entries.back();
      ++e.rows;
      if (f.state != RowState::Output) continue;
      const EntryName en = parse_entry_name(f.entry_key);
      if (auto it = cfg.ignored_outputs.find(en.api); it != cfg.ignored_outputs.end())
        if (it->second.count(output_index(t.rows[i][0], f.entry_key))) continue;
      if (row_differs(cfg, t, t.rows[i])) e.is_same = false;
    }
    return r;
  };
  if (!options.group || options.group->size() == 1) {
    for (const RankDir& rd : npu_ranks) res.ranks.push_back(build_rank(rd));
  } else {
    // Each rank's table on the rank that claims it (the larger dump.json first); every rank then searches.
    std::vector<double> weights;
    for (const RankDir& rd : npu_ranks) {
      const auto size = fs::file_size(fs::path(input.npu_path) / rd.name / "dump.json", ec);
      weights.push_back(ec ? 0.0 : static_cast<double>(size));
    }
    const std::vector<std::string> built = detail::map_on_ranks(
        *options.group, weights,
        [&](std::size_t i) {
          detail::WireOut out;
          put_rank(out, build_rank(npu_ranks[i]));
          return std::move(out.bytes());
        },
        1, true);
    for (const std::string& bytes : built) {
      detail::WireIn in(bytes);
      res.ranks.push_back(get_rank(in));
    }
  }

  // Phase 1: before the first communication op.
  std::vector<std::optional<std::size_t>> first_comm(res.ranks.size());
  for (std::size_t ri = 0; ri < res.ranks.size(); ++ri) {
    const auto& entries = res.ranks[ri].entries;
    for (std::size_t ei = 0; ei < entries.size(); ++ei) {
      if (is_ignored(cfg, entries[ei].key)) continue;
      if (is_communication(cfg, entries[ei].key)) {
        first_comm[ri] = ei;
        break;
      }
      if (!entries[ei].is_same) {
        res.first_diff.push_back({ri, ei, -1});
        break;
      }
    }
  }
  if (!res.first_diff.empty()) {
    res.phase = "before_communication";
    return res;
  }

  // Phase 2: the communication graph.
  std::vector<CommNode> nodes;
  std::vector<std::vector<std::size_t>> by_rank(res.ranks.size());
  std::vector<std::vector<std::size_t>> after(res.ranks.size());
  std::vector<long long> rank_numbers;
  for (const auto& r : res.ranks) rank_numbers.push_back(r.rank);
  for (std::size_t ri = 0; ri < res.ranks.size(); ++ri) {
    if (!first_comm[ri]) continue;
    const auto& rank = res.ranks[ri];
    std::vector<std::size_t> pending;
    for (std::size_t ei = *first_comm[ri]; ei < rank.entries.size(); ++ei) {
      const auto& e = rank.entries[ei];
      if (is_ignored(cfg, e.key)) continue;
      if (!is_communication(cfg, e.key)) {
        if (!e.is_same) pending.push_back(ei);
        continue;
      }
      CommNode node;
      node.rank = ri;
      node.entry = ei;
      node.api = parse_entry_name(e.key).api;
      auto p = cfg.p2p_pairs.find(node.api);
      node.directed = p != cfg.p2p_pairs.end();
      node.partner = node.directed ? p->second : node.api;
      node.peers = peers_of(rank, e);
      node.peers.erase(rank.rank);
      node.diff = !e.is_same;
      node.diffs_before = std::move(pending);
      pending.clear();
      by_rank[ri].push_back(nodes.size());
      nodes.push_back(std::move(node));
    }
    after[ri] = std::move(pending);
  }
  std::vector<std::size_t> parent(nodes.size());
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  link_nodes(nodes, by_rank, rank_numbers, parent);
  assign_layers(nodes, by_rank, parent);
  // Pruning: only nodes that differ or carry different compute entries can hold the first difference.
  std::optional<long long> earliest;
  for (const CommNode& n : nodes)
    if (n.diff || !n.diffs_before.empty()) earliest = std::min(earliest.value_or(n.layer), n.layer);
  if (earliest) {
    for (std::size_t ri = 0; ri < by_rank.size(); ++ri)
      for (std::size_t id : by_rank[ri]) {
        const CommNode& n = nodes[id];
        if (n.layer != *earliest || (!n.diff && n.diffs_before.empty())) continue;
        res.first_diff.push_back({ri, n.diffs_before.empty() ? n.entry : n.diffs_before.front(), n.layer});
        break;
      }
    res.phase = "communication";
    return res;
  }

  // Phase 3: after the last communication op.
  for (std::size_t ri = 0; ri < after.size(); ++ri)
    if (!after[ri].empty())
      res.first_diff.push_back(
          {ri, after[ri].front(), by_rank[ri].empty() ? 0 : nodes[by_rank[ri].back()].layer + 1});
  if (!res.first_diff.empty()) res.phase = "after_communication";
  return res;
}

namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void write_cell(Writer& w, const std::string& text, CellKind kind) {
  if (kind == CellKind::Bool) {
    w.Bool(text == "True");
    return;
  }
  if (kind == CellKind::Number) {
    // The cell already holds Python's repr (what msprobe's json.dump writes); rapidjson's own double
    // formatting is not always the shortest round-trip text.
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (!text.empty() && *end == 0 && std::isfinite(d) && text.find_first_of("xXnN") == std::string::npos) {
      w.RawValue(text.c_str(), text.size(), rapidjson::kNumberType);
      return;
    }
  }
  w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
}

void write_string(Writer& w, const std::string& s) {
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
}

void write_frames(Writer& w, const std::vector<std::string>& frames) {
  w.StartArray();
  for (const auto& f : frames) write_string(w, f);
  w.EndArray();
}

void write_atomically(const std::string& path, const rapidjson::StringBuffer& buf) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::Io, "cannot write", tmp);
    out.write(buf.GetString(), static_cast<std::streamsize>(buf.GetSize()));
    out << '\n';
    out.close();
    if (!out) throw Error(ErrorKind::Io, "cannot write", tmp);
  }
  ::chmod(tmp.c_str(), 0640);
  detail::publish_new_file(tmp, path);  // never replaces an earlier output
}

}  // namespace

namespace {
std::vector<std::string> write_diff_analyze_here(const DiffAnalyzeResult& result,
                                                 const DumpCompareOptions& options) {
  std::string ts = options.timestamp.empty() ? detail::local_timestamp() : options.timestamp;
  if (!detail::is_timestamp(ts))
    throw Error(ErrorKind::InvalidArgument, "expected 14 digits YYYYmmddHHMMSS", {}, "--timestamp");
  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  if (!fs::is_directory(options.out_dir, ec))
    throw Error(ErrorKind::Io, "cannot create the output directory", options.out_dir);
  // Without --timestamp a run whose names are taken (an earlier run in the same second) moves on to the next
  // free second, as compare without -da does; with --timestamp an existing output is refused.
  auto taken = [&](const std::string& stamp) {
    for (const auto& e : fs::directory_iterator(options.out_dir, ec))
      if (e.path().filename().string().find("_" + stamp + ".") != std::string::npos) return true;
    return false;
  };
  for (int tries = 0; options.timestamp.empty() && tries < 600 && taken(ts); ++tries)
    ts = detail::next_timestamp(ts);
  std::vector<std::string> written;
  for (const DiffAnalyzeRank& r : result.ranks) {
    const DumpCompareTable& t = r.table;
    const std::size_t stack_col = column(t, "NPU_Stack_Info");
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.SetIndent(' ', 4);
    w.StartObject();
    for (const auto& e : r.entries) {
      write_string(w, e.key);
      w.StartObject();
      w.Key("is_same");
      w.Bool(e.is_same);
      w.Key("op_items");
      w.StartArray();
      for (std::size_t i = e.first_row; i < e.first_row + e.rows; ++i) {
        w.StartObject();
        for (std::size_t c = 0; c < t.header.size(); ++c) {
          write_string(w, t.header[c]);
          // msprobe keeps the stack as a list in its table, so its json holds an array.
          if (c == stack_col && i == e.first_row && !e.stack.empty())
            write_frames(w, e.stack);
          else
            write_cell(w, t.rows[i][c], t.kinds[i][c]);
        }
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndObject();
    const std::string path =
        (fs::path(options.out_dir) / fmt::format("compare_result_{}_{}.json", r.rank_dir, ts)).string();
    write_atomically(path, buf);
    written.push_back(path);
  }
  if (result.first_diff.empty()) return written;

  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.SetIndent(' ', 2);
  w.StartObject();
  for (std::size_t k = 0; k < result.first_diff.size();) {
    const std::size_t ri = result.first_diff[k].rank_index;
    const DiffAnalyzeRank& r = result.ranks[ri];
    const DumpCompareTable& t = r.table;
    const bool md5 = t.mode == DumpCompareMode::Md5;
    std::vector<std::size_t> metric_cols;
    for (const char* c :
         md5 ? std::vector<const char*>{"NPU MD5", "NPU P2POp peer"}
             : std::vector<const char*>{"NPU max", "NPU min", "NPU mean", "NPU l2norm", "NPU P2POp peer"})
      metric_cols.push_back(column(t, c));
    const std::size_t state_col = column(t, "state");
    write_string(w, fmt::format("rank_{}", r.rank));
    w.StartArray();
    for (; k < result.first_diff.size() && result.first_diff[k].rank_index == ri; ++k) {
      const DiffAnalyzeRank::Entry& e = r.entries[result.first_diff[k].entry_index];
      w.StartObject();
      w.Key("op_name");
      write_string(w, e.key);
      w.Key("data_info");
      w.StartObject();
      for (const char* state : {"input", "output"}) {
        w.Key(state);
        w.StartObject();
        for (std::size_t i = e.first_row; i < e.first_row + e.rows; ++i) {
          if (t.rows[i][state_col] != state) continue;
          write_string(w, t.rows[i][0]);
          w.StartObject();
          for (std::size_t c : metric_cols) {
            write_string(w, t.header[c]);
            write_cell(w, t.rows[i][c], t.kinds[i][c]);
          }
          w.EndObject();
        }
        w.EndObject();
      }
      w.EndObject();
      w.Key("stack_info");
      if (e.stack.empty())
        w.Null();
      else
        write_frames(w, e.stack);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  const std::string path = (fs::path(options.out_dir) / fmt::format("diff_analyze_{}.json", ns)).string();
  write_atomically(path, buf);
  written.push_back(path);
  return written;
}

}  // namespace

std::vector<std::string> write_diff_analyze(const DiffAnalyzeResult& result,
                                            const DumpCompareOptions& options) {
  if (!options.group || options.group->size() == 1) return write_diff_analyze_here(result, options);
  // Every rank holds the same result: rank 0 alone writes it, and every rank returns the paths.
  const std::string written = detail::decide_on_root(*options.group, [&] {
    detail::WireOut out;
    out.strs(write_diff_analyze_here(result, options));
    return std::move(out.bytes());
  });
  detail::WireIn in(written);
  return in.strs();
}

}  // namespace probe
