// Internal: run_ut's per-API check applied to records received whole (online pre-check) instead of the
// entries of a dump file: the same ApiChecker, so the same verdicts and rows (probe/run_ut_stream.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "probe/precheck_frame.h"
#include "probe/run_ut.h"
#include "run_ut/OutputFiles.h"

namespace probe::rut {

class RecordChecker {
 public:
  /// `framework` decides the checker (PyTorch or MindSpore); `error_data_dir` is where -save_error_data
  /// writes (unused when options.save_error_data is off). Everything given must outlive the checker.
  RecordChecker(const RunUtOptions& options, Framework framework, const RunnerRegistry& registry,
                const Standards& standards, std::string error_data_dir);
  ~RecordChecker();
  RecordChecker(const RecordChecker&) = delete;
  RecordChecker& operator=(const RecordChecker&) = delete;

  /// The full API name a record is checked under ("Functional.relu.0"), or nullopt for a record offline
  /// run_ut would not check on its own (module, backward or unparseable keys; MindSpore APIs without a
  /// bench).
  std::optional<std::string> api_of(const online::Frame& record) const;
  /// The rows of one record, exactly as run_ut writes them for the same dump entry with its tensor files.
  /// Thread-safe; per-API problems become SKIP rows.
  ApiRows check(const std::string& full, const online::Frame& record) const;

  std::uint64_t tensor_bytes() const;
  /// Error data: the directory if anything was written, failures and the first problem.
  std::string error_data_dir_written() const;
  std::size_t error_data_failures() const;
  std::string error_data_problem() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace probe::rut
