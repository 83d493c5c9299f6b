// Internals of `compare`: the flattened rows ("op items") of a dump and the matching of NPU to bench rows.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/dump.h"
#include "probe/dump_compare.h"
#include "probe/stack.h"

namespace probe::dump_compare_detail {

enum class RowState { Input, Output, Parameters, ParametersGrad, Debug };

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

/// Matching configuration derived from the options.
struct MatchConfig {
  bool fuzzy = false;
  bool cross_framework = false;  ///< NPU MindSpore vs bench PyTorch
  bool api_mapping = false, cell_mapping = false;
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

}  // namespace probe::dump_compare_detail
