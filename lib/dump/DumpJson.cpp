// dump.json → probe::Dump in one SAX pass (RapidJSON, in-situ). A big model's dump.json is hundreds of MB,
// so no intermediate DOM is built: each JSON object is collected into a per-depth scratch list and turned
// into a tensor descriptor, a leaf value or an ordered dict when it closes.
#include <fmt/format.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "dump/DumpInternal.h"
#include "dump/JsonSupport.h"
#include "probe/dump.h"
#include "probe/error.h"
#include "support/JsonDocument.h"

namespace probe {

using detail::describe_json_position;

namespace {

constexpr unsigned kParseFlags = dump_detail::kReaderFlags;  // in situ, numbers as text: see JsonSupport.h

// Equality with a string literal whose length the compiler knows, so the comparison is inlined: these
// run for every key of every tensor object of a dump that may hold millions of them.
template <std::size_t N>
inline bool is(std::string_view s, const char (&lit)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), lit, N - 1) == 0;
}
template <std::size_t N>
inline bool ends(std::string_view s, const char (&lit)[N]) {
  return s.size() >= N - 1 && std::memcmp(s.data() + s.size() - (N - 1), lit, N - 1) == 0;
}
template <std::size_t N>
inline bool starts(std::string_view s, const char (&lit)[N]) {
  return s.size() >= N - 1 && std::memcmp(s.data(), lit, N - 1) == 0;
}

bool is_tensor_type(std::string_view type) {
  // torch.Tensor and its dumped subclasses (DTensor, FakeTensor, AsyncCollectiveTensor, NestedTensor),
  // mindspore.Tensor, Parameter classes, and numpy arrays (§1.4.4, §1.4.5, precheck §1.1).
  return ends(type, "Tensor") || ends(type, "Parameter") || is(type, "numpy.ndarray");
}

bool is_numpy_scalar_type(std::string_view type) {
  static constexpr std::string_view kNames[] = {
      "int8",       "int16",   "int32",      "int64",   "uint8",    "uint16",    "uint32",
      "uint64",     "float16", "float32",    "float64", "float128", "complex64", "complex128",
      "complex256", "bool_",   "string_",    "bytes_",  "unicode_", "longlong",  "ulonglong",
      "intc",       "uintc",   "longdouble", "str_",    "bool"};
  if (type.starts_with("numpy.")) type.remove_prefix(6);
  return std::find(std::begin(kNames), std::end(kNames), type) != std::end(kNames);
}

}  // namespace

/// The SAX handler. Frames: [0] the top-level object, [1] "data" (when open), [2..] an entry body and
/// the argument tree below it. While an object or array is open its children are kept compact (scalars
/// as views into the in-situ buffer, int arrays such as shapes as runs of ints, compound children by
/// index); DumpNodes are made only when the container closes and its kind is known.
class DumpBuilder {
 public:
  DumpBuilder(Dump& dump, const DumpParseOptions& options, rapidjson::InsituStringStream& stream)
      : dump_(dump), max_depth_(std::clamp(options.max_depth, 1, kMaxDumpDepth)), stream_(stream) {
    frames_.resize(8);
  }

