// Reading msprobe's dump.json: the typed model of every dumped API/module call, and lazy access to
// the tensor files it references (dump_tensor_data/<data_name>).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "probe/dtype.h"
#include "probe/export.h"
#include "probe/tensor.h"
#include "probe/value.h"

namespace probe {

/// One statistic of a tensor descriptor (Max, Min, Mean, Norm): absent, JSON null, bool, int or float
/// (NaN and ±Infinity are floats). Kept in the type msprobe wrote it (0-d int64 stats stay exact).
struct PROBE_API Statistic {
  enum class Kind { Absent, Null, Bool, Int, Float };
  Kind kind = Kind::Absent;
  bool b = false;
  std::int64_t i = 0;
  double d = 0.0;

  bool present() const noexcept { return kind != Kind::Absent; }
  /// True for bool, int and float (the values run_ut can draw random data from).
  bool is_number() const noexcept { return kind == Kind::Bool || kind == Kind::Int || kind == Kind::Float; }
  /// The number as a double (bool 0/1); NaN when absent or null.
  double as_double() const noexcept;
  /// As a probe::Value: None for absent/null.
  Value to_value() const;
};

/// A tensor (or numpy ndarray) descriptor: metadata only; the data is read on demand by Dump::load_tensor.
struct PROBE_API TensorInfo {
  std::string type;            ///< "torch.Tensor", "mindspore.Tensor", "numpy.ndarray", DTensor class, ...
  std::string dtype_name;      ///< as written: "torch.float32", "Float16", "torch.float8_e5m2", ...
  std::optional<DType> dtype;  ///< nullopt when probe lacks the dtype (float8, HiFloat8, Int4): unsupported
  Shape shape;
  Statistic max, min, mean, norm;
  Statistic max_except_inf_nan, min_except_inf_nan;  ///< legacy fields, present only in old dumps
  std::optional<bool> requires_grad;                 ///< absent in MindSpore dumps
  std::string data_name;  ///< file name inside dump_tensor_data/ ("" when no file was written)
  std::string md5;        ///< CRC-32 as 8 hex chars in md5 mode, else ""
  std::string field;      ///< where it sits in its entry, dotted: "input_args.0.1", "weight.0"

  bool has_file() const noexcept { return !data_name.empty(); }
  /// Bytes of the tensor in its dump dtype (numel × itemsize); nullopt for unsupported dtypes.
  std::optional<std::int64_t> nbytes() const;
  /// Whether a tensor file holding `file_dtype` can carry this tensor: its own dtype, or float32 for
  /// bfloat16 (msprobe's MindSpore .npy; spec 1.5). True when probe lacks the dump's dtype (float8 and
  /// HiFloat8 are saved as float32; such tensors are unsupported anyway).
  bool file_dtype_fits(DType file_dtype) const noexcept;
};

class DumpNode;
/// A member of a JSON object argument (dict, kwargs, parameters), in file order.
using DumpMember = std::pair<std::string, DumpNode>;

/// One node of an entry's recursive argument tree (§1.4.3): JSON null, a tensor descriptor, a leaf
/// value ({"type": "int", "value": 3} or a bare JSON scalar), a list, or an ordered dict.
/// An empty dict is how msprobe records a special object it could not describe.
class PROBE_API DumpNode {
 public:
  enum class Kind { Null, Tensor, Value, List, Dict };
  /// A leaf: its msprobe type ("int", "torch.dtype", "slice", ...; "" for a bare JSON scalar) and value.
  /// Unknown or opaque types (torch.device, memory_format, ProcessGroup, ...) become OpaqueValue.
  struct Leaf {
    std::string type;
    probe::Value value;
  };

  DumpNode() = default;
  explicit DumpNode(TensorInfo t) : v_(std::make_shared<const TensorInfo>(std::move(t))) {}
  explicit DumpNode(Leaf l) : v_(std::move(l)) {}
  explicit DumpNode(std::vector<DumpNode> items) : v_(std::move(items)) {}
  explicit DumpNode(std::vector<DumpMember> members) : v_(std::move(members)) {}

