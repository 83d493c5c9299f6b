// The check of one API (run_ut's per-API flow): which APIs are checked, its arguments built, the bench
// and the device side run, the backward mapped and the rows emitted (ValueBuilder.h, BackwardMapping.h,
// RowEmission.h). Also the dumped values D16's dataflow check reads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probe/dump.h"
#include "probe/runner.h"
#include "run_ut/CheckContext.h"
#include "run_ut/Dataflow.h"
#include "run_ut/RowFormat.h"

namespace probe::rut {

class ApiChecker final : public DataflowAccess {
 public:
  explicit ApiChecker(const Context& ctx) : ctx_(ctx) {}

  // DataflowAccess (DECISIONS D16): the dumped values the dataflow check reads, built as the API's own
  // check builds them.
  ApiCall dumped_call(const std::string& full, const DumpEntry& forward) const override;
  std::vector<Value> dumped_grads_in(const std::string& full, const DumpEntry& backward) const override;
  std::optional<Tensor> dumped_input_grad(const std::string& full, const DumpEntry& forward,
                                          const DumpEntry& backward, const std::string& path,
                                          std::string& why) const override;

  /// The rows of API `full` (its dump entry, its tensors from `src`); every per-API problem becomes a
  /// SKIP row, a failing device runner an `error` row (DECISIONS D22).
  ApiRows check(const std::string& full, const DumpEntry& entry, const TensorSource& src) const;

 private:
  ApiRows skip(const std::string& full, const std::string& message) const;
  ApiRows run(const std::string& full, const std::string& api_name, const std::string& runner_api,
              const DumpEntry& entry, const TensorSource& src) const;

  const Context& ctx_;
};

}  // namespace probe::rut
