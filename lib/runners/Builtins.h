// Internal: the one explicit list of built-in runners.
#pragma once

#include "probe/runner.h"

namespace probe::runners {

/// Registers every built-in runner (bench and emulated device) into `reg`.
void register_builtin_runners(RunnerRegistry& reg);

}  // namespace probe::runners
