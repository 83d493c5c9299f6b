#include "run_ut/Engine.h"

#include <filesystem>

#include "support/WorkerPool.h"

namespace probe::rut {

Status run_ut_outcome_impl(std::optional<Status> fwd, std::optional<Status> bwd) {
  if (fwd == Status::Error || bwd == Status::Error) return Status::Error;
  if (fwd == Status::Warning || bwd == Status::Warning) return Status::Warning;
  // A forward SKIP means nothing was checked; a backward-only SKIP after a passing forward is a pass.
  if (fwd == Status::Skip || (!fwd && (!bwd || bwd == Status::Skip))) return Status::Skip;
  return Status::Pass;
}

namespace {

// Thrown inside the worker pool to stop it when the caller requested a stop; never leaves run_engine.
struct Cancelled {};

}  // namespace

void count(RunUtSummary& s, std::optional<Status> fwd, std::optional<Status> bwd) {
  ++s.apis;
  if (fwd == Status::Error) ++s.forward_error;
  if (bwd == Status::Error) ++s.backward_error;
  if (bwd == Status::Skip && fwd != Status::Skip) ++s.backward_skip;
  std::size_t* const by_status[] = {&s.pass, &s.warning, &s.error, &s.skip};  // in Status order
  ++*by_status[static_cast<std::size_t>(run_ut_outcome_impl(fwd, bwd))];
}

ResumeState open_outputs(const std::vector<std::string>& apis, const EngineConfig& config,
                         const RunUtFormat& format) {
  // The run record (RunRecord.h): a resume first proves the files are this run's, before repairing them.
  bool new_record = config.fingerprint && !config.resume;
  if (config.fingerprint && config.resume) {
    std::error_code ec;
    if (std::filesystem::exists(run_record_path(config.paths), ec)) {
      verify_and_rewind(config.paths, *config.fingerprint);
    } else if (result_has_rows(config.paths) && !config.resume_foreign) {
      throw Error(ErrorKind::InvalidArgument,
                  "cannot resume: no run record (" +
                      std::filesystem::path(run_record_path(config.paths)).filename().string() +
                      ") beside the result file, so nothing proves its rows belong to this dump and these "
                      "options (msprobe or an older probe wrote it); pass --resume_foreign "
                      "(RunUtOptions::resume_foreign) to continue it, its rows checked only against the "
                      "dump's API names",
                  config.paths.result, "-csv_path");
    } else {
      new_record = true;  // no row kept unproven, or the caller vouches for the rows
    }
  }
  ResumeState resumed;
  // DECISIONS D4: both frameworks skip the APIs already in the result file (msprobe's MindSpore
  // checker re-runs everything and appends duplicates).
  if (config.resume) resumed = load_and_repair(config.paths, format, apis);
  if (new_record) create_run_record(config.paths, *config.fingerprint, config.resume);

  return resumed;
}

RunUtSummary run_engine(const std::vector<std::string>& apis,
                        const std::function<ApiRows(std::size_t)>& check, const EngineConfig& config,
                        const RunUtProgressFn& progress, const std::atomic<std::uint64_t>* tensor_bytes,
                        std::stop_token stop) {
  if (config.group && config.group->size() > 1)
    return run_engine_ranks(apis, check, config, progress, tensor_bytes, std::move(stop));
  RunUtSummary summary;
  summary.result_csv = config.paths.result;
  summary.details_csv = config.paths.details;
  // Held to the end of the run: no second run writes into these files meanwhile.
  detail::LockedFile lock;
  if (!config.outputs_claimed) {
    lock = claim_outputs(config.paths, config.resume);
    if (!config.resume && !lock.is_open()) throw outputs_exist_error(config.paths);
  }
  const RunUtFormat& format = run_ut_format(config.framework);
  const ResumeState resumed = open_outputs(apis, config, format);
  for (const auto& [f, b] : resumed.statuses) count(summary, f, b);

  std::vector<std::size_t> todo;
  todo.reserve(apis.size());
  for (std::size_t i = resumed.next; i < apis.size(); ++i) todo.push_back(i);
  std::size_t total = apis.size();
  std::size_t done = total - todo.size();

  OutputWriter writer(config.paths, format, config.fingerprint.has_value());
  auto report = [&] {
    if (!progress) return;
    RunUtProgress p;
    p.done = done;
    p.total = total;
    p.tensor_bytes = tensor_bytes ? tensor_bytes->load() : 0;
    progress(p);
  };
  report();
  // A window of a few APIs per thread keeps workers busy past one slow API without holding
  // many APIs' tensors in memory.
  std::size_t window = static_cast<std::size_t>(config.threads) * 4;
  try {
    if (stop.stop_requested()) throw Cancelled{};
    detail::ordered_parallel<ApiRows>(
        todo.size(), config.threads, window,
        [&](std::size_t k) {
          if (stop.stop_requested()) throw Cancelled{};
          return check(todo[k]);
        },
        [&](std::size_t, ApiRows&& rows) {
          writer.write(rows);
          if (rows.result) {
            count(summary, rows.result->forward, rows.result->backward);
            ++summary.checked;
          }
          ++done;
          report();
          // Checked once the API's rows are complete on disk, so a resume continues exactly here.
          if (stop.stop_requested() && done < total) throw Cancelled{};
        });
  } catch (const Cancelled&) {
    summary.cancelled = true;
  }
  if (tensor_bytes) summary.tensor_bytes = tensor_bytes->load();
  return summary;
}

}  // namespace probe::rut

namespace probe {
Status run_ut_api_outcome(std::optional<Status> forward, std::optional<Status> backward) {
  return rut::run_ut_outcome_impl(forward, backward);
}
}  // namespace probe
