// Flattening dump.json entries into compare rows (dump-and-compare §3.3).
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "dump_compare/DumpCompareInternal.h"
#include "probe/error.h"
#include "probe/number_format.h"

namespace probe::dump_compare_detail {
namespace {

// msprobe refuses deeper structures (recursion limit 400, Appendix A).
constexpr int kMaxDepth = 400;

std::string shape_text(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

StatCell stat_cell(const Statistic& s) {
  StatCell c;
  switch (s.kind) {
    case Statistic::Kind::Absent:
    case Statistic::Kind::Null:
      return c;
    case Statistic::Kind::Bool:
      c.text = s.b ? "True" : "False";
      return c;
    case Statistic::Kind::Int:
      c.text = std::to_string(s.i);
      c.numeric = true;
      c.integer = true;
      c.value = static_cast<double>(s.i);
      return c;
    case Statistic::Kind::Float:
      c.text = std::isnan(s.d) ? "Nan" : python_repr(s.d);
      c.numeric = true;
      c.value = s.d;
      return c;
  }
  return c;
}

// Python str() of a leaf's JSON "value", and the class name type() would give it.
struct LeafText {
  std::string text;
  std::string py_type;
  bool present = true;  // false: the leaf has no "value" key
};

LeafText leaf_text(const DumpNode::Leaf& leaf) {
  const Value& v = leaf.value;
  switch (v.kind()) {
    case Value::Kind::None:
      if (leaf.type == "torch.memory_format") return {"", "<class 'NoneType'>", false};
      return {"None", "<class 'NoneType'>"};
    case Value::Kind::Bool:
      return {v.as_bool() ? "True" : "False", "<class 'bool'>"};
    case Value::Kind::Int:
      return {std::to_string(v.as_int()), "<class 'int'>"};
    case Value::Kind::Float:
      return {python_repr(v.as_double()), "<class 'float'>"};
    case Value::Kind::String:
      return {v.as_string(), "<class 'str'>"};
    case Value::Kind::DType:
      return {std::string(leaf.type == "mindspore.dtype" ? mindspore_name(v.as_dtype())
                                                         : torch_name(v.as_dtype())),
              "<class 'str'>"};
    case Value::Kind::List: {
      std::string s = "[";
      const auto& items = v.list();
      for (std::size_t i = 0; i < items.size(); ++i)
        s += (i ? ", " : "") +
             (items[i].kind() == Value::Kind::Int ? std::to_string(items[i].as_int()) : items[i].to_string());
      return {s + "]", "<class 'list'>"};
    }
    case Value::Kind::Slice: {
      const Slice& sl = v.as_slice();
      auto part = [](const std::optional<std::int64_t>& p) {
        return p ? std::to_string(*p) : std::string("None");
      };
      return {"[" + part(sl.start) + ", " + part(sl.stop) + ", " + part(sl.step) + "]", "<class 'list'>"};
    }
    case Value::Kind::Ellipsis:
      return {"...", "<class 'str'>"};
    case Value::Kind::Opaque: {
      const auto& o = std::get<OpaqueValue>(v.storage());
      // memory_format keeps its name under "format", not "value" (§1.4.6).
      if (leaf.type == "torch.memory_format") return {"", "<class 'NoneType'>", false};
      return {o.text, "<class 'str'>"};
    }
    default:
      return {v.to_string(), "<class 'str'>"};
  }
}

StatCell text_cell(const std::string& text) { return StatCell{text, false, false, 0}; }

class Flattener {
 public:
  Flattener(const DumpEntry& entry, std::vector<OpItem>& out) : entry_(entry), out_(out) {}

  void walk(const DumpNode& node, const std::string& name, RowState state, bool params_grad, int depth) {
    if (depth > kMaxDepth)
      throw Error(ErrorKind::Format, "argument nesting deeper than 400 levels", {}, name, entry_.key);
    switch (node.kind()) {
      case DumpNode::Kind::Null: {
        OpItem item = base(name, state);
        out_.push_back(std::move(item));
        return;
      }
      case DumpNode::Kind::Tensor:
        out_.push_back(tensor_item(node.tensor(), name, state));
        return;
      case DumpNode::Kind::Value:
        out_.push_back(leaf_item(node.leaf(), name, state));
        return;
      case DumpNode::Kind::List: {
        const auto& items = node.items();
        for (std::size_t i = 0; i < items.size(); ++i)
          walk(items[i], params_grad ? name : name + "." + std::to_string(i), state, params_grad, depth + 1);
        return;
      }
      case DumpNode::Kind::Dict: {
        const auto& members = node.members();
        if (const DumpNode* ct = node.find("class_type");
            ct && ct->kind() == DumpNode::Kind::Value && ct->leaf().type.empty() &&
            ct->leaf().value.kind() == Value::Kind::String &&
            ct->leaf().value.as_string() == "torch.distributed.P2POp") {
          const DumpNode* t = node.find("tensor");
          if (t && t->is_tensor())
            out_.push_back(tensor_item(t->tensor(), name, state));
          else
            out_.push_back(base(name, state));
          // -da links point-to-point operations by these two fields (§3.12).
          for (auto [key, field] : {std::pair{"op", &OpItem::p2p_op}, std::pair{"peer", &OpItem::p2p_peer}})
            if (const DumpNode* v = node.find(key); v && v->kind() == DumpNode::Kind::Value)
              out_.back().*field = leaf_text(v->leaf()).text;
          return;
        }
        for (const auto& [k, v] : members) walk(v, name + "." + k, state, params_grad, depth + 1);
        return;
      }
    }
  }

 private:
  OpItem base(const std::string& name, RowState state) const {
    OpItem item;
    item.name = name;
    item.entry_key = entry_.key;
    item.state = state;
    item.entry = &entry_;
    return item;
  }

  OpItem tensor_item(const TensorInfo& t, const std::string& name, RowState state) const {
    OpItem item = base(name, state);
    item.dtype = t.dtype_name;
    item.shape = shape_text(t.shape);
    item.stats[0] = stat_cell(t.max);
    item.stats[1] = stat_cell(t.min);
    item.stats[2] = stat_cell(t.mean);
    item.stats[3] = stat_cell(t.norm);
    if (t.requires_grad) item.requires_grad = *t.requires_grad ? "True" : "False";
    item.md5 = t.md5.empty() ? crc32_hex("") : t.md5;
    if (!t.data_name.empty()) {
      item.data_name = t.data_name;
      const auto dot = t.data_name.rfind('.');
      item.name = dot == std::string::npos ? t.data_name : t.data_name.substr(0, dot);
    }
    item.tensor = &t;
    return item;
  }

  OpItem leaf_item(const DumpNode::Leaf& leaf, const std::string& name, RowState state) const {
    OpItem item = base(name, state);
    const LeafText lt = leaf_text(leaf);
    const auto last_dot = name.rfind('.');
    const std::string last = last_dot == std::string::npos ? name : name.substr(last_dot + 1);
    item.shape = "[]";
    if (leaf.type == "torch.Size") {
      item.dtype = leaf.type;
      item.shape = lt.text;
    } else if (leaf.type == "slice") {
      item.dtype = leaf.type;
      item.shape = "(3,)";  // np.shape(np.array([start, stop, step]))
    } else if (leaf.type == "ellipsis") {
      item.dtype = leaf.type;
      for (auto& s : item.stats) s = text_cell(lt.text);
    } else if (last == "src" || last == "dst" || last == "group_src" || last == "group_dst") {
      item.dtype = leaf.type;
      for (auto& s : item.stats) s = text_cell(lt.text);
      item.md5 = lt.text;
      return item;
    } else if (leaf.type.ends_with("ProcessGroup")) {
      item.dtype = "torch.ProcessGroup";
      for (auto& s : item.stats) s = text_cell(lt.text);
      item.md5 = lt.text;
      return item;
    } else {
      item.dtype = lt.py_type;
      StatCell c = text_cell(lt.text);
      const Value& v = leaf.value;
      if (v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Float) {
        c.numeric = true;
        c.integer = v.kind() == Value::Kind::Int;
        c.value = v.as_double();
        if (std::isnan(c.value)) c.text = "Nan";
      }
      if (!lt.present) c.text = "None";
      for (auto& s : item.stats) s = c;
    }
    item.md5 = crc32_hex(lt.present ? lt.text : "");
    return item;
  }

  const DumpEntry& entry_;
  std::vector<OpItem>& out_;
};

bool is_params_grad_key(std::string_view key) {
  // The last or second-to-last segment is "parameters_grad" (with and without the counter).
  auto last = key.rfind('.');
  if (last == std::string_view::npos) return false;
  if (key.substr(last + 1) == "parameters_grad") return true;
  auto prev = key.substr(0, last).rfind('.');
  return prev != std::string_view::npos && key.substr(prev + 1, last - prev - 1) == "parameters_grad";
}

int state_rank(RowState s) {
  switch (s) {
    case RowState::Input:
    case RowState::Debug:
      return 0;
    case RowState::Parameters:
      return 1;
    case RowState::Output:
      return 2;
    case RowState::ParametersGrad:
      return 3;
  }
  return 0;
}

}  // namespace

std::string crc32_hex(std::string_view text) {
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size()));
  return fmt::format("{:08x}", static_cast<std::uint32_t>(crc));
}

