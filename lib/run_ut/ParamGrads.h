// Internal: run_ut's check of the weight gradients msprobe records per module (`parameters_grad` entries of
// `mix` and `L0` PyTorch dumps), DECISIONS D17.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "probe/construct.h"
#include "probe/dump.h"
#include "probe/precision_standard.h"
#include "probe/runner.h"
#include "run_ut/RowFormat.h"

namespace probe::rut {

/// DECISIONS D17: checks each dumped parameter gradient against the float64 bench gradient of that
/// parameter summed over the dumped APIs that took it inside the module's calls of the step. Built once
/// per run; check() is const and safe to call from several threads.
class ParamGradChecker {
 public:
  /// Indexes `dump` and the construct.json beside it (a missing or unreadable construct.json makes every
  /// row SKIP with the reason). `dump`, `registry` and `standards` must outlive the checker.
  ParamGradChecker(const Dump& dump, const RunnerRegistry& registry, const Standards& standards);

  /// The parameters_grad entries, in dump order: their keys are the names of the rows check() writes.
  const std::vector<const DumpEntry*>& entries() const noexcept { return entries_; }

  /// The rows of one parameters_grad entry: a result row whose Forward cell is blank and whose Backward
  /// cell is the entry's verdict, and one details row `<entry key>.<parameter>` per parameter. Never
  /// throws: a parameter that cannot be checked is SKIP with the reason.
  ApiRows check(const DumpEntry& entry) const;

 private:
  struct ParamVerdict;
  ParamVerdict check_param(const DumpEntry& entry, const std::string& module, const std::string& param,
                           const DumpNode& grad) const;

  const Dump& dump_;
  const RunnerRegistry& registry_;
  const Standards& standards_;
  std::optional<ConstructInfo> construct_;
  std::string construct_problem_;  // why construct.json could not be used ("" when it can)
  std::vector<const DumpEntry*> entries_;
  std::map<std::string, std::vector<const DumpEntry*>> calls_;     // module -> its forward entries
  std::map<std::string, std::size_t> grad_entries_;                // module -> parameters_grad entries
  std::map<std::string, const DumpEntry*> grad_entry_of_;          // module -> its (last) such entry
  std::map<std::string, std::vector<const DumpEntry*>> children_;  // module call -> API forward entries
  // API forward entries by "dtype shape" of a tensor input that requires grad: the candidates for a use of
  // a parameter anywhere in the dump.
  struct Input {
    const DumpEntry* api;
    std::string path;
    const TensorInfo* info;
  };
  std::map<std::string, std::vector<Input>> grad_inputs_;
};

}  // namespace probe::rut
