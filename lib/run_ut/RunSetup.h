// What every run_ut output set does before its first API, shared by offline run_ut, RunUtStream (and so
// the online server), the record checker and OnlineChecker: the framework check, the claim of fresh files
// under a timestamp, and the -save_error_data directory.
#pragma once

#include <functional>
#include <string>

#include "probe/run_ut.h"
#include "run_ut/ApiSelection.h"
#include "run_ut/OutputFiles.h"
#include "support/FileOps.h"

namespace probe::rut {

/// run_ut checks as PyTorch or MindSpore; anything else is InvalidArgument naming `field`.
void require_checker_framework(Framework framework, const std::string& field = "framework");

/// Claims a fresh output set named by `paths_for(timestamp)`, `timestamp` being the given one or, when empty,
/// now: without a given timestamp a taken name moves on to the next free second (another run in the same
/// second), with one a taken name is refused (outputs_exist_error). `paths` receives the claimed names; the
/// lock is held until the returned object dies.
detail::LockedFile claim_new_outputs(const std::function<OutputPaths(const std::string&)>& paths_for,
                                     const std::string& timestamp, OutputPaths& paths);

/// Where -save_error_data writes: under config.json's error_data_path, else beside the result file, in
/// "ut_error_data<timestamp><suffix>".
std::string error_data_dir(const RunUtConfig& config, const OutputPaths& paths,
                           const std::string& suffix = {});

}  // namespace probe::rut
