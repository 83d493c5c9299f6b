// The module's runner registry: probe's built-in runners plus those registered from Python.
#pragma once

#include <pybind11/pybind11.h>

#include "probe/runner.h"

namespace probe::python {

/// A copy of the module's registry as it is now (runs use a snapshot, so registering during a run is safe).
RunnerRegistry registry_snapshot();
void register_runners(pybind11::module_& m);

}  // namespace probe::python