  // --- RapidJSON handler interface -------------------------------------------------------------
  bool Null() { return scalar(mk(Slot::Null)); }
  bool Bool(bool b) {
    return scalar(mk(Slot::Bool, [&](Slot& x) { x.b = b; }));
  }
  bool Int(int i) {
    return scalar(mk(Slot::Int, [&](Slot& x) { x.i = i; }));
  }
  bool Uint(unsigned u) {
    return scalar(mk(Slot::Int, [&](Slot& x) { x.i = u; }));
  }
  bool Int64(std::int64_t i) {
    return scalar(mk(Slot::Int, [&](Slot& x) { x.i = i; }));
  }
  bool Uint64(std::uint64_t u) {
    // Above int64: Python ints are unbounded; keep the magnitude as a float rather than wrap.
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return scalar(mk(Slot::Double, [&](Slot& x) { x.d = static_cast<double>(u); }));
    return scalar(mk(Slot::Int, [&](Slot& x) { x.i = static_cast<std::int64_t>(u); }));
  }
  bool Double(double d) {
    return scalar(mk(Slot::Double, [&](Slot& x) { x.d = d; }));
  }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    dump_detail::JsonNumber num;
    if (!dump_detail::parse_json_number(std::string_view(s, n), num)) fail("malformed number");
    if (num.is_int) return Int64(num.i);
    return Double(num.d);
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    return scalar(mk(Slot::String, [&](Slot& x) { x.s = std::string_view(s, n); }));
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    frames_[depth_ - 1].key = std::string_view(s, n);
    return true;
  }
  bool StartObject() { return open(true); }
  bool StartArray() { return open(false); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool EndArray(rapidjson::SizeType) { return close(); }

  void reserve_entries(std::size_t n) { dump_.entries_.reserve(n); }

  void finish() {
    if (!saw_data_) fail("no \"data\" object: not an msprobe dump.json", "data");
    if (dump_.framework_field_ == "pytorch")
      dump_.framework_ = Framework::PyTorch;
    else if (dump_.framework_field_ == "mindspore")
      dump_.framework_ = Framework::MindSpore;
    else if (dump_.framework_field_ == "mindtorch")
      dump_.framework_ = Framework::MindTorch;
    else if (dump_.framework_field_.empty()) {
      // Older dumps lack "framework": msprobe sniffs the text for a mindspore type first, then torch.
      dump_.framework_ = saw_mindspore_ ? Framework::MindSpore
                         : saw_torch_   ? Framework::PyTorch
                                        : Framework::Unknown;
    }
  }

 private:
  enum class Role { Root, Data, Tree };
  // A child of an open container: a scalar, a run of ints in Frame::ints, or a node in Frame::nodes.
  struct Slot {
    enum Kind : std::uint8_t { Null, Bool, Int, Double, String, Ints, Node } kind = Null;
    bool b = false;
    std::int64_t i = 0;
    double d = 0;
    std::string_view s;
    std::uint32_t index = 0, count = 0;
    std::string_view key;  // objects only
  };
  template <class F = void (*)(Slot&)>
  static Slot mk(
      Slot::Kind kind, F&& fill = [](Slot&) {}) {
    Slot s;
    s.kind = kind;
    fill(s);
    return s;
  }
  struct Frame {
    bool is_object = false;
    Role role = Role::Tree;
    std::string_view key;
    std::vector<Slot> slots;      // scratch, capacity reused
    std::vector<DumpNode> nodes;  // compound children
    std::vector<std::int64_t> ints;
  };

  [[noreturn]] void fail(const std::string& message, const std::string& field = {},
                         const std::string& api = {}) const {
    throw Error(ErrorKind::Format, fmt::format("{} (near byte offset {})", message, stream_.Tell()),
                dump_.path_, field, api);
  }

  std::string entry_key() const { return depth_ >= 2 ? std::string(frames_[1].key) : std::string(); }

  // Dotted position of the value being built at frames_[level] inside its entry ("input_args.0").
  std::string field_path(int level) const {
    std::string out;
    for (int i = 2; i < level; ++i) {
      if (!out.empty()) out += '.';
      if (frames_[i].is_object)
        out += frames_[i].key;
      else
        out += std::to_string(frames_[i].slots.size());
    }
    return out;
  }

  std::string join_field(int level, std::string_view key) const {
    std::string p = field_path(level);
    if (!p.empty()) p += '.';
    p += key;
    return p;
  }

  bool open(bool is_object) {
    if (depth_ >= max_depth_) {
      // The dotted path of a deep value is thousands of "0." long: show where it starts only.
      std::string where = field_path(std::min(depth_, 12));
      if (depth_ > 12) where += "...";
      fail(fmt::format("JSON nested deeper than {} levels", max_depth_), where, entry_key());
    }
    Role role = Role::Tree;
    if (depth_ == 0) {
      if (!is_object) fail("the top level must be a JSON object");
      role = Role::Root;
    } else if (depth_ == 1 && is(frames_[0].key, "data")) {
      if (!is_object) fail("expected an object of records", "data");
      // DECISIONS (silent accepts): Python's json keeps the last of two "data" objects; refuse instead of
      // guessing which one the writer meant.
      if (saw_data_) fail("\"data\" appears twice at the top level", "data");
      saw_data_ = true;
      role = Role::Data;
    }
    if (static_cast<std::size_t>(depth_) == frames_.size()) frames_.resize(frames_.size() * 2);
    Frame& f = frames_[depth_++];
    f.is_object = is_object;
    f.role = role;
    f.key = {};
    f.slots.clear();
    f.nodes.clear();
    f.ints.clear();
    return true;
  }

  bool close() {
    const int level = depth_ - 1;
    Frame& f = frames_[level];
    if (f.role != Role::Tree) {
      --depth_;
      return true;
    }
    Frame& parent = frames_[level - 1];
    if (!f.is_object && parent.role == Role::Tree &&
        std::all_of(f.slots.begin(), f.slots.end(), [](const Slot& s) { return s.kind == Slot::Int; })) {
      // An int array (a shape, torch.Size, slice bounds...): hand the parent a run of ints.
      Slot run = mk(Slot::Ints);
      run.index = static_cast<std::uint32_t>(parent.ints.size());
      run.count = static_cast<std::uint32_t>(f.slots.size());
      for (const Slot& s : f.slots) parent.ints.push_back(s.i);
      --depth_;
      return add_slot(parent, run);
    }
    DumpNode node;
    if (f.is_object) {
      node = make_object(level);
    } else {
      std::vector<DumpNode> items;
      items.reserve(f.slots.size());
      for (const Slot& s : f.slots) items.push_back(materialize(f, s));
      node = DumpNode(std::move(items));
    }
    --depth_;
    if (parent.role == Role::Tree) {
      parent.nodes.push_back(std::move(node));
      return add_slot(parent, mk(Slot::Node, [&](Slot& x) {
                        x.index = static_cast<std::uint32_t>(parent.nodes.size() - 1);
                      }));
    }
    if (parent.role == Role::Data) {
      add_entry(parent.key, std::move(node));
      return true;
    }
    if (parent.key == "data") fail("expected an object of records", "data");
    return true;  // unknown compound top-level field: validated for depth, then dropped
  }

  bool add_slot(Frame& f, Slot s) {
    s.key = f.key;
    f.slots.push_back(s);
    return true;
  }

  bool scalar(Slot s) {
    if (depth_ == 0) fail("the top level must be a JSON object");
    Frame& parent = frames_[depth_ - 1];
    switch (parent.role) {
      case Role::Tree:
        return add_slot(parent, s);
      case Role::Root:
        root_scalar(parent.key, s);
        return true;
      case Role::Data:
        add_entry(parent.key, materialize(parent, s));
        return true;
    }
    return true;
  }

  void root_scalar(std::string_view key, const Slot& v) {
    auto want_string = [&](std::string& out) {
      if (v.kind == Slot::Null) return;  // treated as absent
      if (v.kind != Slot::String) fail("expected a string", std::string(key));
      out = std::string(v.s);
    };
    if (key == "task")
      want_string(dump_.task_);
    else if (key == "level")
      want_string(dump_.level_);
    else if (key == "framework")
      want_string(dump_.framework_field_);
    else if (key == "run_id")
      want_string(dump_.run_id_);
    else if (key == "dump_data_dir") {
      if (v.kind == Slot::Null)
        dump_.dump_data_dir_.reset();
      else if (v.kind == Slot::String)
        dump_.dump_data_dir_ = std::string(v.s);
      else
        fail("expected a string or null", "dump_data_dir");
    } else if (key == "data") {
      fail("expected an object of records", "data");
    }
    // Other top-level scalars are ignored: newer msprobe versions may add fields.
  }

  // A bare JSON scalar as a node.
  static DumpNode bare_node(Value v) {
    DumpNode::Leaf leaf;
    leaf.value = std::move(v);
    return DumpNode(std::move(leaf));
  }

  // The DumpNode form of a slot of frame `f` (moves compound children out of the frame).
  static DumpNode materialize(Frame& f, const Slot& s) {
    switch (s.kind) {
      case Slot::Null:
        return DumpNode();
      case Slot::Bool:
        return bare_node(Value(s.b));
      case Slot::Int:
        return bare_node(Value(s.i));
      case Slot::Double:
        return bare_node(Value(s.d));
      case Slot::String:
        return bare_node(Value(std::string(s.s)));
      case Slot::Ints: {
        std::vector<DumpNode> items;
        items.reserve(s.count);
        for (std::uint32_t k = 0; k < s.count; ++k) items.push_back(bare_node(Value(f.ints[s.index + k])));
        return DumpNode(std::move(items));
      }
      case Slot::Node:
        return std::move(f.nodes[s.index]);
    }
    return DumpNode();
  }

  void add_entry(std::string_view key, DumpNode body) {
    DumpEntry e;
    e.key = std::string(key);
    e.name = parse_entry_name(key);
    if (body.kind() == DumpNode::Kind::Dict) {
      const bool ordinary =
          e.name.direction == EntryDirection::Forward || e.name.direction == EntryDirection::Backward;
      for (const auto& [name, section] : body.members()) {
        const auto k = section.kind();
        if (is(name, "is_recompute")) {
          if (k == DumpNode::Kind::Value && section.leaf().type.empty() &&
              section.leaf().value.kind() == Value::Kind::Bool)
            e.is_recompute = section.leaf().value.as_bool();
          else if (k != DumpNode::Kind::Null)
            fail("expected true or false", name, e.key);
        } else if (ordinary && (is(name, "input_args") || is(name, "input") || is(name, "output"))) {
          if (k != DumpNode::Kind::List && k != DumpNode::Kind::Null) fail("expected a list", name, e.key);
        } else if (ordinary && (is(name, "input_kwargs") || is(name, "parameters"))) {
          if (k != DumpNode::Kind::Dict && k != DumpNode::Kind::Null) fail("expected an object", name, e.key);
        } else if (e.name.direction == EntryDirection::ParametersGrad) {
          if (k != DumpNode::Kind::List && k != DumpNode::Kind::Null)
            fail("expected a list holding the gradient", name, e.key);
        }
      }
    } else if (e.name.direction != EntryDirection::Debug && e.name.direction != EntryDirection::Unknown) {
      fail("expected an object", {}, e.key);
    }
    e.body = std::move(body);
    dump_.entries_.push_back(std::move(e));
  }

  void sniff(std::string_view type) {
    if (starts(type, "mindspore"))
      saw_mindspore_ = true;
    else if (starts(type, "torch"))
      saw_torch_ = true;
  }

  // A closed JSON object at frames_[level]: tensor descriptor, leaf, or ordered dict.
  // A repeated key takes its last value, at the place of its first occurrence, as Python's json does.
  DumpNode make_object(int level) {
    Frame& f = frames_[level];
    for (auto s = f.slots.rbegin(); s != f.slots.rend(); ++s) {
      if (!is(s->key, "type")) continue;
      if (s->kind != Slot::String) break;
      sniff(s->s);
      if (is_tensor_type(s->s)) return DumpNode(make_tensor(level));
      return DumpNode(make_leaf(level, std::string(s->s)));
    }
    std::vector<DumpMember> members;
    members.reserve(f.slots.size());
    std::unordered_map<std::string_view, std::size_t> at;  // only for large objects
    for (const Slot& s : f.slots) {
      std::size_t k = members.size();
      if (f.slots.size() <= 16) {
        for (std::size_t i = 0; i < members.size(); ++i)
          if (members[i].first == s.key) k = i;
      } else if (auto [it, fresh] = at.emplace(s.key, members.size()); !fresh) {
        k = it->second;
      }
      if (k == members.size())
        members.emplace_back(std::string(s.key), materialize(f, s));
      else
        members[k].second = materialize(f, s);
    }
    return DumpNode(std::move(members));
  }

  Statistic statistic(const Slot& s, int level) const {
    Statistic st;
    switch (s.kind) {
      case Slot::Null:
        st.kind = Statistic::Kind::Null;
        return st;
      case Slot::Bool:
        st.kind = Statistic::Kind::Bool;
        st.b = s.b;
        return st;
      case Slot::Int:
        st.kind = Statistic::Kind::Int;
        st.i = s.i;
        return st;
      case Slot::Double:
        st.kind = Statistic::Kind::Float;
        st.d = s.d;
        return st;
      default:
        break;
    }
    fail("expected a number, a bool or null", join_field(level, s.key), entry_key());
  }

  std::optional<DType> cached_dtype(std::string_view name) {
    // A dump uses a handful of dtype spellings; parse_dtype compares against every spelling.
    for (const auto& [n, t] : dtype_cache_)
      if (n == name) return t;
    const auto t = parse_dtype(name);
    if (dtype_cache_.size() < 64) dtype_cache_.emplace_back(std::string(name), t);
    return t;
  }

  TensorInfo make_tensor(int level) {
    Frame& f = frames_[level];
    TensorInfo t;
    t.field = field_path(level);
    bool has_dtype = false, has_shape = false;
    for (const Slot& s : f.slots) {
      const std::string_view k = s.key;
      auto want_string = [&](std::string& out) {
        if (s.kind != Slot::String) fail("expected a string", join_field(level, k), entry_key());
        out.assign(s.s);
      };
      // Dispatch on the first letter: this loop runs for every tensor of a big dump.
      switch (k.empty() ? '\0' : k[0]) {
        case 't':
          if (is(k, "type")) want_string(t.type);
          break;
        case 'd':
          if (is(k, "dtype")) {
            want_string(t.dtype_name);
            t.dtype = cached_dtype(t.dtype_name);
            has_dtype = true;
          } else if (is(k, "data_name")) {
            if (s.kind != Slot::Null) want_string(t.data_name);
            // A control character (a NUL cuts the name in C APIs) would be echoed raw into CSVs.
            if (std::any_of(t.data_name.begin(), t.data_name.end(),
                            [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
              fail("data_name contains a control character", join_field(level, k), entry_key());
          } else if (is(k, "datapath")) {
            // Legacy dumps stored the writer's absolute path; the file lives in dump_tensor_data/ under
            // the same base name, which is also the only place probe will read from.
            if (s.kind != Slot::Null && t.data_name.empty()) {
              std::string p;
              want_string(p);
              t.data_name = std::filesystem::path(p).filename().string();
            }
          }
          break;
        case 's':
          if (is(k, "shape")) {
            if (s.kind != Slot::Ints)
              fail("expected a list of non-negative ints", join_field(level, k), entry_key());
            t.shape.assign(f.ints.begin() + s.index, f.ints.begin() + s.index + s.count);
            for (const std::int64_t dim : t.shape)
              if (dim < 0) fail("expected a list of non-negative ints", join_field(level, k), entry_key());
            has_shape = true;
          }
          break;
        case 'M':
          if (is(k, "Max"))
            t.max = statistic(s, level);
          else if (is(k, "Min"))
            t.min = statistic(s, level);
          else if (is(k, "Mean"))
            t.mean = statistic(s, level);
          else if (is(k, "Max_except_inf_nan"))
            t.max_except_inf_nan = statistic(s, level);
          else if (is(k, "Min_except_inf_nan"))
            t.min_except_inf_nan = statistic(s, level);
          break;
        case 'N':
          if (is(k, "Norm")) t.norm = statistic(s, level);
          break;
        case 'r':
          if (is(k, "requires_grad")) {
            if (s.kind == Slot::Bool)
              t.requires_grad = s.b;
            else if (s.kind != Slot::Null)
              fail("expected true or false", join_field(level, k), entry_key());
          }
          break;
        case 'm':
          if (is(k, "md5")) want_string(t.md5);
          break;
        default:
          break;  // device_mesh, placements, layout, hsdp_shard_size: sharding metadata probe does not use
      }
    }
    if (!has_dtype) fail("tensor descriptor without dtype", join_field(level, "dtype"), entry_key());
    if (!has_shape) fail("tensor descriptor without shape", join_field(level, "shape"), entry_key());
    return t;
  }

  DumpNode::Leaf make_leaf(int level, const std::string& type) {
    Frame& f = frames_[level];
    auto member = [&](std::string_view key) -> std::optional<DumpNode> {
      for (auto s = f.slots.rbegin(); s != f.slots.rend(); ++s)  // a repeated key: the last value
        if (s->key == key) return materialize(f, *s);
      return std::nullopt;
    };
    DumpNode::Leaf leaf;
    leaf.type = type;
    const std::optional<DumpNode> value = member("value");
    const DumpNode* v = value ? &*value : nullptr;
    if (is(type, "torch.memory_format")) {
      if (auto fmt_node = member("format"))
        return {type, Value(OpaqueValue{type, dump_detail::render(*fmt_node)})};
    } else if (type.ends_with("ProcessGroup")) {
      if (auto ranks = member("group_ranks"))
        return {type, Value(OpaqueValue{type, dump_detail::render(*ranks)})};
    }
    leaf.value = leaf_value(level, type, v);
    return leaf;
  }

  static bool bare(const DumpNode& n) { return n.kind() == DumpNode::Kind::Value && n.leaf().type.empty(); }

  Value leaf_value(int level, const std::string& type, const DumpNode* value) {
    auto opaque = [&](const DumpNode* n) {
      return Value(OpaqueValue{type, n ? dump_detail::render(*n) : ""});
    };
    const Value* bare_value = value && bare(*value) ? &value->leaf().value : nullptr;
    if (is(type, "int") || is(type, "float") || is(type, "bool") || is(type, "str") ||
        is_numpy_scalar_type(type)) {
      if (!bare_value && value && value->is_null()) return Value();
      if (!bare_value)
        fail(fmt::format("a '{}' leaf needs a scalar value", type), join_field(level, "value"), entry_key());
      if (is(type, "float") && bare_value->kind() == Value::Kind::Int)
        return Value(static_cast<double>(bare_value->as_int()));
      return *bare_value;
    }
    if (is(type, "slice")) {
      if (value && value->kind() == DumpNode::Kind::List && value->items().size() == 3) {
        Slice s;
        std::optional<std::int64_t>* parts[] = {&s.start, &s.stop, &s.step};
        bool ok = true;
        for (int i = 0; i < 3; ++i) {
          const DumpNode& p = value->items()[i];
          if (p.is_null()) continue;
          if (bare(p) && p.leaf().value.kind() == Value::Kind::Int)
            *parts[i] = p.leaf().value.as_int();
          else
            ok = false;
        }
        if (ok) return Value(s);
      }
      return opaque(value);  // slices of tensors etc. carry no usable bounds
    }
    if (is(type, "ellipsis")) return Value(EllipsisValue{});
    if (is(type, "torch.Size")) {
      if (!value || value->kind() != DumpNode::Kind::List)
        fail("a torch.Size leaf needs a list of ints", join_field(level, "value"), entry_key());
      std::vector<Value> dims;
      for (const DumpNode& d : value->items()) {
        if (!bare(d) || d.leaf().value.kind() != Value::Kind::Int)
          fail("a torch.Size leaf needs a list of ints", join_field(level, "value"), entry_key());
        dims.push_back(d.leaf().value);
      }
      return Value(std::move(dims), true);
    }
    if (is(type, "torch.dtype") || is(type, "mindspore.dtype")) {
      if (bare_value && bare_value->kind() == Value::Kind::String) {
        if (auto d = parse_dtype(bare_value->as_string())) return Value(*d);
        return Value(OpaqueValue{type, bare_value->as_string()});  // float8 etc.: carried, not computed with
      }
      return opaque(value);
    }
    // torch.device, ReduceOp and anything newer: opaque, keeping its text.
    return opaque(value);
  }

  Dump& dump_;
  int max_depth_;
  rapidjson::InsituStringStream& stream_;
  std::vector<Frame> frames_;
  std::vector<std::pair<std::string, std::optional<DType>>> dtype_cache_;
  int depth_ = 0;
  bool saw_mindspore_ = false, saw_torch_ = false, saw_data_ = false;
};

namespace dump_detail {

void parse_dump_buffer(Dump& dump, char* text, std::size_t size, const DumpParseOptions& options,
                       const std::function<std::string()>& original_text) {
  // A UTF-8 byte order mark (some editors add one) is not JSON; skip it like Python's utf-8-sig would.
  const std::size_t bom = size >= 3 && std::memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  text += bom;
  size -= bom;
  rapidjson::InsituStringStream stream(text);
  DumpBuilder builder(dump, options, stream);
  // msprobe records take a kilobyte or more of indented JSON; reserving address space (untouched pages
  // cost nothing) avoids re-moving every record while the vector grows.
  builder.reserve_entries(size / 1024 + 16);
  rapidjson::Reader reader;
  const rapidjson::ParseResult ok = reader.Parse<kParseFlags>(stream, builder);
  if (!ok) {
    // In-situ parsing rewrote decoded strings inside the buffer; count lines on the original text.
    const std::string original = original_text();
    throw Error(ErrorKind::Format,
                fmt::format("invalid JSON at {}: {}", describe_json_position(original, ok.Offset() + bom),
                            parse_error_text(ok.Code())),
                dump.path());
  }
  if (stream.Tell() < size)  // RapidJSON stops at a NUL byte as if the text ended there
    throw Error(ErrorKind::Format,
                fmt::format("NUL byte in the JSON text at {}",
                            describe_json_position(original_text(), stream.Tell() + bom)),
                dump.path());
  builder.finish();
}

}  // namespace dump_detail
}  // namespace probe
