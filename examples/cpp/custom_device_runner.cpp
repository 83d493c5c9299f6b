// custom_device_runner: run_ut with the caller's operator library as the device side. A tiny library
// ("tinyops") provides two kernels, registered as device runners of the APIs they implement:
//   Tensor.__mul__  a correct multiply: float32 arithmetic, result rounded to the input dtype;
//   Tensor.__add__  a faulty add with a 2% gain error (y = 1.02 * (a + b)), as a miscalibrated kernel.
// probe's built-in float64 runners are the bench. With DeviceSide::Runner, run_ut ignores the dumped
// outputs and runs the registered kernels on the dumped inputs (other APIs use probe's emulated device).
// The program prints the forward status of each API tinyops implements.
// Usage: custom_device_runner DUMP.json OUT_DIR
//
// Library calls shown: RunnerRegistry::with_builtins + add(..., RunnerRole::Device), Runner (schema +
// forward), run_ut(options, registry, standards), and reading run_ut's result CSV with csv_read_file.
#include <cstdio>
#include <functional>
#include <string>

#include "probe/probe.h"

namespace tinyops {

// Elementwise binary kernel in float32; the result takes the first input's dtype, as a device would.
probe::Tensor binary(const probe::Tensor& a, const probe::Value& b,
                     const std::function<float(float, float)>& f) {
  const probe::Tensor x = a.to(probe::DType::Float32);
  // A Python number (the scale of an attention score) or a tensor of the same shape.
  const bool scalar = !b.is_tensor();
  const probe::Tensor y = scalar ? x : b.tensor().to(probe::DType::Float32);
  const float s = scalar ? static_cast<float>(b.as_double()) : 0.0f;
  probe::Tensor out = probe::Tensor::zeros(probe::DType::Float32, x.shape());
  for (std::int64_t i = 0; i < x.numel(); ++i)
    out.mutable_data<float>()[i] = f(x.data<float>()[i], scalar ? s : y.data<float>()[i]);
  return out.to(a.dtype());
}

probe::Tensor mul(const probe::Tensor& a, const probe::Value& b) {
  return binary(a, b, [](float u, float v) { return u * v; });
}
probe::Tensor add_with_gain_error(const probe::Tensor& a, const probe::Value& b) {
  return binary(a, b, [](float u, float v) { return 1.02f * (u + v); });
}

}  // namespace tinyops

namespace {

// A device runner: the schema binds the dumped call; forward returns the kernel's output and its dtype.
probe::Runner device_runner(const char* schema,
                            probe::Tensor (*kernel)(const probe::Tensor&, const probe::Value&)) {
  probe::Runner r;
  r.schema = schema;
  r.forward = [kernel](const probe::BoundArgs& args) {
    probe::Tensor out = kernel(args["self"].tensor(), args["other"]);
    const probe::DType dtype = out.dtype();
    return probe::ApiResult{{probe::Value(std::move(out))}, {dtype}};
  };
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DUMP.json OUT_DIR\n", argv[0]);
    return 2;
  }
  using namespace probe;
  try {
    RunnerRegistry registry = RunnerRegistry::with_builtins();
    registry.add(Framework::PyTorch, "Tensor.__mul__",
                 device_runner("__mul__(Tensor self, Any other) -> Tensor", tinyops::mul),
                 RunnerRole::Device);
    registry.add(Framework::PyTorch, "Tensor.__add__",
                 device_runner("__add__(Tensor self, Any other) -> Tensor", tinyops::add_with_gain_error),
                 RunnerRole::Device);

    RunUtOptions options;
    options.api_info = argv[1];
    options.out_dir = argv[2];
    options.device_side = DeviceSide::Runner;  // the device is tinyops, not the dumped outputs
    const RunUtSummary s = run_ut(options, registry, Standards::builtin(Profile::Probe));
    std::printf("%zu APIs: %zu pass, %zu warning, %zu error, %zu skip\n", s.apis, s.pass, s.warning, s.error,
                s.skip);
    // Result CSV columns: API name, Forward Test Success, Backward Test Success, Message.
    const auto rows = csv_read_file(s.result_csv);
    for (std::size_t i = 1; i < rows.size(); ++i)
      if (rows[i][0].rfind("Tensor.__mul__.", 0) == 0 || rows[i][0].rfind("Tensor.__add__.", 0) == 0)
        std::printf("%s forward %s\n", rows[i][0].c_str(), rows[i][1].c_str());
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return exit_code(e.kind());
  }
}
