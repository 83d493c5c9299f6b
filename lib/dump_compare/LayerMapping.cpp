// Layer mapping (`compare -lm`, dump-and-compare §3.4.5): every dump.json entry is placed in a tree of layer
// scopes built from construct.json (parents) and stack.json (framework entry function), the NPU tree is
// walked with the user's {ClassName: {npu_attr: bench_attr}} renames, and the entry at the same position of
// the bench tree becomes the entry's partner; rows then pair by their suffix after the entry key, as a data
// mapping.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "dump_compare/DumpCompareInternal.h"
#include "probe/construct.h"
#include "probe/error.h"
#include "support/Yaml.h"

namespace probe::dump_compare_detail {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_dots(std::string_view s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  for (;;) {
    const auto e = s.find('.', b);
    out.emplace_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) return out;
    b = e + 1;
  }
}

std::string join(const std::vector<std::string>& parts, std::size_t from, std::size_t to) {
  std::string s;
  for (std::size_t i = from; i < to && i < parts.size(); ++i) s += (i > from ? "." : "") + parts[i];
  return s;
}

// Python's parts[:-n] joined.
std::string join_drop_last(const std::vector<std::string>& parts, std::size_t n) {
  return parts.size() > n ? join(parts, 0, parts.size() - n) : std::string();
}

bool is_layer(std::string_view type) { return type == "Cell" || type == "Module"; }

// The framework's own function through which a hooked API was reached: the last consecutive framework frame
// after the hook's template frame (stack.json is innermost first), skipping construct/__call__ plumbing.
std::string frame_function(const std::vector<std::string>& frames, bool mindspore) {
  std::ptrdiff_t start = -1;
  std::size_t end = frames.size();
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const std::string& f = frames[i];
    if (f.find("Template") != std::string::npos) {
      start = static_cast<std::ptrdiff_t>(i);
    } else if (start >= 0 && (mindspore ? f.find("construct") != std::string::npos
                                        : f.find("in forward,") != std::string::npos ||
                                              f.find("in backward,") != std::string::npos)) {
      end = i;
      break;
    }
  }
  const std::string* frame = nullptr;
  for (std::size_t i = static_cast<std::size_t>(start + 1); i < end; ++i) {
    const std::string& f = frames[i];
    const std::string file = f.substr(0, f.find(','));
    bool framework = false;
    for (const char* p :
         {"site-packages/torch", "package/torch", "site-packages/mindspore", "package/mindspore"})
      framework = framework || file.find(p) != std::string::npos;
    if (!framework) break;
    frame = &f;
  }
  if (!frame) return {};
  const std::vector<std::string> fields = [&] {
    std::vector<std::string> v;
    std::size_t b = 0;
    for (;;) {
      const auto e = frame->find(',', b);
      v.push_back(frame->substr(b, e == std::string::npos ? std::string::npos : e - b));
      if (e == std::string::npos) return v;
      b = e + 1;
    }
  }();
  if (fields.size() < 3) return {};
  if (fields[0].find("msprobe") != std::string::npos || fields[0].find("MindSpeed") != std::string::npos)
    return {};
  if (fields[2].find("construct") != std::string::npos || fields[2].find("__call__") != std::string::npos)
    return {};
  // " in forward" -> "forward"
  std::vector<std::string> words;
  std::size_t b = fields[2].find_first_not_of(" \t\n");
  while (b != std::string::npos) {
    const auto e = fields[2].find_first_of(" \t\n", b);
    words.push_back(fields[2].substr(b, e == std::string::npos ? std::string::npos : e - b));
    b = e == std::string::npos ? e : fields[2].find_first_not_of(" \t\n", e);
  }
  return words.size() >= 2 ? words[1] : std::string();
}

// Position of the number in the scope segment after `prefix.`: the last run of digits in it.
std::optional<std::int64_t> next_index(const std::string& scope, const std::string& prefix,
                                       std::string* segment) {
  if (scope.size() <= prefix.size() + 1 || scope.compare(0, prefix.size(), prefix) != 0 ||
      scope[prefix.size()] != '.')
    return std::nullopt;
  const std::size_t b = prefix.size() + 1;
  const std::size_t e = std::min(scope.find('.', b), scope.size());
  if (e == b) return std::nullopt;
  *segment = scope.substr(b, e - b);
  std::size_t end = segment->find_last_of("0123456789");
  if (end == std::string::npos) return std::nullopt;
  std::size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>((*segment)[begin - 1]))) --begin;
  // Digit runs longer than int64 cannot be layer numbers; treat them as unnumbered.
  if (end - begin + 1 > 18) return std::nullopt;
  return std::stoll(segment->substr(begin, end - begin + 1));
}

