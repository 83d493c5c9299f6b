// Internal: which dump entries run_ut checks — API name parsing (precheck §6.3, §7.1), the
// Distributed/black/white-list SKIP rules (§6.10) and config.json's run_ut section (§6.1).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probe/api_name.h"

namespace probe::rut {

/// white_list / black_list / error_data_path from config.json's "run_ut" section (defaults [], [], "./").
struct RunUtConfig {
  std::vector<std::string> white_list, black_list;
  std::string error_data_path;  ///< empty: the run's output directory (-o)
};
/// Reads config.json; throws probe::Error naming the file and field on bad content.
RunUtConfig load_run_ut_config(const std::string& path);

/// The PyTorch SKIP message for the API `full` (parsed: `api`) run_ut does not execute (§6.10 steps 3-5), or
/// nullopt. A name not in run_ut's form (ApiName::run_ut_form) is not executed.
std::optional<std::string> pytorch_skip_reason(const std::string& full, const std::optional<ApiName>& api,
                                               const RunUtConfig& config);

/// MindSpore §7.1: is a full name (`Mint.add.0`) checkable, and if so the PyTorch-side name the
/// bench runs (`Torch.add.0`, `Functional.relu.0`, `Tensor.add.0`). `mindtorch` = MsAdapter dumps.
std::optional<std::string> mindspore_bench_name(const std::string& full, bool mindtorch);

}  // namespace probe::rut
