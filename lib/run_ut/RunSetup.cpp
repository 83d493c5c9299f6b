#include "run_ut/RunSetup.h"

#include <filesystem>

#include "probe/error.h"
#include "support/Timestamp.h"

namespace probe::rut {

void require_checker_framework(Framework framework, const std::string& field) {
  if (framework != Framework::PyTorch && framework != Framework::MindSpore)
    throw Error(ErrorKind::InvalidArgument,
                "run_ut checks as pytorch or mindspore, not " + std::string(to_string(framework)), {}, field);
}

detail::LockedFile claim_new_outputs(const std::function<OutputPaths(const std::string&)>& paths_for,
                                     const std::string& timestamp, OutputPaths& paths) {
  paths = paths_for(timestamp.empty() ? detail::local_timestamp() : timestamp);
  detail::LockedFile lock = claim_outputs(paths, false);
  for (int tries = 0; !lock.is_open() && timestamp.empty() && tries < 600; ++tries) {
    paths = paths_for(detail::next_timestamp(paths.timestamp));
    lock = claim_outputs(paths, false);
  }
  if (!lock.is_open()) throw outputs_exist_error(paths);
  return lock;
}

std::string error_data_dir(const RunUtConfig& config, const OutputPaths& paths, const std::string& suffix) {
  namespace fs = std::filesystem;
  const fs::path base = config.error_data_path.empty() ? fs::path(paths.result).parent_path()
                                                       : fs::path(config.error_data_path);
  return (base / ("ut_error_data" + paths.timestamp + suffix)).string();
}

}  // namespace probe::rut
