// The float32 mean relative error of a bfloat16 output is numpy's mean of the compacted selection,
// summed in 8192-element buffers of the compacted array. The fixture (tests/data/make_metrics_fixtures.py)
// spans several such buffers and was chosen so that numpy's value differs from both other plausible
// summation orders; probe must print numpy's on every path and thread count.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <bit>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "metrics/KernelControl.h"
#include "probe/metrics.h"
#include "probe/parallel.h"
#include "probe/tensor_file.h"

namespace {

using namespace probe;

const std::string kDir = std::string(PROBE_TEST_DATA_DIR) + "/metrics/";

rapidjson::Document expected() {
  std::ifstream in(kDir + "expected.json");
  std::stringstream ss;
  ss << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(ss.str().c_str());
  EXPECT_FALSE(doc.HasParseError());
  return doc;
}

std::uint32_t bits(double v) { return std::bit_cast<std::uint32_t>(static_cast<float>(v)); }

TEST(CompactedMeanNumpy, BFloat16MeanRelativeErrorIsNumpys) {
  rapidjson::Document e = expected();
  Tensor bench = load_npy(kDir + "bf16_bench_f64.npy");
  Tensor device = load_npy(kDir + "bf16_device_as_f32.npy").to(DType::BFloat16);
  ASSERT_EQ(bench.numel(), e["n"].GetInt64());
  MetricParams p;
  p.small_value = 0x1p-10;
  const std::uint32_t want = e["mean_rel_err_f32_bits"].GetUint();
  ASSERT_NE(want, e["masked_zero_sum_f32_bits"].GetUint());
  ASSERT_NE(want, e["float64_mean_f32_bits"].GetUint());
  const int saved = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (bool scalar : {false, true}) {
      detail::set_metrics_scalar_only(scalar);
      TensorMetrics m = compute_metrics(bench, device, p);
      detail::set_metrics_scalar_only(false);
      SCOPED_TRACE(::testing::Message() << "threads=" << threads << " scalar=" << scalar);
      EXPECT_EQ(m.mean_rel_err.kind, MetricKind::Float32);
      EXPECT_EQ(bits(m.mean_rel_err.value), want);
      EXPECT_EQ(bits(m.max_rel_err.value), e["max_rel_err_f32_bits"].GetUint());
    }
  }
  set_num_threads(saved);
}

}  // namespace
