// The error bound's (DECISIONS D14) per-element scan: its vectorised pre-pass, which skips the blocks that
// cannot change the verdict, must find the same elements on every instruction set and in the scalar code,
// and compare_pair, which runs the scan inside the metrics pass, must give judge()'s verdict exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "metrics/KernelControl.h"
#include "probe/error_bound.h"
#include "probe/judge.h"
#include "probe/pair_metrics.h"
#include "probe/parallel.h"
#include "probe/runner.h"

namespace probe {
namespace {

const Standards& probe_standards() {
  static const Standards s = Standards::builtin(Profile::Probe);
  return s;
}

// Restores the kernel's instruction set, scalar switch and thread count whatever a test did.
struct KernelSettings {
  int threads = num_threads();
  ~KernelSettings() {
    detail::set_metrics_max_isa(2);
    detail::set_metrics_scalar_only(false);
    set_num_threads(threads);
  }
};

// The verdict's whole content, for comparing two verdicts.
std::string describe(const Verdict& v) {
  std::string s = std::string(to_string(v.status)) + " | " + v.message;
  for (const Criterion& c : v.criteria) s += " | " + c.name + "=" + std::to_string(c.value);
  for (const ElementError& e : v.worst)
    s += " | worst " + std::to_string(e.index) + " " + std::to_string(e.device) + " " +
         std::to_string(e.bound);
  return s;
}

// exp's bound in float32 at b = 1.5 (ErrorBoundTest's ElementwiseBoundAtItsEdge): (1 + 2^-10) (9 u +
// u / (1 - u)) 1.5 + 2^-149 with u = 2^-24, about 7.5 float32 ulps (2^-23) of 1.5. The device equals the
// bench except: a NaN, a sign flip (error 3) and an element 100 ulps off (ratio ~13), each beyond its
// bound, and elements 1 ulp off (ratio ~0.13) that feed the scan's gate. Exact elements never matter, so
// a faulty element is found only if the pre-pass flags its block. The positions sit in the middle of a
// SIMD group, on both sides of the metrics kernel's 8192-element blocks and in the tail. For a float64
// output the ulps are float64's (2^-52): its bound is (1 + 2^-10)(u + 2 (8 u + u)) 1.5 with u = 2^-53,
// about 14 of them, so 1 ulp is within and 100 beyond.
struct Case {
  std::vector<double> bench, device;
  std::int64_t nan_at = 8191, flip_at = 8192 + 5, far_at = 0;
};
Case exp_case(std::int64_t n, double ulp = std::ldexp(1.0, -23)) {
  Case c;
  c.far_at = n - 1;
  c.bench.assign(static_cast<std::size_t>(n), 1.5);
  c.device = c.bench;
  for (std::int64_t i = 3; i < n; i += 1000) c.device[static_cast<std::size_t>(i)] = 1.5 + ulp;
  c.device[static_cast<std::size_t>(c.nan_at)] = std::nan("");
  c.device[static_cast<std::size_t>(c.flip_at)] = -1.5;
  c.device[static_cast<std::size_t>(c.far_at)] = 1.5 + 100 * ulp;
  return c;
}

void expect_three_faults(const Verdict& v, const Case& c, const std::string& where) {
  EXPECT_EQ(v.status, Status::Error) << where;
  ASSERT_FALSE(v.criteria.empty()) << where;
  EXPECT_EQ(v.criteria.front().value, 3.0) << where << ": " << v.message;  // elements beyond their bound
  ASSERT_EQ(v.worst.size(), 3u) << where;
  EXPECT_EQ(v.worst[0].index, c.nan_at) << where;  // a NaN's ratio is infinite
  EXPECT_EQ(v.worst[1].index, c.flip_at) << where;
  EXPECT_EQ(v.worst[2].index, c.far_at) << where;
}

TEST(ErrorBoundScan, PrePassFindsTheSameElementsOnEveryInstructionSet) {
  KernelSettings restore;
  set_num_threads(2);
  const std::int64_t n = 3 * 8192 + 77;
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  for (DType dt : {DType::Float32, DType::Float64}) {
    const Case c = exp_case(n, std::ldexp(1.0, dt == DType::Float32 ? -23 : -52));
    const Tensor b = Tensor::from_values<double>(c.bench, {n});
    const Tensor d = Tensor::from_values<double>(c.device, {n}).to(dt);
    std::string first;
    // AVX-512, AVX2 and SSE2 (each capped to what the CPU has), then the scalar code.
    for (int variant = 0; variant < 4; ++variant) {
      detail::set_metrics_max_isa(variant < 3 ? 2 - variant : 2);
      detail::set_metrics_scalar_only(variant == 3);
      const std::string where = std::string(name(dt)) + " variant " + std::to_string(variant);
      const Verdict v = judge("Torch.exp", b, d, probe_standards(), dt, o);
      expect_three_faults(v, c, where);
      if (variant == 0) first = describe(v);
      EXPECT_EQ(describe(v), first) << where;
    }
  }
}

// The same with a magnitude bench (add's |a| + |b|, here 3 everywhere): the pre-pass reads the magnitude in
// place of |bench|. K = 1 and the scalar alpha's rounding: the bound is about (1 + 2^-10)(u 1.5 + (2 (u +
// u) + u) 3) ~ 16.5 u, far below the sign flip's error 3 and the 100-ulp element's 200 u.
TEST(ErrorBoundScan, PrePassWithAMagnitudeBenchFindsTheSameElements) {
  KernelSettings restore;
  const std::int64_t n = 2 * 8192 + 13;
  const Case c = exp_case(n);
  const Tensor b = Tensor::from_values<double>(c.bench, {n});
  const Tensor d = Tensor::from_values<double>(c.device, {n}).to(DType::Float32);
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  o.magnitude = Tensor::from_values<double>(std::vector<double>(static_cast<std::size_t>(n), 3.0), {n});
  o.accumulation = 1;
  std::string first;
  for (int variant = 0; variant < 4; ++variant) {
    detail::set_metrics_max_isa(variant < 3 ? 2 - variant : 2);
    detail::set_metrics_scalar_only(variant == 3);
    const Verdict v = judge("Torch.add", b, d, probe_standards(), DType::Float32, o);
    expect_three_faults(v, c, "variant " + std::to_string(variant));
    if (variant == 0) first = describe(v);
    EXPECT_EQ(describe(v), first) << "variant " << variant;
  }
}

// compare_pair scans each block of the metrics pass; its verdict must be judge()'s, for every device dtype,
// thread count and family kind (no magnitude, a magnitude bench, softmax's per-element logarithm), and
// where it cannot fuse (a reference output given) it calls judge() itself.
TEST(ErrorBoundScan, ComparePairGivesJudgesVerdict) {
  KernelSettings restore;
  const std::int64_t n = 5 * 8192 + 3;
  const Case c = exp_case(n);
  const Tensor b = Tensor::from_values<double>(c.bench, {n});
  struct Call {
    const char* api;
    bool magnitude;
  };
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16, DType::Float16}) {
      const Tensor d = Tensor::from_values<double>(c.device, {n}).to(dt);
      for (const Call& call : {Call{"Torch.exp", false}, Call{"Torch.add", true},
                               Call{"Functional.softmax", false}, Call{"elementwise", false}}) {
        PairErrorBound bound;
        bound.api = call.api;
        bound.options.rule = JudgeRule::ErrorBound;
        if (call.magnitude) {
          bound.options.magnitude =
              Tensor::from_values<double>(std::vector<double>(static_cast<std::size_t>(n), 3.0), {n});
          bound.options.accumulation = 1;
        }
        const std::string where =
            std::string(call.api) + " " + std::string(name(dt)) + " threads " + std::to_string(threads);
        const Verdict want = judge(call.api, b, d, probe_standards(), dt, bound.options);
        const PairMetrics pm = compare_pair("exp", b, d, probe_standards(), PairParts::run_ut_only(), bound);
        ASSERT_TRUE(pm.error_bound.has_value()) << where;
        EXPECT_EQ(describe(*pm.error_bound), describe(want)) << where;
        // The faults are found (bfloat16 and float16 round the 100-ulp element to 1.5 or near it).
        EXPECT_EQ(pm.error_bound->status, Status::Error) << where;
        // The metrics are those of compare_pair without the bound.
        const PairMetrics plain = compare_pair("exp", b, d, probe_standards(), PairParts::run_ut_only());
        ASSERT_TRUE(pm.metrics && plain.metrics) << where;
        EXPECT_EQ(pm.metrics->max_abs_err.format(), plain.metrics->max_abs_err.format()) << where;
        EXPECT_EQ(pm.row.status, plain.row.status) << where;
        EXPECT_EQ(pm.row.message, plain.row.message) << where;
        if (HasFailure()) return;
      }
    }
  }
  PairErrorBound with_reference;
  with_reference.options.rule = JudgeRule::ErrorBound;
  with_reference.options.reference = b;
  const Tensor d = Tensor::from_values<double>(c.device, {n}).to(DType::Float32);
  const PairMetrics pm =
      compare_pair("exp", b, d, probe_standards(), PairParts::run_ut_only(), with_reference);
  ASSERT_TRUE(pm.error_bound.has_value());
  EXPECT_EQ(describe(*pm.error_bound),
            describe(judge("elementwise", b, d, probe_standards(), DType::Float32, with_reference.options)));
}

