// The emulated device runners (--device_runner emulated, DECISIONS D6) against torch's own CPU kernels run
// in float16 / bfloat16 / float32 (tests/data/emulation/device.json, from make_emulation_fixtures.py).
// The tolerance of each case is in ULPs of the output dtype; the generator's docstring says why each
// number is what it is. A "cancel" case needs exact agreement: it only holds if the emulation really
// accumulates in float32.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "FixtureUtil.h"
#include "probe/error.h"
#include "probe/runner.h"

namespace probe::test {
namespace {

// Spacing of `dtype` at |v| (normal range; the subnormal spacing below it).
double ulp(double v, DType dtype) {
  int mantissa = 23, min_exp = -126;
  if (dtype == DType::Float16) mantissa = 10, min_exp = -14;
  if (dtype == DType::BFloat16) mantissa = 7;
  const double a = std::fabs(v);
  const int e = a > 0 ? std::max(std::ilogb(a), min_exp) : min_exp;
  return std::ldexp(1.0, e - mantissa);
}

TEST(EmulationUlp, SpacingOfEachDtype) {
  EXPECT_EQ(ulp(1.0, DType::Float32), 0x1p-23);
  EXPECT_EQ(ulp(1.0, DType::Float16), 0x1p-10);
  EXPECT_EQ(ulp(1.0, DType::BFloat16), 0x1p-7);
  EXPECT_EQ(ulp(3.0, DType::Float16), 0x1p-9);
  EXPECT_EQ(ulp(0.0, DType::Float16), 0x1p-24);
  EXPECT_EQ(ulp(-0.75, DType::BFloat16), 0x1p-8);
}

TEST(Emulation, DeviceRunnersReproduceTorchCpuKernels) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  const auto path = std::filesystem::path(PROBE_TEST_DATA_DIR) / "emulation" / "device.json";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const rapidjson::Document d = load_json(path);
  ASSERT_FALSE(d.HasParseError()) << path;
  std::size_t n = 0;
  for (const auto& c : d["cases"].GetArray()) {
    const std::string id = c["id"].GetString();
    SCOPED_TRACE(id);
    ApiCall call;
    for (const auto& a : c["args"].GetArray()) call.args.push_back(decode_value(a));
    for (const auto& k : c["kwargs"].GetObject())
      call.kwargs.emplace_back(k.name.GetString(), decode_value(k.value));
    ApiResult r;
    try {
      r = reg.run_forward(Framework::PyTorch, c["api"].GetString(), call, RunnerRole::Device);
    } catch (const Error& e) {
      ADD_FAILURE() << id << ": device runner threw " << e.what();
      continue;
    }
    const FixTensor want = decode_tensor(c["outputs"][0]["tensor"]);
    ASSERT_EQ(r.outputs.size(), 1u);
    ASSERT_TRUE(r.outputs[0].is_tensor());
    const Tensor& got = r.outputs[0].tensor();
    EXPECT_EQ(got.dtype(), want.dtype) << id << ": the device runner returns the device dtype";
    ASSERT_EQ(shape_to_string(got.shape()), shape_to_string(want.shape));
    const std::vector<double> g = got.to_doubles();
    const int ulps = c["ulps"].GetInt();
    const bool by_max = std::string(c["scale"].GetString()) == "max";
    double max_abs = 0;
    for (double v : want.data) max_abs = std::max(max_abs, std::fabs(v));
    int reported = 0;
    double worst = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      const double spacing = ulp(by_max ? max_abs : want.data[i], want.dtype);
      const double off = std::fabs(g[i] - want.data[i]) / spacing;
      worst = std::max(worst, off);
      if (!(off <= ulps) && reported++ < 3)
        ADD_FAILURE() << fmt::format("{} element {}: probe {:.9g} torch {:.9g} = {:.2f} ULP (allowed {})", id,
                                     i, g[i], want.data[i], off, ulps);
    }
    RecordProperty(id, fmt::format("{:.2f}", worst));
    ++n;
  }
  EXPECT_EQ(n, 39u) << "cases missing from " << path;
}

}  // namespace
}  // namespace probe::test
