// The dump.json model: node accessors, key names, and safe resolution of tensor files.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "dump/DumpInternal.h"
#include "dump/JsonSupport.h"
#include "probe/api_name.h"
#include "probe/dump.h"
#include "probe/error.h"
#include "probe/number_format.h"

namespace probe {

namespace fs = std::filesystem;

// --- Statistic, TensorInfo ------------------------------------------------------------------------

double Statistic::as_double() const noexcept {
  switch (kind) {
    case Kind::Bool:
      return b ? 1.0 : 0.0;
    case Kind::Int:
      return static_cast<double>(i);
    case Kind::Float:
      return d;
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

Value Statistic::to_value() const {
  switch (kind) {
    case Kind::Bool:
      return Value(b);
    case Kind::Int:
      return Value(i);
    case Kind::Float:
      return Value(d);
    default:
      return Value();
  }
}

std::optional<std::int64_t> TensorInfo::nbytes() const {
  if (!dtype) return std::nullopt;
  const std::int64_t n = probe::numel(shape);
  const auto size = static_cast<std::int64_t>(itemsize(*dtype));
  if (n > std::numeric_limits<std::int64_t>::max() / size)
    throw Error(ErrorKind::Format,
                "tensor byte size overflows (shape " + shape_to_string(shape) + " of " + dtype_name + ")", {},
                field);
  return n * size;
}

bool TensorInfo::file_dtype_fits(DType file_dtype) const noexcept {
  if (!dtype) return true;
  return file_dtype == *dtype || (*dtype == DType::BFloat16 && file_dtype == DType::Float32);
}

// --- DumpNode ----------------------------------------------------------------------------------------

namespace {
[[noreturn]] void wrong_node(std::string_view expected, DumpNode::Kind actual) {
  static constexpr std::string_view kNames[] = {"null", "tensor", "value", "list", "dict"};
  throw Error(ErrorKind::Format,
              fmt::format("expected a {} but found a {}", expected, kNames[static_cast<int>(actual)]));
}
}  // namespace

const TensorInfo& DumpNode::tensor() const {
  if (auto* t = std::get_if<std::shared_ptr<const TensorInfo>>(&v_)) return **t;
  wrong_node("tensor", kind());
}
const DumpNode::Leaf& DumpNode::leaf() const {
  if (auto* l = std::get_if<Leaf>(&v_)) return *l;
  wrong_node("value", kind());
}
const std::vector<DumpNode>& DumpNode::items() const {
  if (auto* l = std::get_if<std::vector<DumpNode>>(&v_)) return *l;
  wrong_node("list", kind());
}
const std::vector<DumpMember>& DumpNode::members() const {
  if (auto* m = std::get_if<std::vector<DumpMember>>(&v_)) return *m;
  wrong_node("dict", kind());
}

const DumpNode* DumpNode::find(std::string_view key) const noexcept {
  if (auto* m = std::get_if<std::vector<DumpMember>>(&v_))
    for (const auto& [k, v] : *m)
      if (k == key) return &v;
  return nullptr;
}

void DumpNode::collect_tensors(std::vector<const TensorInfo*>& out) const {
  switch (kind()) {
    case Kind::Tensor:
      out.push_back(&tensor());
      break;
    case Kind::List:
      for (const DumpNode& n : items()) n.collect_tensors(out);
      break;
    case Kind::Dict:
      for (const auto& [k, n] : members()) n.collect_tensors(out);
      break;
    default:
      break;
  }
}

Value DumpNode::to_value() const {
  switch (kind()) {
    case Kind::Null:
      return Value();
    case Kind::Value:
      return leaf().value;
    case Kind::List: {
      std::vector<Value> out;
      out.reserve(items().size());
      for (const DumpNode& n : items()) out.push_back(n.to_value());
      return Value(std::move(out));
    }
    case Kind::Tensor:
      throw Error(ErrorKind::Unsupported, "a tensor descriptor has no value without its data", {},
                  tensor().field);
    case Kind::Dict:
      break;
  }
  throw Error(ErrorKind::Unsupported, "a dict argument has no probe::Value form");
}

namespace dump_detail {

std::string render(const DumpNode& node) {
  switch (node.kind()) {
    case DumpNode::Kind::Null:
      return "None";
    case DumpNode::Kind::Tensor:
      return fmt::format("tensor({}, {})", node.tensor().dtype_name, shape_to_string(node.tensor().shape));
    case DumpNode::Kind::Value: {
      const Value& v = node.leaf().value;
      if (v.kind() == Value::Kind::String) return v.as_string();  // unquoted: "npu:0", "channels_last"
      return v.to_string();
    }
    case DumpNode::Kind::List: {
      std::string s = "[";
      for (std::size_t i = 0; i < node.items().size(); ++i) s += (i ? ", " : "") + render(node.items()[i]);
      return s + "]";
    }
    case DumpNode::Kind::Dict: {
      std::string s = "{";
      bool first = true;
      for (const auto& [k, v] : node.members()) {
        s += (first ? "'" : ", '") + k + "': " + render(v);
        first = false;
      }
      return s + "}";
    }
  }
  return {};
}

}  // namespace dump_detail

// --- entry names -------------------------------------------------------------------------------------

namespace {

// Segment boundaries of a dotted key without allocating (this runs once per record of a big dump).
class Segments {
 public:
  explicit Segments(std::string_view s) : s_(s) {
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s[i] == '.') {
        if (dots_ == kMax) {
          overflow_ = true;
          return;
        }
        dot_[dots_++] = i;
      }
  }
  bool overflow() const { return overflow_; }
  std::size_t size() const { return dots_ + 1; }
  std::string_view operator[](std::size_t i) const { return join(i, i + 1); }
  // Segments [from, to) with their dots.
  std::string_view join(std::size_t from, std::size_t to) const {
    if (to <= from) return {};
    const std::size_t begin = from == 0 ? 0 : dot_[from - 1] + 1;
    const std::size_t end = to == size() ? s_.size() : dot_[to - 1];
    return s_.substr(begin, end - begin);
  }

 private:
  static constexpr std::size_t kMax = 255;
  std::string_view s_;
  std::size_t dot_[kMax];
  std::size_t dots_ = 0;
  bool overflow_ = false;
};

bool is_counter(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

EntryDirection direction_of(std::string_view s) {
  if (s == "forward") return EntryDirection::Forward;
  if (s == "backward") return EntryDirection::Backward;
  if (s == "parameters_grad") return EntryDirection::ParametersGrad;
  return EntryDirection::Unknown;
}

}  // namespace

EntryName parse_entry_name(std::string_view key) {
  EntryName n;
  const Segments parts(key);
  const std::size_t count = parts.overflow() ? 1 : parts.size();
  n.prefix = std::string(parts[0]);
  n.is_module = parts[0] == "Module" || parts[0] == "Cell";
  const std::string_view last = parts[count - 1];
  // API: {Prefix}.{api}.{k}.forward, split by the one grammar (api_name.h). A key it reads otherwise than it
  // is spelled (a counter with leading zeros) or rejects (an empty segment) is no API record.
  const std::optional<ApiName> api = parts.overflow() ? std::nullopt : parse_api_name(key);
  if (api && api->call_index && api->direction != ApiDirection::None && api->dump_key() == key) {
    n.direction =
        api->direction == ApiDirection::Forward ? EntryDirection::Forward : EntryDirection::Backward;
    n.call_index = std::to_string(*api->call_index);
    n.api = api->name;
    n.full_name = api->counted_name();
  } else if (count >= 3 && is_counter(last) && direction_of(parts[count - 2]) != EntryDirection::Unknown) {
    // Module/Cell: {Module}.{path}.{Class}.forward.{k}; parameters_grad.{g}
    n.direction = direction_of(parts[count - 2]);
    n.call_index = std::string(last);
    n.api = std::string(parts.join(1, count - 2));
    n.full_name = std::string(parts.join(0, count - 2)) + "." + n.call_index;
  } else if (count >= 2 && last == "parameters_grad") {
    // before 2025-12: no counter
    n.direction = EntryDirection::ParametersGrad;
    n.api = std::string(parts.join(1, count - 1));
    n.full_name = std::string(parts.join(0, count - 1));
  } else if (count >= 3 && last == "debug" && is_counter(parts[count - 2])) {
    n.direction = EntryDirection::Debug;
    n.call_index = std::string(parts[count - 2]);
    n.api = std::string(parts.join(0, count - 2));
    n.full_name = std::string(parts.join(0, count - 1));
  } else {
    n.full_name = std::string(key);
  }
  return n;
}

RunUtKey classify_run_ut_key(std::string_view key) {
  RunUtKey r;
  // msprobe files keys by substrings; a Forward/Backward key's name is the key without the direction's
  // suffix, spelled as api_name.h spells it.
  auto file = [&](ApiDirection d, RunUtKey::Kind kind) {
    const std::string_view name = to_string(d);
    if (key.size() <= name.size() || !key.ends_with(name) || key[key.size() - name.size() - 1] != '.') return;
    const std::size_t suffix = name.size() + 1;
    r.kind = kind;
    r.full_name = std::string(key.substr(0, key.size() - suffix));
  };
  if (key.find("Module") != std::string_view::npos) {
    r.kind = RunUtKey::Kind::Ignored;
  } else if (key.find("forward") != std::string_view::npos) {
    file(ApiDirection::Forward, RunUtKey::Kind::Forward);
  } else if (key.find("backward") != std::string_view::npos) {
    file(ApiDirection::Backward, RunUtKey::Kind::Backward);
  }
  return r;
}

std::string_view to_string(EntryDirection d) noexcept {
  switch (d) {
    case EntryDirection::Forward:
      return "forward";
    case EntryDirection::Backward:
      return "backward";
    case EntryDirection::ParametersGrad:
      return "parameters_grad";
    case EntryDirection::Debug:
      return "debug";
    case EntryDirection::Unknown:
      break;
  }
  return "unknown";
}

std::string_view to_string(Framework f) noexcept {
  switch (f) {
    case Framework::PyTorch:
      return "pytorch";
    case Framework::MindSpore:
      return "mindspore";
    case Framework::MindTorch:
      return "mindtorch";
    case Framework::Unknown:
      break;
  }
  return "unknown";
}

// --- DumpEntry, Dump ---------------------------------------------------------------------------------

const DumpNode* DumpEntry::inputs() const noexcept {
  if (const DumpNode* n = section("input_args")) return n;
  return section("input");
}

std::vector<const TensorInfo*> DumpEntry::tensors() const {
  std::vector<const TensorInfo*> out;
  body.collect_tensors(out);
  return out;
}

Dump Dump::open(const std::string& path, const DumpParseOptions& options) {
  dump_detail::JsonBuffer buf = dump_detail::read_json_file(path);
  Dump d;
  d.path_ = path;
  dump_detail::parse_dump_buffer(d, buf.data(), buf.size, options,
                                 [&] { return std::string(dump_detail::read_json_file(path).text()); });
  d.index();
  return d;
}

Dump Dump::parse(std::string_view json, const std::string& path, const DumpParseOptions& options) {
  std::string buf;
  buf.reserve(json.size() + dump_detail::kJsonPadding);
  buf.append(json);
  buf.append(dump_detail::kJsonPadding, '\0');
  Dump d;
  d.path_ = path;
  dump_detail::parse_dump_buffer(d, buf.data(), json.size(), options, [&] { return std::string(json); });
  d.index();
  return d;
}

void Dump::index() {
  // The views stay valid when the Dump moves: the vector's buffer (and each key's) moves with it.
  by_key_.reserve(entries_.size());
  for (std::size_t i = 0; i < entries_.size(); ++i)
    // DECISIONS (silent accepts): Python's json keeps the last of two equal keys, probe used to run both;
    // a dump.json with a repeated record is damaged, so neither is trusted.
    if (!by_key_.emplace(entries_[i].key, i).second)
      throw Error(ErrorKind::Format, "record appears twice in \"data\"", path_, "data", entries_[i].key);
}

const DumpEntry* Dump::find(std::string_view key) const noexcept {
  const auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : &entries_[it->second];
}

Dump::RunUtMaps Dump::run_ut_maps() const {
  RunUtMaps maps;
  for (const DumpEntry& e : entries_) {
    RunUtKey k = classify_run_ut_key(e.key);
    switch (k.kind) {
      case RunUtKey::Kind::Ignored:
        break;
      case RunUtKey::Kind::Forward:
        maps.forward.emplace_back(std::move(k.full_name), &e);
        break;
      case RunUtKey::Kind::Backward:
        maps.backward.emplace_back(std::move(k.full_name), &e);
        break;
      case RunUtKey::Kind::Invalid:
        throw Error(ErrorKind::Format, "record name must end with .forward or .backward (or contain Module)",
                    path_, "data", e.key);
    }
  }
  return maps;
}

std::string Dump::tensor_dir() const {
  fs::path dir = fs::path(path_).parent_path();
  if (dir.empty()) dir = ".";
  return (dir / "dump_tensor_data").string();
}

namespace {
// Resolving the tensor directory costs a readlink and a stat per path component, as much as resolving the
// file itself, and every tensor of a dump shares it (`probe info` on 475k descriptors spent half its
// syscalls here): the last directory resolved is kept, per thread. A directory re-pointed meanwhile is not
// followed: its files keep resolving below the real directory as first resolved, never elsewhere.
const fs::path& resolved_tensor_dir(const fs::path& dir, std::error_code& ec) {
  thread_local fs::path last_dir, last_resolved;
  if (last_resolved.empty() || dir != last_dir) {
    last_resolved = fs::weakly_canonical(dir, ec);
    last_dir = ec ? fs::path() : dir;
    if (ec) last_resolved.clear();
  }
  return last_resolved;
}

// `dir` / `rel` with symlinks resolved, `dir` already resolved: when every component of `rel` exists and
// none is a symlink (a dump's usual file name), the joined path is already canonical and one lstat per
// component proves it; otherwise the whole path is resolved again.
fs::path resolve_below(const fs::path& dir, const fs::path& rel, const fs::path& full, std::error_code& ec) {
  fs::path walk = dir;
  for (const auto& part : rel.lexically_normal()) {
    if (part.empty() || part == ".") continue;
    walk /= part;
    struct stat st {};
    if (::lstat(walk.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) return fs::weakly_canonical(full, ec);
  }
  return walk;
}
}  // namespace

std::string Dump::tensor_path(const DumpEntry& entry, const TensorInfo& info) const {
  const std::string field = info.field.empty() ? "data_name" : info.field + ".data_name";
  if (info.data_name.empty())
    throw Error(ErrorKind::InvalidArgument, "the tensor has no data_name (no file was dumped)", path_, field,
                entry.key);
  auto reject = [&](std::string_view why) {
    throw Error(
        ErrorKind::Security,
        fmt::format("data_name '{}' {}; tensor files must stay inside {}", info.data_name, why, tensor_dir()),
        path_, field, entry.key);
  };
  if (info.data_name.find('\0') != std::string::npos) reject("contains a NUL byte");
  const fs::path rel(info.data_name);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) reject("is an absolute path");
  for (const auto& part : rel)
    if (part == "..") reject("climbs out with '..'");
  const fs::path base(tensor_dir());
  const fs::path full = base / rel;
  // Symlinks are followed: the real file must still live below the real tensor directory.
  std::error_code ec1, ec2;
  const fs::path& real_base = resolved_tensor_dir(base, ec1);
  const fs::path real = ec1 ? fs::path() : resolve_below(real_base, rel, full, ec2);
  if (ec1 || ec2) throw Error(ErrorKind::Io, "cannot resolve " + full.string(), path_, field, entry.key);
  const fs::path inside = real.lexically_relative(real_base);
  if (inside.empty() || inside == ".") reject("names the tensor directory itself, not a file in it");
  if (*inside.begin() == "..") reject("resolves outside (symlink)");
  std::error_code ec;
  const auto st = fs::status(real, ec);
  if (ec || !fs::exists(st))
    throw Error(ErrorKind::Io, "tensor file not found: " + full.string(), path_, field, entry.key);
  if (!fs::is_regular_file(st))
    throw Error(ErrorKind::Io, "tensor file is not a regular file: " + full.string(), path_, field,
                entry.key);
  return real.string();
}

}  // namespace probe