// The GEMM magnitude (D14's Cauchy-Schwarz bound) is, per output element, the product of the input row's
// norm and the weight row's (linear) or the second factor's column's (matmul) norm, each norm the square
// root of its squares summed in index order, plus |bias[j]| for linear: one product and one sum per
// element, so the reference below, computed the same way, must be matched bit for bit.
std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

double norm_of(const std::vector<float>& v, std::int64_t start, std::int64_t count, std::int64_t stride) {
  double acc = 0;
  for (std::int64_t k = 0; k < count; ++k) {
    const double x = v[static_cast<std::size_t>(start + k * stride)];
    acc += x * x;
  }
  return std::sqrt(acc);
}

TEST(ErrorBoundScan, GemmMagnitudeIsTheProductOfNormsBitForBit) {
  KernelSettings restore;
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    // linear: x [2, 3, 40] (more than one row group of eight), w [5, 40], bias [5].
    const std::int64_t rows = 2 * 19, k = 40, n = 5;
    const std::vector<float> x = random_floats(rows * k, 1), w = random_floats(n * k, 2),
                             bias = random_floats(n, 3);
    ApiCall linear;
    linear.args = {Value(Tensor::from_values<float>(x, {2, 19, k})),
                   Value(Tensor::from_values<float>(w, {n, k})),
                   Value(Tensor::from_values<float>(bias, {n}))};
    const std::vector<Value> m = error_bound_magnitude(reg, Framework::PyTorch, "Functional.linear", linear);
    ASSERT_EQ(m.size(), 1u);
    ASSERT_EQ(m[0].tensor().shape(), (Shape{2, 19, n}));
    const std::vector<double> got = m[0].tensor().to_doubles();
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const double want = norm_of(x, i * k, k, 1) * norm_of(w, j * k, k, 1) +
                            std::fabs(static_cast<double>(bias[static_cast<std::size_t>(j)]));
        ASSERT_EQ(got[static_cast<std::size_t>(i * n + j)], want) << "linear " << i << ", " << j;
      }
    // matmul: a [2, 3, 9, 6] x b [2, 3, 6, 7] (the same batch dims); b's columns have stride 7.
    const std::int64_t batches = 6, mm = 9, kk = 6, nn = 7;
    const std::vector<float> a = random_floats(batches * mm * kk, 4), b = random_floats(batches * kk * nn, 5);
    ApiCall matmul;
    matmul.args = {Value(Tensor::from_values<float>(a, {2, 3, mm, kk})),
                   Value(Tensor::from_values<float>(b, {2, 3, kk, nn}))};
    const std::vector<Value> mt = error_bound_magnitude(reg, Framework::PyTorch, "Torch.matmul", matmul);
    ASSERT_EQ(mt.size(), 1u);
    ASSERT_EQ(mt[0].tensor().shape(), (Shape{2, 3, mm, nn}));
    const std::vector<double> got2 = mt[0].tensor().to_doubles();
    for (std::int64_t q = 0; q < batches; ++q)
      for (std::int64_t i = 0; i < mm; ++i)
        for (std::int64_t j = 0; j < nn; ++j) {
          const double want = norm_of(a, (q * mm + i) * kk, kk, 1) * norm_of(b, q * kk * nn + j, kk, nn);
          ASSERT_EQ(got2[static_cast<std::size_t>((q * mm + i) * nn + j)], want)
              << "matmul " << q << ", " << i;
        }
  }
}

