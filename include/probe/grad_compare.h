// msprobe's gradient comparison (grad_probe's GradComparator.compare_distributed): two gradient-monitor dumps
// ({dump}/rank{R}/grad_summary_{step}.csv and {dump}/rank{R}/step{step}/{param}.npy, the direction of each
// gradient as a bool array) are compared per rank and step. A parameter's similarity is the share of elements
// whose directions agree; "summary" is the same share over all parameters (the per-parameter similarities
// weighted by element count). Each rank gets {out}/rank{R}/similarities.csv, byte-identical to msprobe's.
//
// Thread safety: the functions are reentrant and share no state.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probe/export.h"

namespace probe {

struct PROBE_API GradCompareOptions {
  std::string path1;       ///< first dump (holds rank{R} directories)
  std::string path2;       ///< second dump
  std::string output_dir;  ///< created if missing; gets rank{R}/similarities.csv
};

/// One row of similarities.csv: a parameter (or "summary") and its similarity at each compared step.
struct PROBE_API GradSimilarityRow {
  std::string name;
  /// Per step; 0 for a parameter with no element (as msprobe writes it).
  std::vector<double> values;
};

struct PROBE_API GradRankComparison {
  long long rank = 0;
  std::vector<long long> steps;         ///< the steps present in both dumps, ascending
  std::vector<GradSimilarityRow> rows;  ///< parameters in grad_summary order, then "summary"
  /// msprobe's documented rule (docs/zh/17.grad_probe.md): the first step at which any row's similarity is
  /// below 0.97 at the first compared step, or dropped by more than 0.03 from the previous compared step.
  std::optional<long long> first_suspicious_step;
  std::string file;  ///< the similarities.csv written
};

struct PROBE_API GradCompareResult {
  std::vector<GradRankComparison> ranks;  ///< ascending rank
};

/// Compares every rank{R} directory present in both dumps and writes the similarities. Throws probe::Error:
/// Io for a missing directory or an unreadable file (naming it), InvalidArgument when the dumps share no
/// rank, no step, no grad_summary csv or a parameter's direction file (msprobe's RuntimeErrors), Format when
/// two direction files differ in shape or one is not bool (naming the file).
PROBE_API GradCompareResult grad_compare(const GradCompareOptions& options);

/// msprobe's GradComparator.compare: one rank's directories (each holding step{N}/ and grad_summary csvs);
/// writes {output_dir}/similarities.csv. `rank` is only recorded in the result.
PROBE_API GradRankComparison grad_compare_rank(const std::string& path1, const std::string& path2,
                                               const std::string& output_dir, long long rank = 0);

/// The first suspicious step of `rows` over `steps` by the rule above (std::nullopt when none).
PROBE_API std::optional<long long> grad_first_suspicious_step(const std::vector<long long>& steps,
                                                              const std::vector<GradSimilarityRow>& rows);

}  // namespace probe
