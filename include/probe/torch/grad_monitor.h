// probe::torch::GradMonitor: msprobe's gradient monitoring (task grad_probe, docs/zh/17.grad_probe.md) for a
// LibTorch training loop. Before each optimizer step it writes, per parameter with a gradient, msprobe's
// statistics row to {dump_path}/rank{R}/grad_summary_{step}.csv and, at levels L1 and L2, the gradient's
// direction (grad > 0, a bool .npy) to {dump_path}/rank{R}/step{step}/{param}.npy: the layout `probe
// grad_compare` and msprobe's GradComparator read. Part of probe_torch; includes no LibTorch header.
//
// Thread safety: one GradMonitor per training loop; its calls are not synchronised.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "probe/export.h"

namespace at {
class Tensor;
}
namespace torch::nn {
class Module;
}

namespace probe::torch {

/// msprobe's grad_probe configuration (config.json: dump_path, rank, step, grad_probe.{grad_level,
/// param_list, bounds}).
struct PROBE_API GradMonitorConfig {
  std::string dump_path = "./dump_path";
  /// L0: MD5 (msprobe's: CRC-32 of the float32 bytes), max, min, norm, shape; L1: max, min, norm, shape and
  /// the direction; L2: the shares of elements in the intervals cut by `bounds` and "=0" first.
  std::string grad_level = "L1";
  std::vector<std::string> param_list;  ///< names as named_parameters() gives them; empty: all
  /// Strictly ascending interval bounds (L2). An integral value is written as an int ("-1"), as msprobe
  /// writes a JSON int; any other as Python's repr ("0.05").
  std::vector<double> bounds{-1, 0, 1};
  std::vector<std::int64_t> rank;  ///< ranks that write; empty: all
  std::vector<std::int64_t> step;  ///< optimizer steps (0-based) that write; empty: all
};

class PROBE_API GradMonitor {
 public:
  /// Throws probe::Error (InvalidArgument, naming the field) for an unknown level or bounds not strictly
  /// ascending. Creates dump_path.
  explicit GradMonitor(GradMonitorConfig config, std::int64_t rank = 0);
  ~GradMonitor();
  GradMonitor(const GradMonitor&) = delete;
  GradMonitor& operator=(const GradMonitor&) = delete;

  /// Watches the parameters of `model` (named_parameters(), recursively), in their order.
  void monitor(const ::torch::nn::Module& model);
  /// Call right before optimizer.step() (msprobe hooks the optimizer's pre-step): counts the step and, when
  /// this rank and step are selected, writes the step's files. Returns whether it wrote.
  bool before_optimizer_step();
  /// The step counted last (-1 before the first call).
  std::int64_t step() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// grad_summary's header row at `level` ("param_name", then the level's columns).
PROBE_API std::vector<std::string> grad_summary_header(const std::string& level,
                                                       const std::vector<double>& bounds);
/// One parameter's grad_summary row, the cells as msprobe's csv writer writes them.
PROBE_API std::vector<std::string> grad_summary_row(const std::string& param_name, const std::string& level,
                                                    const at::Tensor& grad,
                                                    const std::vector<double>& bounds);

}  // namespace probe::torch
