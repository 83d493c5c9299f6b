// Finding the dumps under a msprobe dump root: {root}/[graph|pynative/]step{N}/rank{R}/dump.json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probe/export.h"

namespace probe {

/// The files of one rank of one step (any of the paths may be "" when absent).
struct PROBE_API RankDump {
  std::string dir;   ///< the rank directory
  std::string mode;  ///< "graph" / "pynative" for MindSpore jit dumps, else ""
  std::string step;  ///< step directory name ("step0"), "" when not in a step directory
  std::string rank;  ///< rank directory name ("rank1", or "rank" when not distributed), "" if none
  std::optional<long long> step_index, rank_index;  ///< the numbers in those names
  std::string dump_json;                            ///< dump.json, or debug.json for level "debug"
  std::string stack_json, construct_json;
  std::string tensor_dir;  ///< dump_tensor_data/ when present
};

/// All rank dumps under a path, ordered by mode, step number, rank number.
struct PROBE_API DumpLayout {
  std::string root;
  std::vector<RankDump> ranks;

  /// Accepts a dump.json file, a rank directory, a step directory or a dump root. Throws Io when the
  /// path is missing or holds no dump.json anywhere in the expected layout.
  static DumpLayout discover(const std::string& path);
};

}  // namespace probe
