// Writing msprobe-format dumps from C++ (dump-and-compare §1): dump.json, tensor files, stack.json and
// construct.json under {dump_path}/step{N}/rank{R}/, readable by `probe run_ut`/`probe compare`, msprobe
// and Python (json + torch.load / numpy.load).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probe/dump.h"
#include "probe/export.h"
#include "probe/runner.h"
#include "probe/tensor.h"
#include "probe/value.h"

namespace probe {

/// What a dump holds per tensor: statistics only, or statistics plus the tensor file (msprobe `task`).
enum class DumpTask { Statistics, Tensor };
/// Which records are kept (msprobe `level`): L0 modules only, L1 APIs only, mix both.
enum class DumpLevel { L0, L1, Mix };

/// Where and how to dump.
struct PROBE_API DumpWriterOptions {
  std::string dump_path;                     ///< root directory; step{N}/rank{R}/ are created below (0750)
  Framework framework = Framework::PyTorch;  ///< PyTorch: torch names and .pt files; MindSpore: .npy files
  DumpTask task = DumpTask::Statistics;
  DumpLevel level = DumpLevel::L1;
  bool md5 = false;         ///< msprobe's summary_mode "md5": add the CRC-32 of each tensor's bytes
  std::optional<int> rank;  ///< nullopt: a directory named "rank" (a process that is not distributed)
  int step = 0;             ///< number of the first step directory
  bool side_files = true;   ///< also write stack.json and construct.json (msprobe always does)
  /// dump.json is rewritten (whole, atomically) after this many new records; 0 = only at flush(),
  /// next_step() and close(). msprobe's own period is 1000.
  std::size_t flush_every = 1000;
};

/// Optional facts about one record.
struct PROBE_API DumpRecordContext {
  /// Call stack, innermost frame first, each "File {path}, line {n}, in {function}, \n {source line}".
  std::vector<std::string> stack;
  /// Key of the enclosing module's forward record ("Module.layer1.Linear.forward.0"), for construct.json.
  std::optional<std::string> parent;
  std::optional<bool> is_recompute;  ///< PyTorch only; absent from the record when unset
  /// The tensors that require grad, by the path the dump names their files with: "input.0", "input.1.2"
  /// (nested), "kwargs.weight", "output.0", "parameters.weight". PyTorch records write `"requires_grad":
  /// true` for these and false for every other tensor (PyTorch's default for a new tensor); run_ut
  /// computes a bench gradient only for inputs that require one. MindSpore dumps have no such field.
  std::vector<std::string> requires_grad;
};

/// Writes one process's dump. Tensors are encoded when recorded (statistics in one pass, the file
/// written at once); dump.json, stack.json and construct.json are rewritten whole through a temporary file
/// and rename(), so after a crash each is either absent or a complete earlier version, never torn.
/// Thread-safe: records may come from several threads (each record is atomic; keys follow call order).
class PROBE_API DumpWriter {
 public:
  /// Creates the rank directory; throws Error(Io) naming it when that fails, InvalidArgument for
  /// an empty dump_path or an unsupported framework.
  explicit DumpWriter(DumpWriterOptions options);
  /// Calls close(); errors are swallowed there (call close() yourself to see them).
  ~DumpWriter();
  DumpWriter(const DumpWriter&) = delete;
  DumpWriter& operator=(const DumpWriter&) = delete;

  /// Records a forward API call of `api` ("Functional.relu", "Tensor.__add__", "Mint.add") and returns its
  /// key "Functional.relu.{k}.forward", k counting this API's calls in the step from 0. Levels L1 and mix.
  std::string api_forward(std::string_view api, const ApiCall& call, const std::vector<Value>& outputs,
                          const DumpRecordContext& context = {});
  /// Records the backward pass of forward record `forward_key` (API or module): `grad_in` are the
  /// gradients flowing in (w.r.t. the forward outputs, the record's "input"), `grad_out` those produced
  /// (w.r.t. the forward inputs, "output"). Returns the backward key. Throws InvalidArgument for a key
  /// that is not a forward key.
  std::string backward(std::string_view forward_key, const std::vector<Value>& grad_in,
                       const std::vector<Value>& grad_out, const DumpRecordContext& context = {});
  /// Records a module (MindSpore: cell) forward call: key "Module.{path}.{cls}.forward.{k}" with the
  /// module's direct parameters. Levels L0 and mix.
  std::string module_forward(std::string_view path, std::string_view cls, const ApiCall& call,
                             const std::vector<Value>& outputs,
                             const std::vector<std::pair<std::string, Tensor>>& parameters = {},
                             const DumpRecordContext& context = {});
  /// Records the gradients of a module's parameters: key "Module.{path}.{cls}.parameters_grad.{g}".
  std::string parameters_grad(std::string_view path, std::string_view cls,
                              const std::vector<std::pair<std::string, Tensor>>& grads);

  /// Rewrites dump.json (and the side files) now.
  void flush();
  /// Flushes, then starts the next step directory with call counters reset.
  void next_step();
  /// Flushes; later records throw InvalidArgument. Idempotent.
  void close();

  /// The current rank directory ({dump_path}/step{N}/rank{R}).
  std::string rank_dir() const;
  /// {rank_dir}/dump.json.
  std::string dump_json_path() const;
  /// Records written into the current step.
  std::size_t record_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// msprobe's Max/Min/Mean/Norm of a tensor as the JSON tokens it writes (§1.4.4 rules: null for empty
/// tensors, bools for bool tensors, the value itself for 0-d tensors, fp16/bf16 statistics rounded to
/// their dtype, float64/int statistics in float32), computed in one pass.
struct PROBE_API DumpStatistics {
  std::string max, min, mean, norm;
};
PROBE_API DumpStatistics dump_statistics(const Tensor& t, Framework framework = Framework::PyTorch);

/// msprobe's "md5" of a tensor (§1.4.8): CRC-32 of its bytes as 8 hex digits (MindSpore: bfloat16
/// widened to float32 first).
PROBE_API std::string dump_crc32(const Tensor& t, Framework framework = Framework::PyTorch);

}  // namespace probe