struct Trie {
  struct Node {
    std::string type;
    std::unordered_map<std::string, std::size_t> children;
    std::map<std::string, std::vector<std::size_t>> items;  // state -> item indices, in dump order
  };
  std::vector<Node> nodes{Node{"TopLayer", {}, {}}};

  std::size_t insert(const LayerItem& it, std::size_t index) {
    const std::vector<std::string> parts = split_dots(it.full_scope);
    std::size_t n = 0;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      auto found = nodes[n].children.find(parts[i]);
      if (found == nodes[n].children.end()) {
        nodes.push_back(Node{parts[i], {}, {}});
        found = nodes[n].children.emplace(parts[i], nodes.size() - 1).first;
      }
      n = found->second;
    }
    nodes[n].items[it.state].push_back(index);
    nodes[n].type = it.type_name;
    return n;
  }
  std::optional<std::size_t> find(const std::vector<std::string>& parts) const {
    std::size_t n = 0;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      auto found = nodes[n].children.find(parts[i]);
      if (found == nodes[n].children.end()) return std::nullopt;
      n = found->second;
    }
    return n;
  }
};

struct Rule {
  std::string origin, target;
  std::size_t level;
};
// class name -> first segment of the NPU key -> rules, longest key first.
using Rules = std::map<std::string, std::map<std::string, std::vector<Rule>>>;

Rules read_rules(const std::string& path) {
  Rules rules;
  if (path.empty()) return rules;
  const detail::YamlNode doc = detail::yaml_read_file(path);
  if (doc.is_null()) return rules;
  if (doc.kind != detail::YamlNode::Kind::Mapping)
    throw Error(ErrorKind::Format,
                detail::yaml_where(doc) + "a layer mapping is {ClassName: {npu_attr: bench_attr}}, got a " +
                    doc.kind_name(),
                path);
  for (const auto& [cls, body] : doc.members) {
    if (cls.is_null()) throw Error(ErrorKind::Format, detail::yaml_where(cls) + "empty class name", path);
    if (body.is_null()) continue;
    if (body.kind != detail::YamlNode::Kind::Mapping)
      throw Error(ErrorKind::Format,
                  detail::yaml_where(cls) + fmt::format("the value of class '{}' must be a mapping "
                                                        "{{npu_attr: bench_attr}}, got a {}",
                                                        cls.text, body.kind_name()),
                  path, cls.text);
    // "Cell" is the old name of the root's type.
    const std::string type = cls.text == "Cell" ? "TopLayer" : cls.text;
    for (const auto& [k, v] : body.members) {
      if (k.is_null() || v.kind != detail::YamlNode::Kind::Scalar || v.is_null())
        throw Error(ErrorKind::Format,
                    detail::yaml_where(k) +
                        fmt::format("class '{}': each entry must be 'npu_attr: bench_attr'", cls.text),
                    path, cls.text);
      const std::vector<std::string> key = split_dots(k.text);
      // A "(...)" after the bench name is a comment for people.
      const std::string target = v.text.substr(0, v.text.find('('));
      auto& list = rules[type][key.front()];
      // A later duplicate key wins, as in a YAML mapping read into a dict.
      const std::string& origin = k.text;  // clang 14 cannot capture structured bindings
      std::erase_if(list, [&origin](const Rule& r) { return r.origin == origin; });
      list.push_back(Rule{k.text, target, key.size()});
    }
  }
  for (auto& [type, by_first] : rules)
    for (auto& [first, list] : by_first)
      std::stable_sort(list.begin(), list.end(),
                       [](const Rule& a, const Rule& b) { return a.level > b.level; });
  return rules;
}

// Pipeline-parallel runs number the layers of a ParallelTransformer globally on MindSpore and per stage on
// PyTorch: rebase the numbers under every ParallelTransformer's ".layers" to start at 0.
void renumber_layers(std::vector<LayerItem>& items) {
  std::vector<std::string> prefixes;
  for (const LayerItem& it : items)
    if (it.type_name == "ParallelTransformer") {
      std::string p = it.full_scope + ".layers";
      if (std::find(prefixes.begin(), prefixes.end(), p) == prefixes.end()) prefixes.push_back(std::move(p));
    }
  // Every prefix's lowest number is taken before any renumbering, as msprobe does.
  std::vector<std::optional<std::int64_t>> lowest(prefixes.size());
  std::string segment;
  for (std::size_t p = 0; p < prefixes.size(); ++p)
    for (const LayerItem& it : items)
      if (auto n = next_index(it.full_scope, prefixes[p], &segment))
        lowest[p] = lowest[p] ? std::min(*lowest[p], *n) : *n;
  for (std::size_t p = 0; p < prefixes.size(); ++p) {
    if (!lowest[p]) continue;
    const std::string& prefix = prefixes[p];
    for (LayerItem& it : items)
      if (auto n = next_index(it.full_scope, prefix, &segment))
        it.full_scope = prefix + "." + std::to_string(*n - *lowest[p]) +
                        it.full_scope.substr(prefix.size() + 1 + segment.size());
  }
}

