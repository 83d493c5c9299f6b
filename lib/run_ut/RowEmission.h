// The rows of one checked API: the outputs the row format compares (with D14's error-bound inputs,
// D15's exact rules and D16's dataflow verdict), the note on inputs generated from statistics, and the
// error data -save_error_data writes for a failing API.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probe/dump.h"
#include "probe/runner.h"
#include "run_ut/CheckContext.h"
#include "run_ut/Dataflow.h"
#include "run_ut/RowFormat.h"
#include "run_ut/ValueBuilder.h"

namespace probe::rut {

/// What the check of one API computed, handed to emit_rows.
struct CheckedApi {
  std::string full, api_name, runner_api;
  const DumpEntry* entry = nullptr;
  const ApiCall* call = nullptr;
  const ValueBuilder* inputs = nullptr;  ///< how the forward's arguments were built (generated fields)
  bool inputs_as_dumped = false;         ///< no argument was generated from statistics
  bool has_backward_entry = false;       ///< the dump holds this API's backward entry
  std::vector<Value> bench, device;
  std::string backward_message;  ///< why the backward is not run at all; "" when it is
  std::string backward_skip;     ///< why the backward that ran was not compared; "" when it was
  bool have_grads = false;
  std::vector<Value> grads_in, bench_grads, device_grads;
  std::vector<std::string> backward_notes;
  std::optional<ExactRule> exact_backward;
  std::optional<DeviceRunnerFailure> device_backward_failure;
};

/// The rows of one API from what its check computed; `flow` reads the dumped values D16's dataflow
/// check needs. Saving error data is a by-product: its failures go to the context, never to the verdict.
ApiRows emit_rows(const Context& ctx, CheckedApi& api, const DataflowAccess& flow);

}  // namespace probe::rut
