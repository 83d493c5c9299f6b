// nan_analyze: the first inf/NaN of a multi-rank step, followed across ranks through communication ops.
//
// The entries are read as raw JSON (numbers kept as written) because the report copies their sections
// verbatim, as Python's json.load + json.dump(indent=2) would reproduce them.
#include <fmt/format.h>
#include <rapidjson/reader.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "dump/JsonSupport.h"
#include "dump/StepRanks.h"
#include "dump_writer/PyJson.h"
#include "probe/error.h"
#include "probe/nan_analyze.h"
#include "probe/number_format.h"
#include "support/DataFiles.h"
#include "support/FileOps.h"
#include "support/JsonDocument.h"
#include "support/RankWork.h"

namespace probe {
namespace fs = std::filesystem;

namespace {

// ---- raw JSON ---------------------------------------------------------------------------------------------

struct JNode {
  enum class Kind { Null, False, True, Number, String, Array, Object };
  Kind kind = Kind::Null;
  std::string text;  // number as written, or string
  std::vector<JNode> items;
  std::vector<std::string> keys;  // object: keys[i] names items[i]

  const JNode* find(std::string_view key) const {
    if (kind != Kind::Object) return nullptr;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return &items[i];
    return nullptr;
  }
  JNode* find(std::string_view key) { return const_cast<JNode*>(std::as_const(*this).find(key)); }
  // Python truthiness of the loaded value.
  bool truthy() const {
    switch (kind) {
      case Kind::Null:
      case Kind::False:
        return false;
      case Kind::True:
        return true;
      case Kind::Number:
        return std::strtod(text.c_str(), nullptr) != 0.0 || text.starts_with("N") ||
               text.find("Inf") != text.npos;
      case Kind::String:
        return !text.empty();
      case Kind::Array:
        return !items.empty();
      case Kind::Object:
        return !items.empty();
    }
    return false;
  }
  // An int as Python's json.load gives one (written without '.', exponent, NaN or Infinity).
  std::optional<long long> as_int() const {
    if (kind != Kind::Number) return std::nullopt;
    dump_detail::JsonNumber n;
    if (!dump_detail::parse_json_number(text, n) || !n.is_int) return std::nullopt;
    return n.i;
  }
};

constexpr int kMaxDepth = 512;

class TreeBuilder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TreeBuilder> {
 public:
  explicit TreeBuilder(JNode& root) { stack_.push_back(&root); }
  bool Null() { return leaf(JNode::Kind::Null, {}); }
  bool Bool(bool b) { return leaf(b ? JNode::Kind::True : JNode::Kind::False, {}); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) { return leaf(JNode::Kind::Number, {s, n}); }
  bool String(const char* s, rapidjson::SizeType n, bool) { return leaf(JNode::Kind::String, {s, n}); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    key_.assign(s, n);
    return true;
  }
  bool StartObject() { return open(JNode::Kind::Object); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool StartArray() { return open(JNode::Kind::Array); }
  bool EndArray(rapidjson::SizeType) { return close(); }
  bool too_deep = false;

 private:
  JNode* place() {
    JNode* top = stack_.back();
    if (!started_) {
      started_ = true;
      return top;
    }
    if (top->kind == JNode::Kind::Array) return &top->items.emplace_back();
    top->keys.push_back(std::move(key_));
    return &top->items.emplace_back();
  }
  bool leaf(JNode::Kind k, std::string text) {
    JNode* n = place();
    n->kind = k;
    n->text = std::move(text);
    return true;
  }
  bool open(JNode::Kind k) {
    if (static_cast<int>(stack_.size()) > kMaxDepth) {
      too_deep = true;
      return false;
    }
    JNode* n = place();
    n->kind = k;
    stack_.push_back(n);
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }
  std::vector<JNode*> stack_;
  std::string key_;
  bool started_ = false;
};

JNode read_json(const std::string& path) {
  dump_detail::JsonBuffer buf = dump_detail::read_json_file(path);
  char* text = buf.data();
  const std::size_t bom = buf.size >= 3 && std::equal(text, text + 3, "\xEF\xBB\xBF") ? 3 : 0;
  text += bom;
  JNode root;
  TreeBuilder builder(root);
  rapidjson::InsituStringStream stream(text);
  rapidjson::Reader reader;
  const rapidjson::ParseResult ok = reader.Parse<dump_detail::kReaderFlags>(stream, builder);
  if (builder.too_deep)
    throw Error(ErrorKind::Format, fmt::format("JSON nested deeper than {} levels", kMaxDepth), path);
  if (!ok)
    throw Error(ErrorKind::Format,
                // In-situ parsing rewrote the buffer: positions are counted on the file as it is.
                fmt::format("invalid JSON at {}: {}",
                            detail::describe_json_position(detail::read_whole_file(path, "cannot read again"),
                                                           ok.Offset() + bom),
                            dump_detail::parse_error_text(ok.Code())),
                path);
  return root;
}

// ---- Python's json.dump(obj, indent=2)
// ---------------------------------------------------------------------

void put_string(std::string& out, std::string_view s) { out += dump_writer::json_quote(s); }

std::string number_text(const std::string& raw) {
  dump_detail::JsonNumber n;
  if (!dump_detail::parse_json_number(raw, n)) return raw;
  if (n.is_int) return std::to_string(n.i);
  if (raw.find_first_of(".eEIN") == std::string::npos) return raw;  // an int beyond int64: Python keeps it
  if (std::isnan(n.d)) return "NaN";
  if (std::isinf(n.d)) return n.d > 0 ? "Infinity" : "-Infinity";
  return python_repr(n.d);
}

void put(std::string& out, const JNode& n, int level) {
  const std::string pad(static_cast<std::size_t>(level + 1) * 2, ' ');
  switch (n.kind) {
    case JNode::Kind::Null:
      out += "null";
      return;
    case JNode::Kind::False:
      out += "false";
      return;
    case JNode::Kind::True:
      out += "true";
      return;
    case JNode::Kind::Number:
      out += number_text(n.text);
      return;
    case JNode::Kind::String:
      put_string(out, n.text);
      return;
    case JNode::Kind::Array:
      if (n.items.empty()) {
        out += "[]";
        return;
      }
      out += "[";
      for (std::size_t i = 0; i < n.items.size(); ++i) {
        out += (i ? ",\n" : "\n") + pad;
        put(out, n.items[i], level + 1);
      }
      out += "\n" + std::string(static_cast<std::size_t>(level) * 2, ' ') + "]";
      return;
    case JNode::Kind::Object:
      if (n.items.empty()) {
        out += "{}";
        return;
      }
      out += "{";
      for (std::size_t i = 0; i < n.items.size(); ++i) {
        out += (i ? ",\n" : "\n") + pad;
        put_string(out, n.keys[i]);
        out += ": ";
        put(out, n.items[i], level + 1);
      }
      out += "\n" + std::string(static_cast<std::size_t>(level) * 2, ' ') + "}";
      return;
  }
}

JNode str_node(std::string s) {
  JNode n;
  n.kind = JNode::Kind::String;
  n.text = std::move(s);
  return n;
}

void add(JNode& object, std::string key, JNode value) {
  object.keys.push_back(std::move(key));
  object.items.push_back(std::move(value));
}

// ---- the analysis ----------------------------------------------------------------------------------------

struct Config {
  std::vector<std::string> prefixes, keywords, ignored;
  std::map<std::string, std::string> p2p, directed;
};

Config load_config() {
  const std::string path = detail::data_file_path("nan_analyze.json");
  const std::string text = detail::read_whole_file(path, "cannot open the nan_analyze configuration");
  const rapidjson::Document doc = detail::parse_json_document(text, path);
  const rapidjson::Value& root = doc;
  if (!root.IsObject()) throw Error(ErrorKind::Format, "expected a JSON object", path);
  auto member = [&](const char* key) -> const rapidjson::Value& {
    return detail::json_member(root, key, path);
  };
  auto strings = [&](const char* key) { return detail::json_strings(root, key, path); };
  auto table = [&](const char* key) {
    const auto& v = member(key);
    if (!v.IsObject()) throw Error(ErrorKind::Format, "expected {name: name}", path, key);
    std::map<std::string, std::string> out;
    for (const auto& m : v.GetObject()) {
      if (!m.value.IsString()) throw Error(ErrorKind::Format, "expected a string", path, key);
      out[m.name.GetString()] = m.value.GetString();
    }
    return out;
  };
  Config c;
  c.prefixes = strings("communication_prefixes");
  c.keywords = detail::data_strings(root, "communication_keywords", path);
  c.ignored = strings("ignored_entries");
  c.p2p = detail::data_string_table(root, "point_to_point_pairs", path);
  c.directed = table("directed_apis");
  return c;
}

enum class NodeType { Src, Dst, Link };

// str(value).lower() in msprobe's overflow list: nan, inf, -inf (with or without a trailing tab).
bool stat_is_nan_inf(const JNode* v) {
  if (!v) return false;
  std::string t;
  if (v->kind == JNode::Kind::String) {
    t = v->text;
    std::transform(t.begin(), t.end(), t.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return t == "nan" || t == "inf" || t == "-inf" || t == "nan\t" || t == "inf\t" || t == "-inf\t";
  }
  if (v->kind != JNode::Kind::Number) return false;
  dump_detail::JsonNumber n;
  return dump_detail::parse_json_number(v->text, n) && !n.is_int && !std::isfinite(n.d);
}

// An argument list or dict holds inf/NaN when one of its direct items is a descriptor whose Max or Min is.
bool section_anomaly(const JNode* section) {
  if (!section) return false;
  if (section->kind != JNode::Kind::Array && section->kind != JNode::Kind::Object) return false;
  const std::vector<JNode>* items = &section->items;  // a list's items, a dict's values
  for (const JNode& item : *items)
    if (item.kind == JNode::Kind::Object &&
        (stat_is_nan_inf(item.find("Max")) || stat_is_nan_inf(item.find("Min"))))
      return true;
  return false;
}

struct Entry;

struct DataNode {
  const Entry* entry = nullptr;  // where the report's construct and stack info come from
  std::string op_name;
  long long rank = 0;
  const JNode* body = nullptr;
  long long layer = 0, sub_layer = 0;
  bool comm = false;

  const JNode* get(const char* key) const { return body ? body->find(key) : nullptr; }
  bool inputs_anomaly() const {
    return section_anomaly(get("input")) || section_anomaly(get("input_args")) ||
           section_anomaly(get("input_kwargs"));
  }
  bool is_anomaly(const Config& c) const {
    for (const auto& k : c.ignored)
      if (op_name.find(k) != std::string::npos) return false;
    return !inputs_anomaly() && section_anomaly(get("output"));
  }
};

struct CommNode {
  std::string id;
  long long rank = 0;
  std::size_t pos = 0;  // position in its rank's chain
  DataNode data;
  std::string api;
  NodeType type = NodeType::Link;
  long long layer = 0;
  std::vector<DataNode> compute_ops;
  std::set<std::string> links, srcs, dsts;
  bool connected = false;

  bool input_has_nan_inf() const {
    return section_anomaly(data.get("input_args")) || section_anomaly(data.get("input_kwargs"));
  }
  bool has_nan_inf() const { return input_has_nan_inf() || section_anomaly(data.get("output")); }
};

const JNode* kwarg(const DataNode& d, const char* key) {
  const JNode* kw = d.get("input_kwargs");
  return kw ? kw->find(key) : nullptr;
}

std::optional<long long> leaf_int(const JNode* n) {
  if (!n || n->kind != JNode::Kind::Object) return std::nullopt;
  const JNode* v = n->find("value");
  return v ? v->as_int() : std::nullopt;
}

NodeType resolve_type(const CommNode& n, const Config& c) {
  for (const char* k : {"src", "src_group"})
    if (const JNode* v = kwarg(n.data, k); v && v->truthy())
      return leaf_int(v) == n.rank ? NodeType::Src : NodeType::Dst;
  for (const char* k : {"dst", "dst_group"})
    if (const JNode* v = kwarg(n.data, k); v && v->truthy())
      return leaf_int(v) == n.rank ? NodeType::Dst : NodeType::Src;
  if (auto it = c.directed.find(n.api); it != c.directed.end())
    if (const JNode* args = n.data.get("input_args"); args && args->kind == JNode::Kind::Array)
      for (const JNode& item : args->items) {
        const JNode* t = item.find("type");
        if (!t || t->kind != JNode::Kind::String || t->text != "int") continue;
        const NodeType own = it->second == "src" ? NodeType::Src : NodeType::Dst;
        if (leaf_int(&item) == n.rank) return own;
        return own == NodeType::Src ? NodeType::Dst : NodeType::Src;
      }
  return NodeType::Link;
}

struct Connection {
  std::set<long long> ranks;
  std::string api;
  NodeType type;
};

Connection connected_nodes(const CommNode& n, const Config& c) {
  Connection conn;
  auto p = c.p2p.find(n.api);
  conn.api = p == c.p2p.end() ? n.api : p->second;
  conn.type = n.type == NodeType::Src   ? NodeType::Dst
              : n.type == NodeType::Dst ? NodeType::Src
                                        : NodeType::Link;
  for (const auto& group : {std::pair{"dst", "dst_group"}, std::pair{"src", "src_group"}})
    for (const char* k : {group.first, group.second})
      if (const JNode* v = kwarg(n.data, k)) {
        if (v->truthy())
          if (auto r = leaf_int(v)) conn.ranks.insert(*r);
        break;
      }
  if (conn.ranks.empty())
    if (const JNode* args = n.data.get("input_args"); args && args->kind == JNode::Kind::Array)
      for (const JNode& item : args->items) {
        const JNode* t = item.find("type");
        if (t && t->kind == JNode::Kind::String && t->text == "int")
          if (auto r = leaf_int(&item)) conn.ranks.insert(*r);
      }
  if (const JNode* g = kwarg(n.data, "group"); g && g->truthy())
    if (const JNode* gr = g->find("group_ranks"); gr && gr->kind == JNode::Kind::Array)
      for (const JNode& r : gr->items)
        if (auto v = r.as_int()) conn.ranks.insert(*v);
  return conn;
}

// One dump.json entry the search can need: the first anomaly before the first communication op, every
// communication op from there on, and the anomalies among the compute ops after it, each with its position
// among the compute ops since the previous communication op (counted over all of them, kept or not).
struct Entry {
  std::string op;
  JNode body;
  long long sub_layer = 0;
  bool comm = false;
  // An anomaly candidate's report sections, read on the rank that parsed the dump: construct.json's chain
  // of parents and stack.json's frames, or the error reading them raised (put_error bytes), thrown only
  // when the entry is reported, as reading them at report time would.
  bool candidate = false;
  std::string info_error;
  JNode construct_info, stack_info;
};

// A rank directory reduced to what the cross-rank search needs (the reduction runs on any rank of the
// group; rank 0 gathers them).
struct RankData {
  long long rank = 0;
  std::string dir, dump_path, construct_path, stack_path;
  bool has_entries = false;    // dump.json's "data" holds an entry
  std::vector<Entry> entries;  // in file order
};

// ---- what ranks exchange ----------------------------------------------------------------------------------

void put_node(detail::WireOut& out, const JNode& n) {
  out.u64(static_cast<std::uint64_t>(n.kind));
  out.str(n.text);
  out.strs(n.keys);
  out.u64(n.items.size());
  for (const JNode& item : n.items) put_node(out, item);
}

JNode get_node(detail::WireIn& in) {
  JNode n;
  n.kind = static_cast<JNode::Kind>(in.u64());
  n.text = in.str();
  n.keys = in.strs();
  n.items.resize(in.u64());
  for (JNode& item : n.items) item = get_node(in);
  return n;
}

void put_rank(detail::WireOut& out, const RankData& d) {
  out.u64(static_cast<std::uint64_t>(d.rank));
  out.strs({d.dir, d.dump_path, d.construct_path, d.stack_path});
  out.u64(d.has_entries ? 1 : 0);
  out.u64(d.entries.size());
  for (const Entry& e : d.entries) {
    out.str(e.op);
    put_node(out, e.body);
    out.u64(static_cast<std::uint64_t>(e.sub_layer));
    out.u64((e.comm ? 1 : 0) | (e.candidate ? 2 : 0));
    out.str(e.info_error);
    put_node(out, e.construct_info);
    put_node(out, e.stack_info);
  }
}

RankData get_rank(detail::WireIn& in) {
  RankData d;
  d.rank = static_cast<long long>(in.u64());
  const std::vector<std::string> paths = in.strs();
  if (paths.size() != 4) throw Error(ErrorKind::Internal, "malformed rank summary from another rank");
  d.dir = paths[0];
  d.dump_path = paths[1];
  d.construct_path = paths[2];
  d.stack_path = paths[3];
  d.has_entries = in.u64() != 0;
  d.entries.resize(in.u64());
  for (Entry& e : d.entries) {
    e.op = in.str();
    e.body = get_node(in);
    e.sub_layer = static_cast<long long>(in.u64());
    const std::uint64_t flags = in.u64();
    e.comm = flags & 1;
    e.candidate = flags & 2;
    e.info_error = in.str();
    e.construct_info = get_node(in);
    e.stack_info = get_node(in);
  }
  return d;
}

std::string error_bytes(std::exception_ptr e) {
  detail::WireOut out;
  detail::put_error(out, e);
  return std::move(out.bytes());
}

[[noreturn]] void throw_error_bytes(const std::string& bytes) {
  detail::WireIn in(bytes);
  throw detail::get_error(in, 0);
}

// The chain of parents of `op` in construct.json, outermost first.
JNode construct_chain(const JNode& construct, const std::string& op) {
  JNode chain;
  chain.kind = JNode::Kind::Array;
  std::vector<std::string> names{op};
  for (const JNode* p = construct.find(op);;) {
    if (p && p->kind == JNode::Kind::Array) p = p->items.empty() ? nullptr : &p->items.front();
    if (!p || p->kind != JNode::Kind::String || p->text.empty() ||
        std::find(names.begin(), names.end(), p->text) != names.end())
      break;
    names.insert(names.begin(), p->text);
    p = construct.find(p->text);
  }
  for (const std::string& n : names) chain.items.push_back(str_node(n));
  return chain;
}

// The frames of the stack.json group whose name list holds `op`.
JNode stack_frames(const JNode& stack, const std::string& op, const std::string& stack_path) {
  JNode frames;
  frames.kind = JNode::Kind::Object;
  if (stack.kind == JNode::Kind::Object)
    for (std::size_t si = 0; si < stack.items.size(); ++si) {
      const std::string& k = stack.keys[si];
      const JNode& item = stack.items[si];
      if (item.kind != JNode::Kind::Array)
        throw Error(ErrorKind::Format, "the values of stack.json must be lists", stack_path, k, op);
      if (item.items.size() < 2) continue;
      const JNode& names_node = item.items[0];
      const bool holds =
          names_node.kind == JNode::Kind::Array
              ? std::any_of(names_node.items.begin(), names_node.items.end(),
                            [&](const JNode& x) { return x.kind == JNode::Kind::String && x.text == op; })
              : names_node.kind == JNode::Kind::String && names_node.text.find(op) != std::string::npos;
      if (holds) return item.items[1];
    }
  return frames;
}

class Analyzer {
 public:
  Analyzer(const NanAnalyzeOptions& o, Config c)
      : opt_(o), cfg_(std::move(c)), msprobe_(o.profile == Profile::MsProbe) {}

  // The rank directories of the step, in numeric order, with their files' paths (not read yet).
  std::vector<RankData> list() const {
    std::error_code ec;
    const fs::path in(opt_.input_path);
    detail::require_exists(opt_.input_path, "no such directory", "-i");
    if (!fs::is_directory(in, ec))
      throw Error(ErrorKind::InvalidArgument, "expected a step directory holding rank* directories",
                  opt_.input_path, "-i");
    const std::map<long long, std::string> dirs = detail::step_rank_dirs(opt_.input_path, "-i");
    if (dirs.empty())
      throw Error(ErrorKind::InvalidArgument, "no rank* directory (give the step directory, e.g. dump/step0)",
                  opt_.input_path, "-i");
    // DECISIONS (nan_analyze, rank order): ranks in numeric order (msprobe takes the directory listing's
    // order, which depends on the file system).
    std::vector<RankData> out;
    for (const auto& [r, name] : dirs) {
      RankData d;
      d.rank = r;
      d.dir = (in / name).string();
      d.dump_path = (in / name / "dump.json").string();
      d.construct_path = (in / name / "construct.json").string();
      d.stack_path = (in / name / "stack.json").string();
      out.push_back(std::move(d));
    }
    return out;
  }

  // Parses one rank directory and keeps what the search needs (Entry). A missing file or malformed
  // dump.json throws, naming it.
  void reduce(RankData& d) const {
    std::error_code ec;
    const std::string name = fs::path(d.dir).filename().string();
    for (const std::string* p : {&d.dump_path, &d.construct_path, &d.stack_path})
      if (!fs::is_regular_file(*p, ec)) throw Error(ErrorKind::Io, "missing file", *p, name);
    JNode root = read_json(d.dump_path);
    JNode* data = root.find("data");
    if (!data || data->kind != JNode::Kind::Object || data->items.empty()) return;
    d.has_entries = true;
    auto keep = [&](std::size_t i, long long sub_layer, bool comm) -> Entry& {
      Entry& e = d.entries.emplace_back();
      e.op = data->keys[i];
      e.body = std::move(data->items[i]);
      e.sub_layer = sub_layer;
      e.comm = comm;
      return e;
    };
    auto anomaly = [&](std::size_t i) {
      DataNode n;
      n.op_name = data->keys[i];
      n.body = &data->items[i];
      return n.is_anomaly(cfg_);
    };
    bool after_first_comm = false;
    long long sub_layer = 0;
    for (std::size_t i = 0; i < data->keys.size(); ++i) {
      const std::string& op = data->keys[i];
      if (is_comm(op)) {
        // A communication op that is itself an anomaly may be reported (analyze_group).
        const bool candidate = anomaly(i);
        keep(i, sub_layer, true).candidate = candidate;
        after_first_comm = true;
        sub_layer = 0;
      } else if (!after_first_comm) {
        // Before the first communication op only the first anomaly counts (pre_analyze stops there).
        if (anomaly(i)) {
          keep(i, 0, false).candidate = true;
          break;
        }
      } else if (!is_ignored(op)) {
        if (anomaly(i)) keep(i, sub_layer, false).candidate = true;
        ++sub_layer;
      }
    }
    read_report_info(d);
  }

  // construct.json and stack.json, read once per rank directory and only when it has a candidate.
  static void read_report_info(RankData& d) {
    std::optional<JNode> construct, stack;
    std::string construct_error, stack_error;
    for (Entry& e : d.entries) {
      if (!e.candidate) continue;
      try {
        if (!construct && construct_error.empty()) {
          try {
            construct = read_json(d.construct_path);
          } catch (...) {
            construct_error = error_bytes(std::current_exception());
          }
        }
        if (!construct_error.empty()) {
          e.info_error = construct_error;
          continue;
        }
        e.construct_info = construct_chain(*construct, e.op);
        if (!stack && stack_error.empty()) {
          try {
            stack = read_json(d.stack_path);
          } catch (...) {
            stack_error = error_bytes(std::current_exception());
          }
        }
        if (!stack_error.empty()) {
          e.info_error = stack_error;
          continue;
        }
        e.stack_info = stack_frames(*stack, e.op, d.stack_path);
      } catch (...) {
        e.info_error = error_bytes(std::current_exception());
      }
    }
  }

  // Every rank: lists the step, parses the rank directories it claims (heaviest first), and sends them to
  // rank 0, which keeps them in rank order. A rank directory that failed is an error at rank 0, the first
  // in rank order (as one process reading them in turn).
  void load(Distributed& group) {
    std::vector<RankData> dirs = list();
    if (group.size() == 1) {  // no one to send to: reduce in place, in rank order
      for (RankData& d : dirs) {
        reduce(d);
        ranks_.push_back(std::move(d));
      }
      return;
    }
    std::vector<double> weights;
    for (const RankData& d : dirs) {
      double bytes = 0;
      for (const std::string* p : {&d.dump_path, &d.construct_path, &d.stack_path}) {
        std::error_code ec;
        const auto n = fs::file_size(*p, ec);
        if (!ec) bytes += static_cast<double>(n);
      }
      weights.push_back(bytes);
    }
    const std::vector<std::string> parts = detail::map_on_ranks(group, weights, [&](std::size_t i) {
      detail::WireOut out;
      try {
        RankData d = dirs[i];
        reduce(d);
        out.u64(0);
        put_rank(out, d);
      } catch (...) {
        detail::WireOut failed;
        failed.u64(1);
        failed.str(error_bytes(std::current_exception()));
        return std::move(failed.bytes());
      }
      return std::move(out.bytes());
    });
    loaded_ = std::move(parts);
  }

  // Rank 0: the gathered rank directories, or the first one's error.
  void unpack() {
    for (const std::string& part : loaded_) {
      detail::WireIn in(part);
      if (in.u64() != 0) throw_error_bytes(in.str());
      ranks_.push_back(get_rank(in));
    }
    loaded_.clear();
  }

  NanAnalyzeResult run() {
    unpack();
    NanAnalyzeResult res;
    res.log.push_back("Start searching anomaly node before communication.");
    pre_analyze(res);
    if (!anomalies_.empty()) return finish(res, "before_communication");
    res.log.push_back("Start searching anomaly node during communication.");
    analyze(res);
    if (!anomalies_.empty()) return finish(res, "communication");
    res.log.push_back("Start searching anomaly node after communication.");
    for (const RankData& r : ranks_)
      if (auto it = after_.find(r.rank); it != after_.end() && !it->second.empty())
        anomalies_.push_back(it->second.front());
    if (!anomalies_.empty()) return finish(res, "after_communication");
    res.log.push_back("Cannot find any anomaly node, no need to generate analyze file.");
    return res;
  }

 private:
  bool is_comm(const std::string& op) const {
    const bool prefixed = std::any_of(cfg_.prefixes.begin(), cfg_.prefixes.end(),
                                      [&](const std::string& p) { return op.starts_with(p); });
    return prefixed && std::any_of(cfg_.keywords.begin(), cfg_.keywords.end(),
                                   [&](const std::string& k) { return op.find(k) != std::string::npos; });
  }
  bool is_ignored(const std::string& op) const {
    return std::any_of(cfg_.ignored.begin(), cfg_.ignored.end(),
                       [&](const std::string& k) { return op.find(k) != std::string::npos; });
  }
  static DataNode data_node(const RankData& r, const Entry& e) {
    DataNode d;
    d.entry = &e;
    d.op_name = e.op;
    d.rank = r.rank;
    d.body = &e.body;
    d.sub_layer = e.sub_layer;
    return d;
  }

  void pre_analyze(NanAnalyzeResult& res) {
    for (const RankData& r : ranks_) {
      if (!r.has_entries) {
        res.log.push_back(fmt::format("Rank {} has no dump data!", r.rank));
        continue;
      }
      for (std::size_t i = 0; i < r.entries.size(); ++i) {
        const Entry& e = r.entries[i];
        if (e.comm) {
          first_comm_[r.rank] = i;
          break;
        }
        DataNode d = data_node(r, e);
        if (d.is_anomaly(cfg_)) {
          anomalies_.push_back(d);
          break;
        }
      }
    }
  }

  CommNode* node(const std::string& id) {
    auto it = index_.find(id);
    return it == index_.end() ? nullptr : &nodes_[it->second];
  }

  void build_chains() {
    for (const RankData& r : ranks_) {
      auto fc = first_comm_.find(r.rank);
      if (fc == first_comm_.end()) continue;
      std::vector<DataNode> compute;
      CommNode* last = nullptr;
      // The entries from the first communication op on are the communication ops and the compute ops that
      // are anomalies, each with its sub_layer (Entry).
      for (std::size_t i = fc->second; i < r.entries.size(); ++i) {
        const Entry& e = r.entries[i];
        const std::string& op = e.op;
        if (e.comm) {
          CommNode n;
          n.id = fmt::format("{}.{}", r.rank, op);
          n.rank = r.rank;
          n.data = data_node(r, e);
          n.data.comm = true;
          std::vector<std::string> parts;
          for (std::size_t a = 0, b; a <= op.size(); a = b + 1) {
            b = op.find('.', a);
            if (b == std::string::npos) b = op.size();
            parts.push_back(op.substr(a, b - a));
          }
          if (parts.size() < 4)
            throw Error(ErrorKind::Format, "a communication entry's name needs 4 dot-separated parts",
                        r.dump_path, "data", op);
          n.api = parts[1];
          n.type = resolve_type(n, cfg_);
          n.compute_ops = std::move(compute);
          compute.clear();
          if (last) n.layer = last->layer + 1;
          n.data.layer = n.layer;
          n.pos = chains_[r.rank].size();
          index_[n.id] = nodes_.size();
          chains_[r.rank].push_back(n.id);
          nodes_.push_back(std::move(n));
          last = &nodes_.back();  // valid until the next push_back, which reads it first
        } else {
          compute.push_back(data_node(r, e));
        }
      }
      if (!compute.empty()) after_[r.rank] = std::move(compute);
    }
  }

  void connect(NanAnalyzeResult& res) {
    std::set<long long> searched;
    for (std::size_t ri = 0; ri + 1 < ranks_.size(); ++ri) {
      const long long rank = ranks_[ri].rank;
      searched.insert(rank);
      // Peer ops already paired with an op of this rank, by chain position; `first` skips the paired prefix
      // of each peer chain, so pairing ops in call order costs a linear walk instead of a quadratic one.
      std::map<long long, std::vector<char>> seen;
      std::map<long long, std::size_t> first;
      for (const auto& [peer, chain] : chains_) seen[peer].assign(chain.size(), 0);
      for (const std::string& cur_id : chains_[rank]) {
        CommNode& cur = *node(cur_id);
        Connection conn = connected_nodes(cur, cfg_);
        if (conn.ranks.empty())
          for (const RankData& r : ranks_) conn.ranks.insert(r.rank);
        bool found = cur.connected;
        for (long long peer : conn.ranks) {
          if (searched.count(peer) || !chains_.count(peer)) continue;
          const std::vector<std::string>& chain = chains_[peer];
          std::vector<char>& paired = seen[peer];
          std::size_t& start = first[peer];
          while (start < chain.size() && paired[start]) ++start;
          // msprobe pairs by name prefix: "Distributed.reduce" also matches a reduce_scatter.
          const std::string prefix = fmt::format("{}.Distributed.{}", peer, conn.api);
          for (std::size_t k = start; k < chain.size(); ++k) {
            if (paired[k]) continue;
            const std::string& sid = chain[k];
            CommNode& s = *node(sid);
            if (!sid.starts_with(prefix) || s.type != conn.type) continue;
            const Connection back = connected_nodes(s, cfg_);
            if (!((back.ranks.empty() && !cfg_.directed.count(s.api)) || back.ranks.count(cur.rank)))
              continue;
            paired[k] = 1;
            if (s.type == NodeType::Dst) {
              link_dst(cur, s);
            } else if (s.type == NodeType::Src) {
              s.layer = cur.layer;
              link_dst(s, cur);
            } else {
              cur.links.insert(s.id);
              s.links.insert(cur.id);
              s.layer = cur.layer;
              s.data.layer = s.layer;
              cur.connected = s.connected = true;
            }
            found = true;
            break;
          }
        }
        if (!found)
          res.log.push_back(fmt::format("Cannot find connected communication node for \"{}\".", cur.id));
      }
    }
  }

  static void link_dst(CommNode& src, CommNode& dst) {
    src.dsts.insert(dst.id);
    dst.srcs.insert(src.id);
    dst.layer = src.layer;
    dst.data.layer = dst.layer;
    src.connected = dst.connected = true;
  }

  void prune() {
    for (auto& [rank, chain] : chains_) {
      std::vector<std::string> kept;
      for (const std::string& id : chain) {
        CommNode& n = *node(id);
        if (n.has_nan_inf() || !n.compute_ops.empty()) {
          kept.push_back(id);
          continue;
        }
        for (const std::string& o : n.links)
          if (CommNode* x = node(o)) x->links.erase(id);
        for (const std::string& o : n.srcs)
          if (CommNode* x = node(o)) x->dsts.erase(id);
        for (const std::string& o : n.dsts)
          if (CommNode* x = node(o)) x->srcs.erase(id);
        index_.erase(id);
      }
      chain = std::move(kept);
    }
  }

  std::set<std::string> relatives(const CommNode* n) {
    if (!n) return {};
    std::set<std::string> ids{n->id};
    ids.insert(n->links.begin(), n->links.end());
    ids.insert(n->srcs.begin(), n->srcs.end());
    ids.insert(n->dsts.begin(), n->dsts.end());
    return ids;
  }

  std::set<std::string> members(const CommNode& start) {
    std::set<std::string> ids = relatives(&start);
    std::vector<std::string> queue(ids.begin(), ids.end());
    while (!queue.empty()) {
      const std::string id = queue.back();
      queue.pop_back();
      for (const std::string& r : relatives(node(id)))
        if (ids.insert(r).second) queue.push_back(r);
    }
    return ids;
  }

  // One group of linked communication ops: the compute anomalies feeding an op whose input already holds
  // inf/NaN (src or undirected ops), then the ops whose inputs are clean and outputs are not.
  std::vector<DataNode> analyze_group(const std::set<std::string>& ids) {
    std::vector<CommNode*> group;
    for (const std::string& id : ids)
      if (CommNode* n = node(id)) group.push_back(n);
    // Rank then position: msprobe walks a Python set, whose order varies from run to run.
    std::sort(group.begin(), group.end(), [](const CommNode* a, const CommNode* b) {
      return std::tie(a->rank, a->pos) < std::tie(b->rank, b->pos);
    });
    std::vector<DataNode> out;
    for (CommNode* n : group)
      if (n->type != NodeType::Dst && n->input_has_nan_inf())
        for (DataNode d : n->compute_ops) {
          d.layer = n->layer;
          out.push_back(d);
        }
    for (CommNode* n : group)
      if (n->data.is_anomaly(cfg_)) {
        n->data.layer = n->layer;
        out.push_back(n->data);
      }
    return out;
  }

  void analyze(NanAnalyzeResult& res) {
    build_chains();
    connect(res);
    prune();
    std::vector<std::vector<std::string>> queues;
    for (const RankData& r : ranks_) {
      std::vector<std::string> q = chains_[r.rank];
      std::stable_sort(q.begin(), q.end(), [&](const std::string& a, const std::string& b) {
        return node(a)->layer < node(b)->layer;
      });
      queues.push_back(std::move(q));
    }
    std::set<std::string> seen;
    std::vector<std::size_t> heads(queues.size(), 0);
    auto next = [&](std::size_t qi) -> CommNode* {
      while (heads[qi] < queues[qi].size()) {
        const std::string& id = queues[qi][heads[qi]++];
        if (!seen.count(id)) return node(id);
      }
      return nullptr;
    };
    auto pending = [&] {
      for (std::size_t qi = 0; qi < queues.size(); ++qi)
        if (heads[qi] < queues[qi].size()) return true;
      return false;
    };
    while (pending()) {
      std::vector<std::set<std::string>> groups;
      std::set<std::string> grouped;
      for (std::size_t qi = 0; qi < queues.size(); ++qi) {
        CommNode* n = next(qi);
        if (!n) continue;
        // As msprobe: a rank's next op opens a group when it is the round's first or is already in one
        // (then the group is examined again, which changes nothing); any other op leaves its queue
        // unexamined.
        if (groups.empty() || grouped.count(n->id)) {
          groups.push_back(members(*n));
          grouped.insert(groups.back().begin(), groups.back().end());
        }
      }
      std::vector<DataNode> found;
      for (const auto& g : groups) {
        seen.insert(g.begin(), g.end());
        for (DataNode& d : analyze_group(g)) found.push_back(d);
      }
      if (found.empty()) continue;
      // DECISIONS D19: msprobe takes the least (layer, sub_layer); the probe profile puts a layer's compute
      // ops before its communication ops, whose inf/NaN can only have come in through their inputs.
      auto key = [&](const DataNode& d) {
        return std::make_tuple(d.layer, msprobe_ ? 0 : (d.comm ? 1 : 0), d.sub_layer);
      };
      anomalies_.push_back(*std::min_element(
          found.begin(), found.end(), [&](const DataNode& a, const DataNode& b) { return key(a) < key(b); }));
      return;
    }
  }

  NanAnalyzeResult& finish(NanAnalyzeResult& res, const char* phase) {
    res.phase = phase;
    for (const DataNode& d : anomalies_) res.anomalies.push_back({d.rank, d.op_name, d.layer, d.sub_layer});
    res.file = write();
    res.log.push_back("The analyze result is saved in: " + res.file);
    return res;
  }

  JNode node_info(const DataNode& d) {
    JNode out;
    out.kind = JNode::Kind::Object;
    add(out, "op_name", str_node(d.op_name));
    JNode info;
    info.kind = JNode::Kind::Object;
    auto section = [&](const char* key, JNode::Kind empty) {
      const JNode* s = d.get(key);
      JNode v;
      if (s) {
        v = *s;
      } else {
        v.kind = empty;
      }
      add(info, key, std::move(v));
    };
    if (d.op_name.find("forward") != std::string::npos) {
      section("input_args", JNode::Kind::Array);
      section("input_kwargs", JNode::Kind::Object);
    } else {
      section("input", JNode::Kind::Array);
    }
    section("output", JNode::Kind::Object);
    add(out, "data_info", std::move(info));
    const Entry* e = d.entry;
    if (!e || !e->candidate)
      throw Error(ErrorKind::Internal, "a reported entry was not a candidate", d.op_name);
    if (!e->info_error.empty()) throw_error_bytes(e->info_error);
    add(out, "construct_info", e->construct_info);
    add(out, "stack_info", e->stack_info);
    return out;
  }

  std::string write() {
    JNode root;
    root.kind = JNode::Kind::Object;
    for (const DataNode& d : anomalies_) {
      const std::string key = fmt::format("rank_{}", d.rank);
      const auto slot =
          static_cast<std::size_t>(std::find(root.keys.begin(), root.keys.end(), key) - root.keys.begin());
      if (slot == root.keys.size()) {
        JNode list;
        list.kind = JNode::Kind::Array;
        add(root, key, std::move(list));
      }
      root.items[slot].items.push_back(node_info(d));
    }
    std::string text;
    put(text, root, 0);
    std::error_code ec;
    fs::create_directories(opt_.output_path, ec);
    if (!fs::is_directory(opt_.output_path, ec))
      throw Error(ErrorKind::Io, "cannot create the output directory", opt_.output_path, "-o");
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    const std::string path =
        (fs::path(opt_.output_path) / fmt::format("anomaly_analyze_{}.json", ns)).string();
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
      out.close();
      if (!out) throw Error(ErrorKind::Io, "cannot write", tmp);
    }
    ::chmod(tmp.c_str(), 0640);
    detail::publish_new_file(tmp, path);
    return path;
  }

  const NanAnalyzeOptions& opt_;
  Config cfg_;
  bool msprobe_;
  std::vector<RankData> ranks_;
  std::map<long long, std::size_t> first_comm_;
  std::map<long long, std::vector<DataNode>> after_;
  std::vector<CommNode> nodes_;
  std::map<std::string, std::size_t> index_;
  std::map<long long, std::vector<std::string>> chains_;
  std::vector<DataNode> anomalies_;
  std::vector<std::string> loaded_;  // rank 0: each rank directory's summary or error, in rank order
};

std::string put_result(const NanAnalyzeResult& r) {
  detail::WireOut out;
  out.str(r.phase);
  out.u64(r.anomalies.size());
  for (const NanAnomaly& a : r.anomalies) {
    out.u64(static_cast<std::uint64_t>(a.rank));
    out.str(a.op_name);
    out.u64(static_cast<std::uint64_t>(a.layer));
    out.u64(static_cast<std::uint64_t>(a.sub_layer));
  }
  out.strs(r.log);
  out.str(r.file);
  return std::move(out.bytes());
}

NanAnalyzeResult get_result(const std::string& bytes) {
  detail::WireIn in(bytes);
  NanAnalyzeResult r;
  r.phase = in.str();
  r.anomalies.resize(in.u64());
  for (NanAnomaly& a : r.anomalies) {
    a.rank = static_cast<long long>(in.u64());
    a.op_name = in.str();
    a.layer = static_cast<long long>(in.u64());
    a.sub_layer = static_cast<long long>(in.u64());
  }
  r.log = in.strs();
  r.file = in.str();
  return r;
}

}  // namespace

NanAnalyzeResult nan_analyze(const NanAnalyzeOptions& options) {
  Distributed& group = options.group ? *options.group : single_process();
  Analyzer a(options, load_config());
  a.load(group);
  // Rank 0 searches and writes; every rank returns its result or throws its error.
  return get_result(detail::decide_on_root(group, [&] { return put_result(a.run()); }));
}

}  // namespace probe
