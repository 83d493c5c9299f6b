#include "Runners.h"

#include <pybind11/stl.h>

#include <mutex>

#include "Convert.h"
#include "probe/dump.h"

namespace py = pybind11;

namespace probe::python {
namespace {

std::mutex registry_mutex;

RunnerRegistry& registry() {
  static RunnerRegistry r = RunnerRegistry::with_builtins();
  return r;
}

}  // namespace

RunnerRegistry registry_snapshot() {
  std::lock_guard lock(registry_mutex);
  return registry();
}

void register_runners(py::module_& m) {
  m.def(
      "runners",
      [](const std::string& role) {
        const RunnerRole r = role == "device" ? RunnerRole::Device : RunnerRole::Bench;
        if (role != "device" && role != "bench")
          throw Error(ErrorKind::InvalidArgument, "role must be 'bench' or 'device'", "", "role");
        return registry_snapshot().keys(Framework::PyTorch, r);
      },
      py::arg("role") = "bench");
}

}  // namespace probe::python
