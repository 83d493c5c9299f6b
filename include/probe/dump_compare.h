// `compare`: msprobe's offline accuracy compare of an NPU dump against a bench dump (dump-and-compare §3):
// rows flattened from both dump.json files, matched by name (exact, fuzzy or mapped), compared by real
// data, statistics or md5 (CRC-32), judged, highlighted, and written as CSV plus xlsx.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "probe/distributed.h"
#include "probe/dump.h"
#include "probe/export.h"
#include "probe/precision_standard.h"

namespace probe {

/// What the dumps hold, which decides the columns (§3.2).
enum class DumpCompareMode { RealData, Statistics, Md5 };
/// "all", "summary", "md5" (msprobe's names of the modes).
PROBE_API const char* to_string(DumpCompareMode mode) noexcept;

/// The contents of compare.json (§3.1). Relative paths stay relative to the current directory, as msprobe.
struct PROBE_API CompareInput {
  std::string npu_path, bench_path;  ///< both dump.json / debug.json files, or both step directories
  std::string stack_path;            ///< "" when absent
  bool is_print_compare_log = true;
};
/// Reads compare.json. Throws Io (unreadable), Format (bad JSON, wrong types, missing npu_path/bench_path).
PROBE_API CompareInput read_compare_json(const std::string& path);

/// How to compare and where to write.
struct PROBE_API DumpCompareOptions {
  /// Framework of the NPU dump (msprobe's -f): PyTorch or MindSpore; unset = the NPU dump's own. A MindSpore
  /// NPU dump is compared with a PyTorch bench dump across frameworks.
  std::optional<Framework> framework;
  std::string out_dir = "./output";
  bool stack_mode = false;    ///< -s: show NPU_Stack_Info when compare.json names stack_path
  bool fuzzy_match = false;   ///< -f after the sub-command (§3.4.2)
  bool highlight = false;     ///< -hl: red/yellow rules (§3.9), appended to Err_message and coloured in xlsx
  bool compare_only = false;  ///< -c: no advisor file
  bool write_xlsx = true;     ///< also write the .xlsx beside the CSV
  std::string data_mapping;   ///< -dm file: {NPU row name: bench row name} (YAML or JSON)
  bool api_mapping =
      false;  ///< -am (MindSpore vs PyTorch): Mint.* -> Torch.*, MintFunctional.* -> Functional.*
  bool cell_mapping = false;       ///< -cm (MindSpore vs PyTorch): Cell -> Module
  std::string cell_mapping_file;   ///< optional -cm file {cell_path.Class: module_path.Class}
  std::string api_mapping_file;    ///< optional -am file: records {ms_api, pt_api, ms_args, pt_args, ...}
  bool layer_mapping = false;      ///< -lm (MindSpore): rows paired via the stack/construct.json layer trees
  std::string layer_mapping_file;  ///< optional -lm file {ClassName: {npu_attr: bench_attr}}
  Profile profile = Profile::Probe;  ///< msprobe repeats the 0-d tensor message 16 times (DECISIONS.md)
  std::string timestamp;             ///< 14 digits for the file names; "" = local time now
  /// Ranks to split step directories across (nullptr: this process alone): each rank's dump pair is compared
  /// and written by the rank that claims it, heaviest first; -da's per-rank tables likewise, searched on
  /// every rank. Rank 0 picks the timestamp. The files are those of one process; every rank returns the same
  /// result.
  Distributed* group = nullptr;
};

/// What the compare judges with; the defaults are msprobe's. The highlight rules (§3.9) keep msprobe's
/// fixed numbers.
struct PROBE_API DumpCompareThresholds {
  /// Real data, "Accuracy Reached or Not" (§3.8 step 4): "No" when cosine < `cosine` and max abs error >
  /// `max_abs`, or cosine < `cosine_floor`, or max abs error > `max_abs_ceiling`.
  double cosine = 0.99, max_abs = 0.001, cosine_floor = 0.9, max_abs_ceiling = 1.0;
  /// Statistics: a row is "Warning" when a statistic's |npu - bench| / (|max(npu, bench)| + 1e-10) exceeds it
  /// (§3.6).
  double statistics_warning = 0.5;
};

/// Progress of a compare, reported on the calling thread after each block of whole dump entries.
struct PROBE_API DumpCompareProgress {
  std::string npu_json;                 ///< the NPU file being compared (one per rank for directories)
  std::size_t rows_done = 0, rows = 0;  ///< result rows of that file computed so far, of all
};
using DumpCompareProgressFn = std::function<void(const DumpCompareProgress&)>;

/// Fill of a result row (§3.9).
enum class RowColour { None, Yellow, Red };
/// What a cell holds in msprobe's table (numbers and booleans are typed cells in the xlsx).
enum class CellKind : unsigned char { Text, Number, Bool };

/// One compare result table: header and formatted cells exactly as msprobe writes them.
struct PROBE_API DumpCompareTable {
  DumpCompareMode mode = DumpCompareMode::Statistics;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<CellKind>> kinds;  ///< same shape as rows
  std::vector<RowColour> colours;            ///< one per row (all None without highlighting)
  /// Index of the first row the advisor reports ("No" / "Different" / "Warning"), or rows.size().
  std::size_t first_suspect = 0;
  std::size_t suspects = 0;  ///< rows the advisor would report
  /// Rows whose tensor file could not be read (missing, unreadable, malformed; "unsupported" cells), and
  /// the first one's file and reason.
  std::size_t unreadable = 0;
  std::string first_unreadable;
  std::size_t unmatched = 0;  ///< NPU rows without a bench row (N/A bench cells)
  /// True when the compare was stopped: the rows are those of the dump entries compared before it, each
  /// entry whole.
  bool cancelled = false;
};

/// Compares one NPU dump.json (or debug.json) with one bench dump.json. `stack_json` = "" looks for
/// stack.json beside the NPU file. Nothing is written. Throws probe::Error naming the file on bad input.
/// Requesting `stop` (from any thread, e.g. from `progress`) ends the compare between dump entries; the
/// table then says `cancelled`.
PROBE_API DumpCompareTable compare_dump_files(const std::string& npu_json, const std::string& bench_json,
                                              const std::string& stack_json,
                                              const DumpCompareOptions& options,
                                              const DumpCompareThresholds& thresholds,
                                              const DumpCompareProgressFn& progress = {},
                                              std::stop_token stop = {});
/// The same with msprobe's thresholds (DumpCompareThresholds{}).
PROBE_API DumpCompareTable compare_dump_files(const std::string& npu_json, const std::string& bench_json,
                                              const std::string& stack_json,
                                              const DumpCompareOptions& options);

/// What run_dump_compare wrote.
struct PROBE_API DumpCompareSummary {
  struct Output {
    std::string rank_suffix;         ///< "" for single files, "_rank0", "_rank" for directories
    std::string csv, xlsx, advisor;  ///< "" when not written
    DumpCompareMode mode = DumpCompareMode::Statistics;
    std::size_t rows = 0, suspects = 0;  ///< suspects: rows judged No / Different / Warning
    std::size_t unreadable = 0;          ///< rows whose tensor file could not be read
    std::string first_unreadable;        ///< the first such file and why
    std::size_t unmatched = 0;           ///< rows without a bench row
    bool cancelled = false;              ///< this output holds only the entries compared before the stop
  };
  std::vector<Output> outputs;
  /// True when `stop` was requested: the last output holds every entry compared before it (each entry
  /// whole, written like a finished one), and the files or ranks after it were not compared. A compare has
  /// no resume: run it again for the rest.
  bool cancelled = false;
};

/// Runs the whole compare of compare.json's inputs (files or multi-rank step directories, §3.11) with the
/// caller's thresholds and writes compare_result{suffix}_{ts}.csv (+ .xlsx, + advisor) into
/// options.out_dir. `progress` is called on the calling thread; requesting `stop` (from any thread, e.g.
/// from `progress`) ends the run between dump entries. Throws probe::Error.
PROBE_API DumpCompareSummary run_dump_compare(const CompareInput& input, const DumpCompareOptions& options,
                                              const DumpCompareThresholds& thresholds,
                                              const DumpCompareProgressFn& progress = {},
                                              std::stop_token stop = {});
/// The same with msprobe's thresholds (DumpCompareThresholds{}).
PROBE_API DumpCompareSummary run_dump_compare(const CompareInput& input, const DumpCompareOptions& options,
                                              const DumpCompareProgressFn& progress = {},
                                              std::stop_token stop = {});

/// -da (find first diff, §3.12) for one rank: its compare table (statistics or md5; tensor dumps are compared
/// by their recorded statistics) with the extra columns state, api_origin_name, NPU/Bench P2POp op and peer.
struct PROBE_API DiffAnalyzeRank {
  std::string rank_dir;  ///< NPU rank directory name ("rank0")
  long long rank = 0;    ///< its number, as peers and process groups name it
  DumpCompareTable table;
  /// One dump.json entry: rows [first_row, first_row + rows) of the table; different = an output row differs.
  struct Entry {
    std::string key;
    bool is_same = true;
    std::size_t first_row = 0, rows = 0;
    std::vector<std::string> stack;  ///< stack.json frames, empty without stack.json
  };
  std::vector<Entry> entries;
};

/// A reported first-different entry: its rank (index into DiffAnalyzeResult::ranks) and entry index.
struct PROBE_API DiffAnalyzeNode {
  std::size_t rank_index = 0, entry_index = 0;
  long long layer = -1;  ///< communication layer of the graph search; -1 before any communication op
};

/// The whole -da analysis of two step directories.
struct PROBE_API DiffAnalyzeResult {
  std::vector<DiffAnalyzeRank> ranks;
  /// "before_communication", "communication", "after_communication", or "" when nothing differs.
  std::string phase;
  std::vector<DiffAnalyzeNode> first_diff;  ///< in rank order
};

/// Runs -da on compare.json's step directories (§3.11 pairing, §3.12 search). Nothing is written. Throws
/// InvalidArgument for file inputs or differing rank sets, Io for a rank without dump.json.
PROBE_API DiffAnalyzeResult analyze_first_diff(const CompareInput& input, const DumpCompareOptions& options);

/// Writes compare_result_rank{N}_{ts}.json per rank and, when something differs, diff_analyze_{ns}.json
/// into options.out_dir (atomically). Returns the paths written, the diff_analyze file last.
PROBE_API std::vector<std::string> write_diff_analyze(const DiffAnalyzeResult& result,
                                                      const DumpCompareOptions& options);

}  // namespace probe
