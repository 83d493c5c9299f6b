// Internal: which dump entries run_ut checks — API name parsing (precheck §6.3, §7.1), the
// Distributed/black/white-list SKIP rules (§6.10) and config.json's run_ut section (§6.1).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace probe::rut {

/// A full API name split as msprobe does: `Torch.linalg.vector_norm.0` -> type Torch, name
/// linalg.vector_norm.
struct ApiName {
  std::string full, type, name;
  bool parsed = false;  ///< false when the segment count is not 3 or 4
};
ApiName parse_pytorch_api_name(const std::string& full);

/// white_list / black_list / error_data_path from config.json's "run_ut" section (defaults [], [], "./").
struct RunUtConfig {
  std::vector<std::string> white_list, black_list;
  std::string error_data_path;  ///< empty: the run's output directory (-o)
};
/// Reads config.json; throws probe::Error naming the file and field on bad content.
RunUtConfig load_run_ut_config(const std::string& path);

/// The PyTorch SKIP message for an API run_ut does not execute (§6.10 steps 3-5), or nullopt.
std::optional<std::string> pytorch_skip_reason(const ApiName& api, const RunUtConfig& config);

/// MindSpore §7.1: is a full name (`Mint.add.0`) checkable, and if so the PyTorch-side name the
/// bench runs (`Torch.add.0`, `Functional.relu.0`, `Tensor.add.0`). `mindtorch` = MsAdapter dumps.
std::optional<std::string> mindspore_bench_name(const std::string& full, bool mindtorch);

}  // namespace probe::rut
