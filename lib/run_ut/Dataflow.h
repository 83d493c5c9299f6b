// The dataflow of a tensor dump (DECISIONS D16): which earlier API output each forward input tensor is,
// and the check of the gradient that flows into such a tensor. msprobe records an API's backward at the
// autograd node of its first output; for composite APIs (a 3-D linear, an N-D matmul, cross_entropy)
// that node is inside the API, so the dumped gradient says nothing about the gradients the API passes
// to its inputs. The producer of an input records the sum of those gradients over all its consumers:
// its dumped backward input. That sum is checked here, with the bench gradient of the consumers whose
// own gradient is unknown and the device gradient the others recorded.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "probe/dump.h"
#include "probe/runner.h"
#include "probe/status.h"
#include "run_ut/RowFormat.h"

namespace probe::rut {

/// Where torch's matmul / F.linear record their last autograd node when it is a reshape of the GEMM's
/// result, from the ranks of the first two inputs (-1: not a tensor); nullopt when the node is the GEMM.
std::optional<std::string> reshape_node(const std::string& api_name, std::int64_t rank0, std::int64_t rank1);

/// DECISIONS D7/D7a: why the dumped gradient of `full` is not taken with respect to its inputs (the node
/// msprobe hooks is the last operation inside the API); nullopt for APIs whose node is their own.
std::optional<std::string> composite_backward_reason(const std::string& api_name, std::int64_t rank0,
                                                     std::int64_t rank1, const std::string& full);

/// The float64 bench gradient of an API with respect to one positional input, from the API's dumped
/// forward call and the gradients that flowed into its outputs (its dumped backward input), with D14's
/// magnitude bench and accumulation length of that gradient when D14 bounds the API's backward.
struct BenchInputGradient {
  Tensor grad;                      ///< float64
  std::optional<Tensor> magnitude;  ///< the bench backward on |inputs| and |gradients|; none: |grad|
  std::int64_t accumulation = 1;    ///< terms summed into one element
  double own_ulps = 0;              ///< the family's own error, in units of the accumulation roundoff
  std::string family;               ///< the D14 family that bounds it
};
/// Throws probe::Error (Unsupported) naming the API when the runner has no gradient for `path` or D14
/// has no bound for the API's backward.
BenchInputGradient bench_input_gradient(const RunnerRegistry& registry, Framework framework,
                                        const std::string& runner_api, const ApiCall& call,
                                        const std::vector<Value>& grads_in, const std::string& path);

/// What the check reads from the dump besides the graph: implemented by run_ut's checker, which knows how
/// dumped arguments become values.
class DataflowAccess {
 public:
  virtual ~DataflowAccess() = default;
  /// The dumped forward call of `full` (tensors from their files).
  virtual ApiCall dumped_call(const std::string& full, const DumpEntry& forward) const = 0;
  /// The dumped backward input of `full` (the gradients of its outputs).
  virtual std::vector<Value> dumped_grads_in(const std::string& full, const DumpEntry& backward) const = 0;
  /// The device gradient `full` passed to its positional input `path`, from its dumped backward entry;
  /// nullopt with `why` when the entry does not say it.
  virtual std::optional<Tensor> dumped_input_grad(const std::string& full, const DumpEntry& forward,
                                                  const DumpEntry& backward, const std::string& path,
                                                  std::string& why) const = 0;
};

/// The producer -> consumers graph of one tensor dump, built once before the API loop (the pre-pass),
/// and the per-tensor gradient checks, each computed once when the first consumer that reports it asks.
class Dataflow {
 public:
  struct Stats {
    std::size_t tensors_hashed = 0;
    std::uint64_t bytes_hashed = 0;
    std::size_t links = 0, ambiguous = 0, checked_tensors = 0;
    double seconds = 0;
  };

  /// `forward` and `backward`: the dump's API entries by full name, in dump order.
  Dataflow(const Dump& dump, const std::vector<std::pair<std::string, const DumpEntry*>>& forward,
           const std::vector<std::pair<std::string, const DumpEntry*>>& backward,
           const RunnerRegistry& registry, Framework framework);
  ~Dataflow();

  /// The verdict `full`'s backward rows carry: the checks of the tensors it consumes whose gradient it
  /// is one of the unknown contributions of; nullopt when it reports none. Thread-safe.
  std::optional<DataflowVerdict> verdict(const std::string& full, const DataflowAccess& access) const;

  const Stats& stats() const noexcept { return stats_; }
  /// Wall time spent in the per-tensor checks so far (summed over threads).
  double check_seconds() const noexcept { return static_cast<double>(check_ns_.load()) * 1e-9; }

 private:
  struct Slot;
  struct Group;
  DataflowVerdict check(const Group& group, const DataflowAccess& access) const;

  const Dump& dump_;
  const RunnerRegistry& registry_;
  Framework framework_;
  std::vector<std::pair<std::string, const DumpEntry*>> forward_;
  std::map<std::string, const DumpEntry*> backward_;
  std::vector<Group> groups_;
  std::map<std::string, std::vector<std::size_t>> reports_;  ///< consumer -> groups it reports
  std::map<std::string, std::vector<std::string>> notes_;    ///< consumer -> why an input is not linked
  mutable std::mutex mutex_;
  mutable std::map<std::size_t, std::shared_future<DataflowVerdict>> done_;
  Stats stats_;
  mutable std::atomic<std::int64_t> check_ns_{0};
};

}  // namespace probe::rut
