// Internal: run_ut's result/details CSV files, their names and headers, and resuming into them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "probe/csv.h"
#include "probe/error.h"
#include "probe/run_ut.h"
#include "probe/status.h"
#include "run_ut/RowFormat.h"
#include "support/FileOps.h"

namespace probe::rut {

struct OutputPaths {
  std::string result, details;
  std::string timestamp;  ///< the 14 digits of the result file name
};

/// `<out>/accuracy_checking_{result,details}_<ts>.csv`; creates `out_dir` (0750) if missing.
OutputPaths new_output_paths(const std::string& out_dir, const std::string& timestamp);
/// Validates a -csv_path result file (name pattern, regular writable file) and finds its details file (which
/// may be missing only beside an empty result file: a run killed between creating the two).
OutputPaths resume_output_paths(const std::string& result_csv);

/// Claims the pair of files for this run and returns the flock on the result file, held until the
/// returned object dies. A new run creates both files with O_EXCL and gets an unopened LockedFile when
/// either exists, so two runs never share a file; a resume opens the existing ones (throws Io when
/// another run holds the lock) and creates a details file missing beside an empty result file.
detail::LockedFile claim_outputs(const OutputPaths& paths, bool resume);
/// The error of a new run whose file names are taken.
Error outputs_exist_error(const OutputPaths& paths);

/// What an earlier, possibly killed, run left in the files.
struct ResumeState {
  std::unordered_set<std::string> done;  ///< full API names with a result row
  /// (forward, backward) per result row; nullopt for a blank cell.
  std::vector<std::pair<std::optional<Status>, std::optional<Status>>> statuses;
  std::size_t next = 0;  ///< index in the dump's API list of the first API still to check
};

/// Reads the result and details files of an interrupted run and repairs what a kill can leave:
/// a torn last record is cut off, details rows of APIs without a result row are dropped, and result
/// rows whose details rows are missing are dropped (those APIs are checked again), so that continuing
/// gives the same files as an uninterrupted run. The result rows must be `apis` in order (PyTorch: a
/// prefix; MindSpore, which writes no row for an API with nothing to compare: an ordered subsequence):
/// throws Format naming the row otherwise (a file of another dump, a foreign header, garbage,
/// duplicates). Call with the claim_outputs lock held.
ResumeState load_and_repair(const OutputPaths& paths, const RunUtLayout& format,
                            const std::vector<std::string>& apis);

/// True when the result file holds anything after its header line (a verdict a resume would keep).
bool result_has_rows(const OutputPaths& paths);

/// Full API name of a details row name (`<full>.forward.output.3` -> `<full>`).
std::string full_name_of_details_row(const std::string& row_name);

/// Appends API row groups: details rows first, then the result row, each flushed, so a kill
/// leaves at most one API half-written (repaired by load_and_repair).
/// With `journal`, each API's rows are followed by a checkpoint in the run record (RunRecord.h), which
/// must exist.
class RunJournal;
class OutputWriter {
 public:
  OutputWriter(const OutputPaths& paths, const RunUtFormat& format, bool journal = false);
  ~OutputWriter();
  void write(const ApiRows& rows);

 private:
  const RunUtFormat& format_;
  std::string histograms_path_;
  std::unique_ptr<CsvWriter> details_, result_, histograms_;  // histograms_: opened at the first one
  std::unique_ptr<RunJournal> journal_;
};

}  // namespace probe::rut