  Kind kind() const noexcept { return static_cast<Kind>(v_.index()); }
  bool is_null() const noexcept { return kind() == Kind::Null; }
  bool is_tensor() const noexcept { return kind() == Kind::Tensor; }
  /// Accessors; throw probe::Error (Format) when the node is of another kind.
  const TensorInfo& tensor() const;
  const Leaf& leaf() const;
  const std::vector<DumpNode>& items() const;
  const std::vector<DumpMember>& members() const;
  /// Member `key` of a dict node, or nullptr (also for non-dicts).
  const DumpNode* find(std::string_view key) const noexcept;
  /// All tensor descriptors below (and including) this node, depth-first in file order.
  void collect_tensors(std::vector<const TensorInfo*>& out) const;
  /// Converts to a probe::Value: leaves as-is, lists to lists (tuples for torch.Size), null to None.
  /// Tensors and dicts have no Value form without their data: throws Unsupported.
  probe::Value to_value() const;

 private:
  // Descriptors are shared, not copied: a node stays small and cheap to move while a dump is parsed.
  std::variant<std::monostate, std::shared_ptr<const TensorInfo>, Leaf, std::vector<DumpNode>,
               std::vector<DumpMember>>
      v_;
};

/// What kind of record a dump.json key names (§1.2).
enum class EntryDirection { Forward, Backward, ParametersGrad, Debug, Unknown };

/// The parts of a dump.json key. API: "Torch.linalg.vector_norm.0.forward"; module:
/// "Module.conv2.Conv2d.forward.0"; parameter gradients: "Module.conv2.Conv2d.parameters_grad.0".
struct PROBE_API EntryName {
  std::string prefix;  ///< first segment: Functional, Torch, Tensor, Aten, NPU, Mint, Module, Cell, ...
  std::string api;  ///< API: segments between prefix and counter ("linalg.vector_norm"); module: path+class
  std::string full_name;  ///< key without the direction ("Torch.linalg.vector_norm.0", "Module.conv2.Conv2d")
  std::string call_index;  ///< the counter segment ("0"), "" when absent
  EntryDirection direction = EntryDirection::Unknown;
  bool is_module = false;  ///< Module/Cell (layer-level) entries, skipped by run_ut
};
/// Splits a dump.json key into its parts. Never throws: unknown shapes give direction Unknown.
PROBE_API EntryName parse_entry_name(std::string_view key);
/// The direction as dump keys spell it: "forward", "backward", "parameters_grad", "debug"; "unknown" for
/// Unknown (as to_string(Framework) spells its Unknown). Pure and thread-safe.
PROBE_API std::string_view to_string(EntryDirection d) noexcept;

/// How msprobe's PyTorch run_ut files a key (precheck §1.2).
struct PROBE_API RunUtKey {
  enum class Kind { Ignored, Forward, Backward, Invalid };
  Kind kind = Kind::Invalid;
  std::string full_name;  ///< key minus its last segment (Forward/Backward only)
};
/// Key contains "Module" → Ignored; contains "forward" → must end ".forward"; "backward" likewise;
/// anything else (or a misplaced direction) → Invalid, which aborts run_ut's parse.
PROBE_API RunUtKey classify_run_ut_key(std::string_view key);

/// One record of dump.json["data"], in file order.
struct PROBE_API DumpEntry {
  std::string key;
  EntryName name;
  /// The record's body: for API/module records a dict of sections (input_args, input_kwargs, output,
  /// parameters, input/output for backward, param name → [grad] for parameters_grad); debug.json records
  /// hold the saved structure itself.
  DumpNode body;
  std::optional<bool> is_recompute;