// add's magnitude is the add runner on the absolute values: |a| + |b| exactly, in every floating dtype (the
// absolute copies clear the sign bit of 2-, 4- and 8-byte elements); its gradient magnitudes are |G| and
// |alpha| |G|.
TEST(ErrorBoundScan, AdditionMagnitudesAreTheSumsOfAbsoluteValues) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  const std::vector<double> av{1.5, -2.25, 0.0, -0.0, -3e4, 7.0}, bv{-0.5, 4.0, -1.0, 2.0, -1e4, -7.0};
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    ApiCall add;
    add.args = {Value(Tensor::from_values<double>(av, {6}).to(dt)),
                Value(Tensor::from_values<double>(bv, {6}).to(dt))};
    const std::vector<Value> m = error_bound_magnitude(reg, Framework::PyTorch, "Torch.add", add);
    ASSERT_EQ(m.size(), 1u) << name(dt);
    const std::vector<double> a = add.args[0].tensor().to_doubles(), b = add.args[1].tensor().to_doubles();
    const std::vector<double> got = m[0].tensor().to_doubles();
    for (std::size_t i = 0; i < av.size(); ++i)
      EXPECT_EQ(got[i], std::fabs(a[i]) + std::fabs(b[i])) << name(dt) << " element " << i;
  }
  ApiCall sub;
  sub.args = {Value(Tensor::from_values<float>({1, -2, 3}, {3})),
              Value(Tensor::from_values<float>({3, 4, -5}, {3}))};
  sub.kwargs = {{"alpha", Value(-2.0)}};
  const std::vector<InputGradient> g =
      error_bound_grad_magnitude(reg, Framework::PyTorch, "Torch.sub", sub,
                                 {Value(Tensor::from_values<float>({0.5f, -1.0f, -0.0f}, {3}))});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].grad.to_doubles(), (std::vector<double>{0.5, 1.0, 0.0}));
  EXPECT_EQ(g[1].grad.to_doubles(), (std::vector<double>{1.0, 2.0, 0.0}));
}

}  // namespace
}  // namespace probe
