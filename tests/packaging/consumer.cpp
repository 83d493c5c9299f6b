// Uses only the installed public headers (through the umbrella header). Run from a relocated install, it
// shows that libprobe finds its data files with no environment variable.
#include <cstdio>
#include <string>

#include "probe/probe.h"

#if PROBE_VERSION < 100
#error "PROBE_VERSION must be defined by probe/version.h"
#endif

int main() {
  probe::Tensor t = probe::Tensor::zeros(probe::DType::Float32, {2, 3});
  const probe::Standards standards = probe::Standards::builtin();
  std::printf("probe %s %s %s %s\nstandards: %s\n", probe::version(),
              std::string(probe::name(t.dtype())).c_str(), probe::shape_to_string(t.shape()).c_str(),
              std::string(to_string(probe::Status::Pass)).c_str(), probe::Standards::default_path().c_str());
  return 0;
}