  /// Section `name` of the body, or nullptr.
  const DumpNode* section(std::string_view name) const noexcept { return body.find(name); }
  /// Positional inputs: "input_args", else "input" (MindSpore graph-mode forward, backward records).
  const DumpNode* inputs() const noexcept;
  const DumpNode* kwargs() const noexcept { return section("input_kwargs"); }
  const DumpNode* outputs() const noexcept { return section("output"); }
  /// Every tensor descriptor of the record, in file order.
  std::vector<const TensorInfo*> tensors() const;
};

/// Framework of a dump: the "framework" field, else sniffed from the tensor types (older dumps).
enum class Framework { Unknown, PyTorch, MindSpore, MindTorch };
PROBE_API std::string_view to_string(Framework f) noexcept;

/// Hard ceiling of DumpParseOptions::max_depth: keeps the recursive parse well inside a thread stack.
inline constexpr int kMaxDumpDepth = 10000;

/// Limits applied while parsing (defaults suit real dumps; tests and fuzzers lower them).
struct PROBE_API DumpParseOptions {
  /// Maximum JSON nesting depth: msprobe stops encoding at depth 400, plus a few envelope levels.
  /// Values above kMaxDumpDepth are clamped (the parser recurses once per level).
  int max_depth = 512;
};

/// A parsed dump.json (or debug.json). Tensor data stays on disk until load_tensor().
class PROBE_API Dump {
 public:
  /// Reads and parses `path`. Throws Io (unreadable) or Format (bad JSON: with line and byte offset;
  /// invalid UTF-8; too deep; wrong field types), naming the file and the field.
  static Dump open(const std::string& path, const DumpParseOptions& options = {});
  /// Parses JSON text; `path` names the source in errors and anchors dump_tensor_data/ resolution.
  static Dump parse(std::string_view json, const std::string& path, const DumpParseOptions& options = {});

  const std::string& path() const noexcept { return path_; }
  const std::string& task() const noexcept { return task_; }    ///< "statistics", "tensor", ...
  const std::string& level() const noexcept { return level_; }  ///< "L0", "L1", "mix", "debug", ...
  /// The "framework" field as written ("" when absent).
  const std::string& framework_field() const noexcept { return framework_field_; }
  /// The top-level "run_id" as written ("" when absent): the producer's run in a precheck frame's header.
  const std::string& run_id() const noexcept { return run_id_; }
  /// The field if present, else sniffed from tensor types ("mindspore.Tensor" / "torch.*").
  Framework framework() const noexcept { return framework_; }
  /// "dump_data_dir" as written; nullopt for null or absent. msprobe never reads tensors from it.
  const std::optional<std::string>& dump_data_dir() const noexcept { return dump_data_dir_; }
  /// run_ut HEAD loads real data only when dump_data_dir is a non-empty string (precheck §1.3).
  bool declares_tensor_data() const noexcept { return dump_data_dir_ && !dump_data_dir_->empty(); }

  const std::vector<DumpEntry>& entries() const noexcept { return entries_; }
  /// The entry with this key, or nullptr.
  const DumpEntry* find(std::string_view key) const noexcept;

  /// run_ut's forward and backward maps (precheck §1.2), file order; Module entries skipped.
  /// Throws Format naming the key when a key fits neither.
  struct RunUtMaps {
    std::vector<std::pair<std::string, const DumpEntry*>> forward, backward;  ///< full name → entry
  };
  RunUtMaps run_ut_maps() const;

  /// Directory holding the tensor files: <dir of dump.json>/dump_tensor_data.
  std::string tensor_dir() const;
  /// Checked path of a descriptor's file. Throws Security (naming dump.json, entry and field) when
  /// data_name is absolute, contains "..", or resolves (symlinks followed) outside tensor_dir();
  /// Io when the file is missing; InvalidArgument when the descriptor has no data_name.
  std::string tensor_path(const DumpEntry& entry, const TensorInfo& info) const;
  /// Loads a descriptor's tensor from its file (memory-mapped where possible).
  Tensor load_tensor(const DumpEntry& entry, const TensorInfo& info) const;

 private:
  friend class DumpBuilder;
  void index();
  std::string path_, task_, level_, framework_field_, run_id_;
  Framework framework_ = Framework::Unknown;
  std::optional<std::string> dump_data_dir_;
  std::vector<DumpEntry> entries_;
  std::unordered_map<std::string_view, std::size_t> by_key_;  // views of entries_[i].key, for find()
};

}  // namespace probe
