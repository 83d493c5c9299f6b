// dump.json → probe::Dump in one SAX pass (RapidJSON, in-situ). A big model's dump.json is hundreds of MB,
// so no intermediate DOM is built: each JSON object is collected into a per-depth scratch list and turned
// into a tensor descriptor, a leaf value or an ordered dict when it closes.
#define RAPIDJSON_SSE2 1  // whitespace skipping; the read buffer is padded (JsonSupport.h)
#include <fmt/format.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>

#include "dump/DumpInternal.h"
#include "dump/JsonSupport.h"
#include "probe/dump.h"
#include "probe/error.h"

namespace probe {

using dump_detail::describe_position;

namespace {

constexpr unsigned kParseFlags = rapidjson::kParseInsituFlag | rapidjson::kParseValidateEncodingFlag |
                                 rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag |
                                 rapidjson::kParseNanAndInfFlag;

bool is_tensor_type(std::string_view type) {
  // torch.Tensor and its dumped subclasses (DTensor, FakeTensor, AsyncCollectiveTensor, NestedTensor),
  // mindspore.Tensor, Parameter classes, and numpy arrays (§1.4.4, §1.4.5, precheck §1.1).
  return type.ends_with("Tensor") || type.ends_with("Parameter") || type == "numpy.ndarray";
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
/// the argument tree below it. Strings are views into the in-situ buffer until copied into the model.
class DumpBuilder {
 public:
  DumpBuilder(Dump& dump, const DumpParseOptions& options, rapidjson::InsituStringStream& stream)
      : dump_(dump), options_(options), stream_(stream) {
    frames_.resize(8);
  }

  // --- RapidJSON handler interface -------------------------------------------------------------
  bool Null() { return scalar(Value()); }
  bool Bool(bool b) { return scalar(Value(b)); }
  bool Int(int i) { return scalar(Value(static_cast<std::int64_t>(i))); }
  bool Uint(unsigned u) { return scalar(Value(static_cast<std::int64_t>(u))); }
  bool Int64(std::int64_t i) { return scalar(Value(i)); }
  bool Uint64(std::uint64_t u) {
    // Above int64: Python ints are unbounded; keep the magnitude as a float rather than wrap.
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return scalar(Value(static_cast<double>(u)));
    return scalar(Value(static_cast<std::int64_t>(u)));
  }
  bool Double(double d) { return scalar(Value(d)); }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return false; }  // not requested
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (depth_ > 0) {
      Frame& parent = frames_[depth_ - 1];
      if (parent.role == Role::Tree && parent.is_object) {
        parent.members.push_back(Member{parent.key, DumpNode(), std::string_view(s, n), true});
        return true;
      }
    }
    return scalar(Value(std::string(s, n)), std::string_view(s, n));
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    frames_[depth_ - 1].key = std::string_view(s, n);
    return true;
  }
  bool StartObject() { return open(true); }
  bool StartArray() { return open(false); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool EndArray(rapidjson::SizeType) { return close(); }

  void finish() {
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
  // A member of an open object. Strings stay views into the buffer until a dict or leaf needs them,
  // so tensor descriptors copy each string once.
  struct Member {
    std::string_view key;
    DumpNode node;
    std::string_view str;
    bool is_str = false;
    DumpNode& materialize() {
      if (is_str) {
        node = DumpNode(DumpNode::Leaf{{}, Value(std::string(str))});
        is_str = false;
      }
      return node;
    }
  };
  struct Frame {
    bool is_object = false;
    Role role = Role::Tree;
    std::string_view key;
    std::vector<Member> members;  // scratch, capacity reused
    std::vector<DumpNode> items;
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
        out += std::to_string(frames_[i].items.size());
    }
    return out;
  }

  bool open(bool is_object) {
    if (depth_ >= options_.max_depth)
      fail(fmt::format("JSON nested deeper than {} levels", options_.max_depth), field_path(depth_),
           entry_key());
    Role role = Role::Tree;
    if (depth_ == 0) {
      if (!is_object) fail("the top level must be a JSON object");
      role = Role::Root;
    } else if (depth_ == 1 && frames_[0].key == "data") {
      if (!is_object) fail("expected an object of records", "data");
      role = Role::Data;
    }
    if (static_cast<std::size_t>(depth_) == frames_.size()) frames_.resize(frames_.size() * 2);
    Frame& f = frames_[depth_++];
    f.is_object = is_object;
    f.role = role;
    f.key = {};
    f.members.clear();
    f.items.clear();
    return true;
  }

  bool close() {
    Frame& f = frames_[depth_ - 1];
    if (f.role == Role::Root || f.role == Role::Data) {
      --depth_;
      return true;
    }
    DumpNode node;
    if (f.is_object) {
      node = make_object(depth_ - 1);
    } else {
      node = DumpNode(std::vector<DumpNode>(std::make_move_iterator(f.items.begin()),
                                            std::make_move_iterator(f.items.end())));
      f.items.clear();
    }
    --depth_;
    deliver(std::move(node));
    return true;
  }

  bool scalar(Value v, std::string_view text = {}) {
    if (depth_ == 0) fail("the top level must be a JSON object");
    Frame& parent = frames_[depth_ - 1];
    if (parent.role == Role::Root) {
      root_scalar(parent.key, v, text);
      return true;
    }
    deliver(v.is_none() ? DumpNode() : DumpNode(DumpNode::Leaf{{}, std::move(v)}));
    return true;
  }

  void root_scalar(std::string_view key, const Value& v, std::string_view text) {
    auto want_string = [&](std::string& out) {
      if (v.is_none()) return;  // treated as absent
      if (v.kind() != Value::Kind::String) fail("expected a string", std::string(key));
      out = std::string(text);
    };
    if (key == "task")
      want_string(dump_.task_);
    else if (key == "level")
      want_string(dump_.level_);
    else if (key == "framework")
      want_string(dump_.framework_field_);
    else if (key == "dump_data_dir") {
      if (v.is_none())
        dump_.dump_data_dir_.reset();
      else if (v.kind() == Value::Kind::String)
        dump_.dump_data_dir_ = std::string(text);
      else
        fail("expected a string or null", "dump_data_dir");
    } else if (key == "data") {
      fail("expected an object of records", "data");
    }
    // Other top-level scalars are ignored: newer msprobe versions may add fields.
  }

  void deliver(DumpNode node) {
    Frame& parent = frames_[depth_ - 1];
    switch (parent.role) {
      case Role::Root:
        if (parent.key == "data") fail("expected an object of records", "data");
        return;  // unknown compound top-level field: validated for depth, then dropped
      case Role::Data:
        add_entry(parent.key, std::move(node));
        return;
      case Role::Tree:
        if (parent.is_object)
          parent.members.push_back(Member{parent.key, std::move(node), {}, false});
        else
          parent.items.push_back(std::move(node));
        return;
    }
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
        if (name == "is_recompute") {
          if (k == DumpNode::Kind::Value && section.leaf().type.empty() &&
              section.leaf().value.kind() == Value::Kind::Bool)
            e.is_recompute = section.leaf().value.as_bool();
          else if (k != DumpNode::Kind::Null)
            fail("expected true or false", name, e.key);
        } else if (ordinary && (name == "input_args" || name == "input" || name == "output")) {
          if (k != DumpNode::Kind::List && k != DumpNode::Kind::Null) fail("expected a list", name, e.key);
        } else if (ordinary && (name == "input_kwargs" || name == "parameters")) {
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
    if (type.starts_with("mindspore"))
      saw_mindspore_ = true;
    else if (type.starts_with("torch"))
      saw_torch_ = true;
  }

  // A closed JSON object at frames_[level]: tensor descriptor, leaf, or ordered dict.
  DumpNode make_object(int level) {
    Frame& f = frames_[level];
    for (const Member& m : f.members) {
      if (m.key != "type" || !m.is_str) continue;
      sniff(m.str);
      if (is_tensor_type(m.str)) return DumpNode(make_tensor(level));
      return DumpNode(make_leaf(level, std::string(m.str)));
    }
    std::vector<DumpMember> members;
    members.reserve(f.members.size());
    for (Member& m : f.members) members.emplace_back(std::string(m.key), std::move(m.materialize()));
    f.members.clear();
    return DumpNode(std::move(members));
  }

  static bool bare(const DumpNode& n) { return n.kind() == DumpNode::Kind::Value && n.leaf().type.empty(); }

  Statistic statistic(const DumpNode& n, int level, std::string_view key) const {
    Statistic s;
    if (n.is_null()) {
      s.kind = Statistic::Kind::Null;
      return s;
    }
    if (bare(n)) {
      const Value& v = n.leaf().value;
      switch (v.kind()) {
        case Value::Kind::None:
          s.kind = Statistic::Kind::Null;
          return s;
        case Value::Kind::Bool:
          s.kind = Statistic::Kind::Bool;
          s.b = v.as_bool();
          return s;
        case Value::Kind::Int:
          s.kind = Statistic::Kind::Int;
          s.i = v.as_int();
          return s;
        case Value::Kind::Float:
          s.kind = Statistic::Kind::Float;
          s.d = v.as_double();
          return s;
        default:
          break;
      }
    }
    fail("expected a number, a bool or null", join_field(level, key), entry_key());
  }

  std::string join_field(int level, std::string_view key) const {
    std::string p = field_path(level);
    if (!p.empty()) p += '.';
    p += key;
    return p;
  }

  TensorInfo make_tensor(int level) {
    Frame& f = frames_[level];
    TensorInfo t;
    t.field = field_path(level);
    bool has_dtype = false, has_shape = false;
    for (Member& m : f.members) {
      const std::string_view k = m.key;
      const DumpNode& v = m.node;
      auto want_string = [&](std::string& out) {
        if (!m.is_str) fail("expected a string", join_field(level, k), entry_key());
        out.assign(m.str);
      };
      if (k == "type") {
        want_string(t.type);
      } else if (k == "dtype") {
        want_string(t.dtype_name);
        t.dtype = parse_dtype(t.dtype_name);
        has_dtype = true;
      } else if (k == "shape") {
        if (m.is_str || v.kind() != DumpNode::Kind::List)
          fail("expected a list of ints", join_field(level, k), entry_key());
        t.shape.reserve(v.items().size());
        for (const DumpNode& d : v.items()) {
          if (!bare(d) || d.leaf().value.kind() != Value::Kind::Int || d.leaf().value.as_int() < 0)
            fail("expected a list of non-negative ints", join_field(level, k), entry_key());
          t.shape.push_back(d.leaf().value.as_int());
        }
        has_shape = true;
      } else if (m.is_str &&
                 (k == "Max" || k == "Min" || k == "Mean" || k == "Norm" || k == "requires_grad" ||
                  k == "Max_except_inf_nan" || k == "Min_except_inf_nan")) {
        fail("expected a number, a bool or null, not a string", join_field(level, k), entry_key());
      } else if (k == "Max") {
        t.max = statistic(v, level, k);
      } else if (k == "Min") {
        t.min = statistic(v, level, k);
      } else if (k == "Mean") {
        t.mean = statistic(v, level, k);
      } else if (k == "Norm") {
        t.norm = statistic(v, level, k);
      } else if (k == "Max_except_inf_nan") {
        t.max_except_inf_nan = statistic(v, level, k);
      } else if (k == "Min_except_inf_nan") {
        t.min_except_inf_nan = statistic(v, level, k);
      } else if (k == "requires_grad") {
        if (bare(v) && v.leaf().value.kind() == Value::Kind::Bool)
          t.requires_grad = v.leaf().value.as_bool();
        else if (!v.is_null())
          fail("expected true or false", join_field(level, k), entry_key());
      } else if (k == "data_name") {
        if (!v.is_null() || m.is_str) want_string(t.data_name);
      } else if (k == "datapath") {
        // Legacy dumps stored the writer's absolute path; the file lives in dump_tensor_data/ under the
        // same base name, which is also the only place probe will read from.
        if ((!v.is_null() || m.is_str) && t.data_name.empty()) {
          std::string p;
          want_string(p);
          t.data_name = std::filesystem::path(p).filename().string();
        }
      } else if (k == "md5") {
        want_string(t.md5);
      }
      // device_mesh, placements, layout, hsdp_shard_size: sharding metadata probe does not use.
    }
    if (!has_dtype) fail("tensor descriptor without dtype", join_field(level, "dtype"), entry_key());
    if (!has_shape) fail("tensor descriptor without shape", join_field(level, "shape"), entry_key());
    f.members.clear();
    return t;
  }

  DumpNode::Leaf make_leaf(int level, const std::string& type) {
    Frame& f = frames_[level];
    DumpNode::Leaf leaf;
    leaf.type = type;
    const DumpNode* value = nullptr;
    for (Member& m : f.members)
      if (m.key == "value") value = &m.materialize();
    leaf.value = leaf_value(level, type, value);
    f.members.clear();
    return leaf;
  }

  Value leaf_value(int level, const std::string& type, const DumpNode* value) {
    Frame& f = frames_[level];
    auto opaque = [&](const DumpNode* n) {
      return Value(OpaqueValue{type, n ? dump_detail::render(*n) : ""});
    };
    auto bare_value = [&]() -> const Value* {
      return value && bare(*value) ? &value->leaf().value : nullptr;
    };
    if (type == "int" || type == "float" || type == "bool" || type == "str" || is_numpy_scalar_type(type)) {
      const Value* v = bare_value();
      if (!v && value && value->is_null()) return Value();
      if (!v)
        fail(fmt::format("a '{}' leaf needs a scalar value", type), join_field(level, "value"), entry_key());
      if (type == "float" && v->kind() == Value::Kind::Int) return Value(static_cast<double>(v->as_int()));
      return *v;
    }
    if (type == "slice") {
      if (value && value->kind() == DumpNode::Kind::List && value->items().size() == 3) {
        Slice s;
        std::optional<std::int64_t>* parts[] = {&s.start, &s.stop, &s.step};
        bool ok = true;
        for (int i = 0; i < 3; ++i) {
          const DumpNode& p = value->items()[i];
          if (p.is_null() || (bare(p) && p.leaf().value.is_none())) continue;
          if (bare(p) && p.leaf().value.kind() == Value::Kind::Int)
            *parts[i] = p.leaf().value.as_int();
          else
            ok = false;
        }
        if (ok) return Value(s);
      }
      return opaque(value);  // slices of tensors etc. carry no usable bounds
    }
    if (type == "ellipsis") return Value(EllipsisValue{});
    if (type == "torch.Size") {
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
    if (type == "torch.dtype" || type == "mindspore.dtype") {
      const Value* v = bare_value();
      if (v && v->kind() == Value::Kind::String) {
        if (auto d = parse_dtype(v->as_string())) return Value(*d);
        return Value(OpaqueValue{type, v->as_string()});  // float8 etc.: carried, not computed with
      }
      return opaque(value);
    }
    if (type == "torch.memory_format") {
      for (Member& m : f.members)
        if (m.key == "format") return opaque(&m.materialize());
      return opaque(value);
    }
    if (type.ends_with("ProcessGroup")) {
      for (Member& m : f.members)
        if (m.key == "group_ranks") return opaque(&m.materialize());
      return opaque(value);
    }
    // torch.device, ReduceOp and anything newer: opaque, keeping its text.
    return opaque(value);
  }

  Dump& dump_;
  const DumpParseOptions& options_;
  rapidjson::InsituStringStream& stream_;
  std::vector<Frame> frames_;
  int depth_ = 0;
  bool saw_mindspore_ = false, saw_torch_ = false;
};

namespace dump_detail {

void parse_dump_buffer(Dump& dump, char* text, const DumpParseOptions& options,
                       const std::function<std::string()>& original_text) {
  rapidjson::InsituStringStream stream(text);
  DumpBuilder builder(dump, options, stream);
  rapidjson::Reader reader;
  const rapidjson::ParseResult ok = reader.Parse<kParseFlags>(stream, builder);
  if (!ok) {
    // In-situ parsing rewrote decoded strings inside the buffer; count lines on the original text.
    const std::string original = original_text();
    throw Error(ErrorKind::Format,
                fmt::format("invalid JSON at {}: {}", describe_position(original, ok.Offset()),
                            parse_error_text(ok.Code())),
                dump.path());
  }
  builder.finish();
}

}  // namespace dump_detail
}  // namespace probe