std::string python_str_repr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char q = has_single && !has_double ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == static_cast<unsigned char>(q))
      out += std::string("\\") + q;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  return out + q;
}

std::string python_list_repr(const std::vector<std::string>& items) {
  std::string s = "[";
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + python_str_repr(items[i]);
  return s + "]";
}

std::vector<OpItem> flatten_dump(const Dump& dump, const StackInfo* stack) {
  std::vector<OpItem> rows;
  std::vector<OpItem> entry_rows;
  for (const DumpEntry& e : dump.entries()) {
    entry_rows.clear();
    Flattener f(e, entry_rows);
    try {
      if (e.key.ends_with(".debug")) {
        f.walk(e.body, e.key, RowState::Debug, false, 0);
      } else if (is_params_grad_key(e.key)) {
        if (e.body.kind() == DumpNode::Kind::Dict)
          for (const auto& [k, v] : e.body.members())
            f.walk(v, e.key + "." + k, RowState::ParametersGrad, true, 1);
      } else if (e.body.kind() == DumpNode::Kind::Dict) {
        static constexpr std::pair<const char*, RowState> kGroups[] = {{"input_args", RowState::Input},
                                                                       {"input_kwargs", RowState::Input},
                                                                       {"input", RowState::Input},
                                                                       {"output", RowState::Output},
                                                                       {"parameters", RowState::Parameters}};
        for (const auto& [group, state] : kGroups) {
          const DumpNode* n = e.section(group);
          if (!n) continue;
          const char* suffix = state == RowState::Input    ? ".input"
                               : state == RowState::Output ? ".output"
                                                           : ".parameters";
          f.walk(*n, e.key + suffix, state, false, 1);
        }
      }
    } catch (const Error& err) {
      throw err.with_context(dump.path(), {}, e.key);
    }
    std::stable_sort(entry_rows.begin(), entry_rows.end(), [](const OpItem& a, const OpItem& b) {
      return state_rank(a.state) < state_rank(b.state);
    });
    if (!entry_rows.empty()) {
      entry_rows.front().first_of_entry = true;
      if (stack) entry_rows.front().stack = stack->frames_of(e.key);
    }
    for (auto& r : entry_rows) rows.push_back(std::move(r));
  }
  return rows;
}

std::string fuzzy_key(std::string_view name) {
  std::string_view dir = "forward";
  auto pos = name.find(dir);
  if (pos == std::string_view::npos) {
    dir = "backward";
    pos = name.find(dir);
  }
  if (pos == std::string_view::npos) return std::string(name);
  std::string_view left = name.substr(0, pos);  // "Functional.conv2d.3."
  // Drop the last two '.'-segments of the left part: the counter and the empty one after its dot.
  for (int k = 0; k < 2; ++k) {
    auto d = left.rfind('.');
    left = d == std::string_view::npos ? std::string_view{} : left.substr(0, d);
  }
  std::string out(left);
  if (!out.empty()) out += '.';
  out += dir;
  out += name.substr(pos + dir.size());
  return out;
}

}  // namespace probe::dump_compare_detail
