// tensor_metrics: judges a device tensor against its bench the way `probe metrics` does, through files.
// It writes a float64 bench and a float32 device result of y = x * x (x = i / 1000, 4096 elements) as .npy
// files, with the device wrong by 2% on one element in 64, loads them back, and prints run_ut's verdict
// for API "mul" with a few of the metrics behind it. Usage: tensor_metrics OUT_DIR (created if missing).
//
// Library calls shown: probe::save_npy, probe::load_tensor_file (maps the file, no copy),
// probe::compare_pair (one pass; PairParts::run_ut_only() skips the ULP, dump-compare and MindSpore
// work this example does not print), DetailRow and TensorMetrics.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "probe/probe.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  try {
    std::filesystem::create_directories(out);
    std::vector<double> bench(4096);
    std::vector<float> device(4096);
    for (std::size_t i = 0; i < bench.size(); ++i) {
      const double x = static_cast<double>(i) / 1000.0;
      bench[i] = x * x;
      device[i] = static_cast<float>(i % 64 == 1 ? 1.02 * x * x : x * x);
    }
    probe::save_npy(out + "/bench.npy", probe::Tensor::from_values(bench, {64, 64}));
    probe::save_npy(out + "/device.npy", probe::Tensor::from_values(device, {64, 64}));

    const probe::Tensor b = probe::load_tensor_file(out + "/bench.npy");
    const probe::Tensor d = probe::load_tensor_file(out + "/device.npy");
    const probe::PairMetrics m = probe::compare_pair(
        "mul", b, d, probe::Standards::builtin(probe::Profile::Probe), probe::PairParts::run_ut_only());
    std::printf("status %s\n", std::string(probe::to_string(m.row.status)).c_str());
    std::printf("max_abs_err %.4g\n", m.metrics->max_abs_err.value);
    std::printf("hundredth %.6g thousandth %.6g\n", m.metrics->hundredth.value, m.metrics->thousandth.value);
    std::printf("cosine %.9f\n", m.metrics->cosine.value);
    return 0;
  } catch (const probe::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return probe::exit_code(e.kind());
  }
}