fs::path beside(const Dump& d, const char* name) { return fs::path(d.path()).parent_path() / name; }

}  // namespace

std::vector<LayerItem> layer_items(const Dump& dump, const StackInfo& stack, const ConstructInfo& construct,
                                   bool mindspore) {
  std::vector<LayerItem> items;
  std::unordered_map<std::string, std::size_t> by_key;
  items.reserve(dump.entries().size());
  for (const DumpEntry& e : dump.entries()) {
    LayerItem it;
    it.key = e.key;
    const std::vector<std::string> parts = split_dots(e.key);
    const std::size_t n = parts.size();
    if (n < 4)
      throw Error(
          ErrorKind::Format,
          fmt::format("entry '{}' has fewer than 4 dot-separated fields; layer mapping cannot place it",
                      e.key),
          dump.path(), e.key);
    std::string layer_scope;
    bool api = false;
    if (parts[n - 1] == "parameters_grad" || (parts[n - 2] == "parameters_grad" && !parts[n - 1].empty() &&
                                              std::all_of(parts[n - 1].begin(), parts[n - 1].end(),
                                                          [](unsigned char c) { return std::isdigit(c); }))) {
      // {path}.{attr}.{Class}.parameters_grad[.{g}]: the layer's own node, state parameters_grad.
      // msprobe scopes the numbered (current) form one level deeper (path.attr.attr), so a renamed layer's
      // gradients could never map; both forms use the layer's node here. DECISIONS (compare -lm)
      const std::size_t last = parts[n - 1] == "parameters_grad" ? n - 1 : n - 2;  // >= 2 as n >= 4
      it.api_type = "parameters_grad";
      it.type_name = parts[last - 1];
      it.api_name = parts[last - 2];
      it.state = "parameters_grad";
      layer_scope = join(parts, 0, last - 2);
    } else if (is_layer(parts[0])) {
      it.api_type = parts[0];
      it.type_name = parts[n - 3];
      it.api_name = parts[n - 4];
      it.state = parts[n - 2];
      layer_scope = join(parts, 0, n - 4);
    } else {
      api = true;
      it.api_type = parts[0];
      it.type_name = parts[n - 3];
      it.api_name = it.type_name;
      it.state = parts[n - 1];
      const ConstructInfo::Node* node = construct.find(e.key);
      if (node && node->parent && !node->parent->empty()) {
        const std::vector<std::string> p = split_dots(*node->parent);
        if (p.size() > 1 && p.size() < 4)
          throw Error(
              ErrorKind::Format,
              fmt::format("parent '{}' of '{}' has fewer than 4 dot-separated fields", *node->parent, e.key),
              beside(dump, "construct.json").string(), e.key);
        layer_scope = join_drop_last(p, 3);
      } else {
        layer_scope = "TopLayer";
      }
    }
    it.full_scope = layer_scope;
    // msprobe looks stacks up by entry key, which finds nothing in the current (grouped) stack.json format,
    // so its layer scopes lose the framework function there; both formats are read here. DECISIONS (compare
    // -lm)
    if (api && it.api_type != "Primitive" && it.api_type != "Jit")
      if (const auto* frames = stack.frames_of(e.key)) {
        const std::string f = frame_function(*frames, mindspore);
        if (!f.empty()) it.full_scope += "." + f;
      }
    it.full_scope += "." + it.api_name;
    by_key.emplace(e.key, items.size());
    items.push_back(std::move(it));
  }
  // Backward entries have no stack: they take the scope of their forward entry.
  for (LayerItem& it : items) {
    std::vector<std::string> parts = split_dots(it.key);
    const std::size_t from = parts.size() >= 2 ? parts.size() - 2 : 0;
    if (std::find(parts.begin() + static_cast<std::ptrdiff_t>(from), parts.end(), "backward") == parts.end())
      continue;
    for (std::size_t i = from; i < parts.size(); ++i)
      for (auto p = parts[i].find("backward"); p != std::string::npos; p = parts[i].find("backward", p))
        parts[i].replace(p, 8, "forward");
    auto f = by_key.find(join(parts, 0, parts.size()));
    if (f != by_key.end()) it.full_scope = items[f->second].full_scope;
  }
  renumber_layers(items);
  return items;
}

