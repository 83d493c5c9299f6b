// The dump-compare and MindSpore statistics read a bfloat16 tensor in place, beside a float64 or bfloat16
// bench, and must equal what they give on the same values converted to float32 first (msprobe reads bfloat16
// as float32, and bfloat16 -> float32 is exact): on every instruction set, the scalar path and any thread
// count. The fixture has NaN, Inf, zeros and values below every small-value threshold.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>

#include "metrics/KernelControl.h"
#include "probe/metrics.h"
#include "probe/pair_metrics.h"
#include "probe/parallel.h"
#include "probe/precision_standard.h"
#include "probe/tensor_file.h"

namespace {

using namespace probe;

const std::string kDir = std::string(PROBE_TEST_DATA_DIR) + "/metrics/";

void expect_same(const MetricValue& a, const MetricValue& b, const char* what) {
  EXPECT_EQ(a.kind, b.kind) << what;
  EXPECT_EQ(a.format(17), b.format(17)) << what;
}

// Bit for bit (NaN included: the fixture makes the MindSpore statistics NaN).
void expect_same_bits(double a, double b, const char* what) {
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a), std::bit_cast<std::uint64_t>(b))
      << what << ": " << a << " vs " << b;
}

void expect_same(const DumpCompareResult& a, const DumpCompareResult& b) {
  expect_same(a.cosine, b.cosine, "cosine");
  expect_same(a.euc_dist, b.euc_dist, "euc_dist");
  expect_same(a.max_abs, b.max_abs, "max_abs");
  expect_same(a.max_rel, b.max_rel, "max_rel");
  expect_same(a.one_thousandth, b.one_thousandth, "one_thousandth");
  expect_same(a.five_thousandths, b.five_thousandths, "five_thousandths");
  EXPECT_EQ(a.message, b.message);
}

class BFloat16InPlace : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    saved_threads_ = num_threads();
    const int variant = GetParam();  // 0..2: SIMD at the best ISA, SSE2 cap, scalar only
    if (variant == 1) detail::set_metrics_max_isa(0);
    if (variant == 2) detail::set_metrics_scalar_only(true);
  }
  void TearDown() override {
    detail::set_metrics_max_isa(2);
    detail::set_metrics_scalar_only(false);
    set_num_threads(saved_threads_);
  }
  int saved_threads_ = 1;
};

TEST_P(BFloat16InPlace, DumpCompareAndMindSporeEqualTheFloat32Conversion) {
  const Tensor bench64 = load_npy(kDir + "bf16_bench_f64.npy");
  const Tensor device32 = load_npy(kDir + "bf16_device_as_f32.npy");  // bfloat16 values, stored as float32
  const Tensor device = device32.to(DType::BFloat16);
  const Tensor bench16 = bench64.to(DType::BFloat16);
  ASSERT_GT(bench64.numel(), 9 * 8192);
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    set_num_threads(threads);
    // npu bfloat16 against a float64 bench and against a bfloat16 bench (dump compare of two bf16 runs).
    expect_same(dump_compare(device, bench64), dump_compare(device32, bench64));
    expect_same(dump_compare(device, bench16), dump_compare(device32, bench16.to(DType::Float32)));
    expect_same(dump_compare(bench16, device), dump_compare(bench16.to(DType::Float32), device32));

    MetricParams extra_only;
    extra_only.compute_ulp = false;
    extra_only.compute_run_ut = false;
    const TensorMetrics a = compute_metrics(bench64, device, extra_only);
    const TensorMetrics b = compute_metrics(bench64, device32, extra_only);
    expect_same_bits(a.ms_cosine, b.ms_cosine, "ms_cosine");
    expect_same_bits(a.ms_max_abs, b.ms_max_abs, "ms_max_abs");
    expect_same_bits(a.ms_max_rel, b.ms_max_rel, "ms_max_rel");
    expect_same_bits(a.dump_norm_device, b.dump_norm_device, "dump_norm_device");
    expect_same_bits(a.dump_norm_bench, b.dump_norm_bench, "dump_norm_bench");
    EXPECT_EQ(a.dump_inf_nan_mismatch, b.dump_inf_nan_mismatch);
  }
}

// compare_pair (`probe metrics`): run_ut's columns read the float64 bench as float32 beside a bfloat16
// device, its dump-compare and MindSpore rows read it in float64.
TEST_P(BFloat16InPlace, ComparePairKeepsTheFloat64BenchForDumpCompare) {
  const Tensor bench64 = load_npy(kDir + "bf16_bench_f64.npy");
  const Tensor device32 = load_npy(kDir + "bf16_device_as_f32.npy");
  const Standards standards = Standards::builtin();
  const PairMetrics pm = compare_pair("gelu", bench64, device32.to(DType::BFloat16), standards);
  ASSERT_TRUE(pm.dump.has_value());
  expect_same(*pm.dump, dump_compare(device32, bench64));
  ASSERT_TRUE(pm.metrics.has_value());
  MetricParams extra_only;
  extra_only.compute_ulp = false;
  extra_only.compute_run_ut = false;
  const TensorMetrics f = compute_metrics(bench64, device32, extra_only);
  expect_same_bits(pm.metrics->ms_max_rel, f.ms_max_rel, "ms_max_rel");
  expect_same_bits(pm.metrics->ms_cosine, f.ms_cosine, "ms_cosine");
  expect_same_bits(pm.metrics->dump_norm_bench, f.dump_norm_bench, "dump_norm_bench");
}

INSTANTIATE_TEST_SUITE_P(Paths, BFloat16InPlace, ::testing::Values(0, 1, 2));

}  // namespace
