// msprobe's nan_analyze: in a multi-rank step of statistics (or tensor) dumps, the entry where inf/NaN first
// appeared. An entry is an anomaly when the Max/Min of its inputs hold no inf/NaN and those of its outputs
// do. Per rank, the first anomaly before the first communication op; failing that, the communication ops of
// all ranks are linked (send to recv, collectives across their group) into layers and the earliest anomaly
// is followed through them to the rank where it began; failing that, each rank's first anomaly after its
// last communication op. The report is msprobe's anomaly_analyze_{ns}.json.
//
// Thread safety: the functions are reentrant and share no state.
#pragma once

#include <string>
#include <vector>

#include "probe/distributed.h"
#include "probe/export.h"
#include "probe/precision_standard.h"

namespace probe {

struct PROBE_API NanAnalyzeOptions {
  std::string input_path;                ///< a step directory holding rank*/{dump,construct,stack}.json
  std::string output_path = "./output";  ///< created if missing
  /// msprobe: its order exactly; probe (default): DECISIONS D19 (within a layer, the compute ops that fed a
  /// communication op before the communication ops).
  Profile profile = Profile::Probe;
  /// Ranks to split the parsing across (nullptr: this process alone; probe::mpi gives the ranks of an MPI
  /// job). Every rank calls nan_analyze with the same options; the rank directories' dumps are parsed by the
  /// ranks, heaviest (file sizes) first, each reduced to the anomaly candidates and the communication ops;
  /// rank 0 runs the cross-rank search and writes the file, and every rank returns its result (or throws its
  /// error). The file is byte for byte the one of one process.
  Distributed* group = nullptr;
};

/// One reported entry: its rank, its dump.json key, and where the analysis placed it.
struct PROBE_API NanAnomaly {
  long long rank = 0;
  std::string op_name;      ///< "Torch.log.0.forward"
  long long layer = 0;      ///< communication layer (0 before the first communication op)
  long long sub_layer = 0;  ///< position among the compute ops since the previous communication op
};

struct PROBE_API NanAnalyzeResult {
  /// "before_communication", "communication", "after_communication", or "" when nothing was found.
  std::string phase;
  std::vector<NanAnomaly> anomalies;  ///< in report order
  /// msprobe's log lines, in order ("Start searching anomaly node ...", "Rank 1 has no dump data!", ...,
  /// then "The analyze result is saved in: FILE" or "Cannot find any anomaly node, no need to generate
  /// analyze file.").
  std::vector<std::string> log;
  std::string file;  ///< the analyze file written ("" when nothing was found)
};

/// Analyses `options.input_path` and, when an anomaly is found, writes
/// `{output_path}/anomaly_analyze_{ns}.json` ({"rank_N": [{op_name, data_info, construct_info, stack_info}]},
/// as Python's json.dump with indent 2 writes it). Throws probe::Error: Io for a missing directory or file
/// (naming it), Format for malformed JSON or a communication entry whose name has fewer than 4 parts
/// (naming the file and the entry), InvalidArgument when the directory holds no rank directory.
PROBE_API NanAnalyzeResult nan_analyze(const NanAnalyzeOptions& options);

}  // namespace probe