std::vector<std::pair<std::string, std::string>> layer_entry_mapping(const std::vector<LayerItem>& npu,
                                                                     const std::vector<LayerItem>& bench,
                                                                     const std::string& yaml_file) {
  const Rules rules = read_rules(yaml_file);
  Trie nt, bt;
  std::vector<std::size_t> npu_node(npu.size());
  for (std::size_t i = 0; i < npu.size(); ++i) npu_node[i] = nt.insert(npu[i], i);
  for (std::size_t i = 0; i < bench.size(); ++i) bt.insert(bench[i], i);

  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(npu.size());
  for (std::size_t i = 0; i < npu.size(); ++i) {
    const std::vector<std::string> scope = split_dots(npu[i].full_scope);
    std::string target = "TopLayer";
    std::size_t node = 0;
    for (std::size_t idx = 0; idx + 1 < scope.size();) {
      const std::string& child = scope[idx + 1];
      std::size_t step = 1;
      std::string to = child;
      if (auto t = rules.find(nt.nodes[node].type); t != rules.end())
        if (auto r = t->second.find(child); r != t->second.end())
          for (const Rule& rule : r->second)
            if (idx + rule.level < scope.size() &&
                join(scope, idx + 1, idx + 1 + rule.level) == rule.origin) {
              to = rule.target;
              step = rule.level;
              break;
            }
      target += "." + to;
      for (std::size_t s = 0; s < step; ++s) node = nt.nodes[node].children.at(scope[++idx]);
    }
    const auto& mine = nt.nodes[npu_node[i]].items.at(npu[i].state);
    const std::size_t ordinal =
        static_cast<std::size_t>(std::find(mine.begin(), mine.end(), i) - mine.begin());
    std::string partner = "N/A";
    if (auto b = bt.find(split_dots(target))) {
      const auto& items = bt.nodes[*b].items;
      if (auto s = items.find(npu[i].state); s != items.end() && ordinal < s->second.size())
        partner = bench[s->second[ordinal]].key;
    }
    out.emplace_back(npu[i].key, std::move(partner));
  }
  return out;
}

std::map<std::string, std::string> layer_data_mapping(const Dump& npu, const Dump& bench, bool npu_mindspore,
                                                      bool bench_mindspore,
                                                      const std::vector<OpItem>& npu_rows,
                                                      const std::vector<OpItem>& bench_rows,
                                                      const std::string& yaml_file) {
  auto load = [](const Dump& d, bool ms) {
    const fs::path stack_path = beside(d, "stack.json"), construct_path = beside(d, "construct.json");
    for (const fs::path& p : {stack_path, construct_path})
      if (!fs::is_regular_file(p))
        throw Error(ErrorKind::Io,
                    fmt::format("layer mapping (-lm) needs stack.json and construct.json beside {}",
                                fs::path(d.path()).filename().string()),
                    p.string());
    const StackInfo stack = StackInfo::open(stack_path.string());
    const ConstructInfo construct = ConstructInfo::open(construct_path.string());
    // DECISIONS (compare -lm): msprobe silently falls back to plain name matching when construct.json is
    // empty (an L1 dump); probe says why the layer mapping cannot work.
    if (construct.nodes().empty())
      throw Error(ErrorKind::Format,
                  "construct.json is empty (an L1 dump?): layer mapping needs a dump of level mix or L0",
                  construct_path.string());
    return layer_items(d, stack, construct, ms);
  };
  const std::vector<LayerItem> ni = load(npu, npu_mindspore), bi = load(bench, bench_mindspore);
  const auto entries = layer_entry_mapping(ni, bi, yaml_file);

  // Rows of each entry, in flattened (reordered) order.
  std::unordered_map<std::string_view, std::vector<const OpItem*>> bench_by_entry;
  for (const OpItem& r : bench_rows) bench_by_entry[r.entry_key].push_back(&r);
  std::unordered_map<std::string_view, std::vector<const OpItem*>> npu_by_entry;
  for (const OpItem& r : npu_rows) npu_by_entry[r.entry_key].push_back(&r);
  auto suffix = [](const std::string& row, const std::string& entry) {
    return row.size() > entry.size() ? row.substr(entry.size()) : std::string();
  };
  std::map<std::string, std::string> out;
  for (const auto& [nk, bk] : entries) {
    std::unordered_map<std::string, std::string> by_suffix;
    if (auto b = bench_by_entry.find(bk); b != bench_by_entry.end())
      for (const OpItem* r : b->second) by_suffix[suffix(r->name, bk)] = r->name;
    if (auto n = npu_by_entry.find(nk); n != npu_by_entry.end())
      for (const OpItem* r : n->second) {
        auto hit = by_suffix.find(suffix(r->name, nk));
        out[r->name] = hit != by_suffix.end() ? hit->second : "N/A";
      }
  }
  return out;
}

}  // namespace probe::dump_compare_detail
