// Internals of `compare`: the flattened rows ("op items") of a dump and the matching of NPU to bench rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/construct.h"
#include "probe/dump.h"
#include "probe/dump_compare.h"
#include "probe/stack.h"

namespace probe::dump_compare_detail {

enum class RowState { Input, Output, Parameters, ParametersGrad, Debug };

/// A row's verdict in the Result column of the statistics and md5 compares (§3.6, §3.7). Not
/// probe::Status: msprobe's vocabulary here is its own ("Different", a blank for no warning).
enum class RowResult {
  Pass,       ///< md5: the checksums are equal
  Warning,    ///< statistics: a relative difference above the warning ratio
  Different,  ///< md5: the checksums differ
  Unmatched,  ///< no bench row
  None,       ///< statistics: nothing to report
};

/// msprobe's spelling of a Result cell: "pass", "Warning", "Different", "N/A", "" (the one table).
constexpr std::string_view to_string(RowResult r) noexcept {
  constexpr std::string_view kText[] = {"pass", "Warning", "Different", "N/A", ""};
  static_assert(std::size(kText) == static_cast<std::size_t>(RowResult::None) + 1);
  return kText[static_cast<std::size_t>(r)];
}

/// Whether the advisor reports a row with this Result.
constexpr bool is_suspect(RowResult r) noexcept {
  return r == RowResult::Warning || r == RowResult::Different;
}

/// A Max/Min/Mean/Norm cell: its text as msprobe shows it, and its value when Python would see a number
/// (int or float, not bool; NaN shows as "Nan" but still counts as a number).
struct StatCell {
  std::string text = "None";
  bool numeric = false;
  bool integer = false;  ///< a Python int (int - int stays an int)
  double value = 0;
};

/// One leaf row of an entry (§3.3).
struct OpItem {
  std::string name;       ///< row name (data_name minus extension when a file exists)
  std::string entry_key;  ///< api_origin_name
  RowState state = RowState::Input;
  std::string dtype = "None", shape = "None";
  StatCell stats[4];                  ///< Max, Min, Mean, Norm
  std::string requires_grad = "N/A";  ///< "True" / "False" / "N/A"
  std::string md5 = "N/A";
  std::string data_name = "-1";
  const DumpEntry* entry = nullptr;
  const TensorInfo* tensor = nullptr;  ///< for real-data loading
  bool first_of_entry = false;
  const std::vector<std::string>* stack = nullptr;  ///< frames, first row of an entry only
  std::string p2p_op = "None", p2p_peer = "None";   ///< a torch.distributed.P2POp leaf's op and peer
};

/// Flattens every entry of `dump` in file order (rows of one entry reordered: inputs, parameters, outputs,
/// parameters_grad). `stack` may be null.
std::vector<OpItem> flatten_dump(const Dump& dump, const StackInfo* stack);

/// Python repr of a str ('abc', "it's", with \n escapes).
std::string python_str_repr(std::string_view s);
/// Python repr of a list of str.
std::string python_list_repr(const std::vector<std::string>& items);
/// zlib CRC-32 of text as 8 lowercase hex digits.
std::string crc32_hex(std::string_view text);

/// Key used by fuzzy matching: the call counter dropped (§3.4.2).
std::string fuzzy_key(std::string_view name);

/// Flat {key: value} mapping from a YAML (simple subset) or JSON file; throws Io / Format naming the line.
std::vector<std::pair<std::string, std::string>> read_flat_mapping(const std::string& path);

/// One record of an -am file (§3.4.3): ms_api's argument/output/parameter indices paired with pt_api's.
struct ApiMapRecord {
  std::string ms_api, pt_api;             ///< two-part names, "Functional.flash_attention_score"
  std::vector<std::string> ms[4], pt[4];  ///< args, outputs, parameters, parameters_grad (scalars as written)
};
/// Reads an -am file: a list of records, or one record as the whole file. Throws Io / Format (file + line).
std::vector<ApiMapRecord> read_api_mapping(const std::string& path);
/// The built-in MindSpore -> PyTorch API name table (flat YAML, data/ms_to_pt_api.yaml).
std::map<std::string, std::string> read_ms_to_pt_table(const std::string& path);

/// A dump.json entry placed in the layer tree (§3.4.5).
struct LayerItem {
  std::string key;                 ///< the entry key
  std::string api_type, api_name;  ///< "Cell"/"Functional"/..., attribute or API name
  std::string type_name;           ///< class (layers) or API name: the tree node's type
  std::string state;               ///< forward / backward / parameters_grad
  std::string full_scope;          ///< layer scope [+ framework function] + api_name, dot-separated
};
/// Items of every entry in dump order, backward entries scoped like their forward entry, layer numbers under
/// ParallelTransformer.layers rebased to 0. `mindspore`: how the stack is read. Throws Format on short keys.
std::vector<LayerItem> layer_items(const Dump& dump, const StackInfo& stack, const ConstructInfo& construct,
                                   bool mindspore);
/// NPU entry key -> bench entry key ("N/A" when none), in NPU order; `yaml_file` "" = identity mapping.
std::vector<std::pair<std::string, std::string>> layer_entry_mapping(const std::vector<LayerItem>& npu,
                                                                     const std::vector<LayerItem>& bench,
                                                                     const std::string& yaml_file);
/// The whole -lm data mapping (NPU row -> bench row or "N/A") from stack.json/construct.json beside each
/// dump.json. Throws Io when one of them is missing, Format when construct.json is empty.
std::map<std::string, std::string> layer_data_mapping(const Dump& npu, const Dump& bench, bool npu_mindspore,
                                                      bool bench_mindspore,
                                                      const std::vector<OpItem>& npu_rows,
                                                      const std::vector<OpItem>& bench_rows,
                                                      const std::string& yaml_file);

/// Matching configuration derived from the options.
struct MatchConfig {
  bool fuzzy = false;
  bool cross_framework = false;  ///< NPU MindSpore vs bench PyTorch
  bool api_mapping = false, cell_mapping = false;
  std::map<std::string, std::string> ms_to_pt;  ///< -am built-in table (beyond Mint/MintFunctional)
  std::vector<ApiMapRecord> api_records;        ///< -am file
  std::map<std::string, std::string> cell_map;  ///< -cm file
  bool data_mapping = false;
  std::map<std::string, std::string> data_map;  ///< -dm file
};

/// For each NPU row, the index of its bench row or nullopt, and whether the pair was matched fuzzily
/// under different names.
struct MatchResult {
  std::vector<std::optional<std::size_t>> bench;
};
MatchResult match_rows(const std::vector<OpItem>& npu, const std::vector<OpItem>& bench,
                       const MatchConfig& cfg);

/// Per-row facts that -da (find first diff, §3.12) needs beyond the table cells.
struct RowFacts {
  RowState state = RowState::Input;
  std::string entry_key;
  std::string npu_op = "None", npu_peer = "None", bench_op = "None", bench_peer = "None";
  std::vector<std::string> stack;  ///< the entry's frames on its first row (when a stack exists)
};
/// What a compare judges with and how it reports and stops (compare_dump_files' caller-given arguments).
struct CompareControl {
  DumpCompareThresholds thresholds;
  const DumpCompareProgressFn* progress = nullptr;  ///< not null: called after each block of entries
  std::stop_token stop;
};
/// compare_dump_files for -da: `statistics_only` compares tensor dumps by their recorded statistics (no
/// tensor files read); `facts`, when not null, receives one RowFacts per table row.
DumpCompareTable compare_dump_files_ex(const std::string& npu_json, const std::string& bench_json,
                                       const std::string& stack_json, const DumpCompareOptions& options,
                                       bool statistics_only, std::vector<RowFacts>* facts,
                                       const CompareControl& control = {});

/// A rank* directory of a step directory; index -1 for "rank" without a number.
struct RankDir {
  std::string name;
  long long index = -1;
};
/// The rank* directories of a step directory sorted by number; throws InvalidArgument on anything else.
std::vector<RankDir> rank_dirs(const std::string& step_dir);

}  // namespace probe::dump_compare_detail
