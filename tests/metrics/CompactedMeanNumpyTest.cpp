// The float32 mean relative error of a bfloat16 output is numpy's mean of the compacted selection,
// summed in 8192-element buffers of the compacted array. The fixture (tests/data/make_metrics_fixtures.py)
// spans several such buffers and was chosen so that numpy's value differs from both other plausible
// summation orders; probe must print numpy's on every path and thread count.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <bit>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/Slurp.h"
#include "metrics/KernelControl.h"
#include "probe/metrics.h"
#include "probe/parallel.h"
#include "probe/tensor_file.h"

namespace {

using namespace probe;

const std::string kDir = std::string(PROBE_TEST_DATA_DIR) + "/metrics/";

rapidjson::Document expected() {
  rapidjson::Document doc;
  doc.Parse(probe::testing::slurp(kDir + "expected.json").c_str());
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

namespace {

// Threads far ahead of the in-order prefix wait for it (bounded memory); with a tiny window they wait
// all the time. Whatever the waiting, the compacted sum is numpy's, and nothing deadlocks.
TEST(CompactedMeanNumpy, ThreadsWaitingForThePrefixGiveTheSameSum) {
  rapidjson::Document e = expected();
  Tensor bench = load_npy(kDir + "bf16_bench_f64.npy");
  Tensor device = load_npy(kDir + "bf16_device_as_f32.npy").to(DType::BFloat16);
  MetricParams p;
  p.small_value = 0x1p-10;
  const int saved = num_threads();
  for (long window : {1L, 2L, 9L}) {
    detail::set_metrics_compaction_window(window);
    for (int threads : {2, 4, 7}) {
      set_num_threads(threads);
      TensorMetrics m = compute_metrics(bench, device, p);
      EXPECT_EQ(bits(m.mean_rel_err.value), e["mean_rel_err_f32_bits"].GetUint())
          << "window=" << window << " threads=" << threads;
    }
  }
  // Many ranges (250 blocks): threads wait, publish out of order and hand the summing over.
  const std::int64_t n = 250 * 8192 + 77;
  std::vector<float> bv(static_cast<std::size_t>(n)), dv(bv.size());
  std::mt19937_64 rng(9);
  std::normal_distribution<float> nd;
  for (std::size_t i = 0; i < bv.size(); ++i) {
    bv[i] = nd(rng) * (i % 3 == 0 ? 1e-4f : 1.0f);  // a third small: partial selection
    dv[i] = bv[i] * (1 + 0.01f * nd(rng));
  }
  Tensor big_b = Tensor::from_values<float>(bv, Shape{n});
  Tensor big_d = Tensor::from_values<float>(dv, Shape{n}).to(DType::BFloat16);
  detail::set_metrics_compaction_window(0);
  set_num_threads(1);
  const MetricValue one = compute_metrics(big_b, big_d, p).mean_rel_err;
  for (long window : {1L, 16L}) {
    detail::set_metrics_compaction_window(window);
    for (int threads : {2, 3, 8}) {
      set_num_threads(threads);
      EXPECT_EQ(compute_metrics(big_b, big_d, p).mean_rel_err, one)
          << "window=" << window << " threads=" << threads;
    }
  }
  detail::set_metrics_compaction_window(0);
  set_num_threads(saved);
}

}  // namespace
