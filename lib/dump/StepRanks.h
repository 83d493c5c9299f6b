// Internal: the rank directories of one step directory, as the commands that take a step (run_ut,
// nan_analyze) list them.
#pragma once

#include <map>
#include <string>

namespace probe::detail {

/// The step's `rank<N>` subdirectories by rank number ("rank" alone is rank 0; names with other suffixes are
/// not ranks). Throws Error(InvalidArgument) naming `step` and `field` when two names give one rank,
/// Error(Io) when the directory cannot be listed. Thread-safe.
std::map<long long, std::string> step_rank_dirs(const std::string& step, const char* field);

}  // namespace probe::detail
