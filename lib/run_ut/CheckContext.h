// What the checks of one run share: where an API's tensors come from and the run's read-only context
// (framework, registry, standards, options, the backward entries), and the device runner's failure that
// makes an API `error`.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "probe/dump.h"
#include "probe/precheck_frame.h"
#include "probe/precision_standard.h"
#include "probe/run_ut.h"
#include "probe/runner.h"
#include "run_ut/ApiSelection.h"
#include "run_ut/Dataflow.h"
#include "run_ut/RowFormat.h"

namespace probe::rut {

// Where one API's tensors come from: the dump's tensor files, or the blobs of a record received whole
// (online pre-check, probe/run_ut_stream.h). `dump` is the dump (or the record's one-entry header) whose
// task says whether a tensor without data may be generated from its statistics.
struct TensorSource {
  const Dump* dump = nullptr;
  const online::Frame* record = nullptr;
  Tensor load(const DumpEntry& entry, const TensorInfo& info) const {
    return record ? record->tensor(info) : dump->load_tensor(entry, info);
  }
};

// Everything one run shares between worker threads (read-only except the byte counter).
struct Context {
  const Dump* dump = nullptr;
  Framework framework = Framework::PyTorch;
  Framework runner_fw = Framework::PyTorch;
  bool mindtorch = false;
  const RunnerRegistry* registry = nullptr;
  RunUtConfig config;
  const Standards* standards = nullptr;
  const RunUtFormat* format = nullptr;  // the checker's rows, picked once from `framework`
  const RunUtOptions* options = nullptr;
  std::map<std::string, const DumpEntry*> backward;
  const Dataflow* dataflow = nullptr;  // DECISIONS D16: the dump's dataflow (probe profile, tensor dumps)
  bool statistics_dump_with_files = false;  // some tensors real, the rest generated from statistics
  std::string error_data_dir;
  mutable std::atomic<std::uint64_t> bytes{0};
  mutable std::mutex error_dir_mutex;
  mutable bool error_dir_made = false;
  mutable std::size_t error_data_failures = 0;  // guarded by error_dir_mutex
  mutable std::string error_data_problem;       // the first failure, guarded by error_dir_mutex
};

/// Whether the device side is the dumped output (when it has its files) rather than the device runner.
inline bool use_dumped_device(const Context& ctx) { return ctx.options->device_side == DeviceSide::Auto; }

// DECISIONS D22: a device runner that failed (anything but Error(Unsupported), its "cannot evaluate this
// call") makes the API `error` with the failure's text, never SKIP, so that a gate counting errors fails on
// a crashing kernel. The bench side's failures stay SKIP: they say nothing about the device.
struct DeviceRunnerFailure {
  std::string direction, what;
  std::string message() const { return "the device runner failed in the " + direction + ": " + what; }
};

}  // namespace probe::rut
