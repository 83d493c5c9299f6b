// What a dump holds and whether its tensor files are usable: the library behind `probe info`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "probe/dump_layout.h"
#include "probe/export.h"

namespace probe {

/// Why one tensor descriptor of a dump cannot be used as it stands.
enum class DumpProblemKind {
  Missing,        ///< the file named by data_name does not exist
  Unreadable,     ///< the file exists but its header or container is bad
  ShapeMismatch,  ///< the file holds another shape than dump.json says
  Rejected,       ///< data_name leaves the tensor directory
  NoFile,         ///< a tensor dump descriptor without data_name (run_ut SKIPs its API)
  BadShape,       ///< the shape in dump.json is impossible (negative, overflowing)
  DtypeMismatch,  ///< the file holds another dtype than dump.json says (TensorInfo::file_dtype_fits)
};
/// "missing", "unreadable", "shape mismatch", "rejected", "no file", "bad shape", "dtype mismatch".
PROBE_API std::string_view to_string(DumpProblemKind kind) noexcept;

/// One problem, naming the record key, the descriptor's field and the details (file path, shapes).
struct PROBE_API DumpProblem {
  DumpProblemKind kind;
  std::string record, field, detail;
};

/// The summary of one rank's dump. Counts are keyed by spelling (prefix "Functional", direction
/// "forward", dtype "torch.float32", problem kind).
struct PROBE_API DumpSummary {
  RankDump where;
  std::string framework, task, level;
  std::size_t records = 0;
  std::map<std::string, std::size_t> by_prefix, by_direction, by_dtype;
  std::size_t tensors = 0, unsupported_dtype = 0;  ///< descriptors; those whose dtype probe lacks
  std::int64_t tensor_bytes = 0;                   ///< shape x itemsize of the dumped dtypes
  std::size_t files_referenced = 0, files_ok = 0;
  bool files_checked = false;
  std::map<std::string, std::size_t> problem_counts;
  std::vector<DumpProblem> problems;  ///< in dump order
  bool has_stack = false, has_construct = false;
  std::size_t stack_records = 0, stack_groups = 0, construct_nodes = 0;
  std::string stack_error, construct_error;  ///< why stack.json / construct.json did not parse
};

/// Summarises the dump of `where`. With `check_files`, each referenced tensor file is opened and its
/// header checked against dump.json (uncompressed data is mapped, not read). Throws probe::Error only
/// when dump.json itself cannot be read; every per-tensor problem is recorded instead. Thread-safe.
PROBE_API DumpSummary summarise_dump(const RankDump& where, bool check_files = true);

/// The summaries as one JSON object {"path": path, "ranks": [...]} (the `probe info --json` format).
PROBE_API std::string dump_summaries_json(const std::string& path, const std::vector<DumpSummary>& ranks);

}  // namespace probe
