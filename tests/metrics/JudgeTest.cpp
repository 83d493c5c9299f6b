// probe::judge at the boundaries of each rule, with hand-made vectors whose expected numbers are derived
// in the comments from precheck.md (§2-§5) and DECISIONS D12; none comes from probe's own output.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "probe/judge.h"

namespace probe {
namespace {

const Standards& msprobe_cfg() {
  static const Standards cfg = Standards::builtin(Profile::MsProbe);
  return cfg;
}
const Standards& probe_cfg() {
  static const Standards cfg = Standards::builtin(Profile::Probe);
  return cfg;
}
// run_ut's old rule, which the probe profile's default (D14's error bound) replaces.
JudgeOptions old_rule() {
  JudgeOptions o;
  o.rule = JudgeRule::RunUt;
  return o;
}

Tensor f64(std::vector<double> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return Tensor::from_values<double>(v, Shape{n});
}
// The same values held in float64; judge() converts them to the device dtype it is given.
Tensor ones(std::size_t n) { return f64(std::vector<double>(n, 1.0)); }
Tensor ones_but(std::size_t n, std::size_t i, double x) {
  std::vector<double> v(n, 1.0);
  v[i] = x;
  return f64(v);
}

Verdict by_standard(const char* api, const Tensor& bench, const Tensor& device, DType dtype,
                    const Standards& cfg = msprobe_cfg(), JudgeOptions opt = {}) {
  opt.rule = JudgeRule::PrecisionStandard;
  return judge(api, bench, device, cfg, dtype, opt);
}

const Criterion* find(const Verdict& v, std::string_view name_prefix) {
  for (const auto& c : v.criteria)
    if (c.name.rfind(name_prefix, 0) == 0) return &c;
  return nullptr;
}

// §2.8/§5.3: relative error ratio = share of normal elements with |d-b|/(|b|+eps) > rtol (fp16: 2^-10),
// and it must be 0. One ulp above 1.0 in fp16 is 1+2^-10: rel = 2^-10/(1+2^-52) < 2^-10, so not counted;
// two ulps (1+2^-9) give rel ~2^-9 > 2^-10, so 1 of 4 elements: ratio 0.25 -> error.
TEST(Judge, AbsoluteThresholdAtRtol) {
  Verdict pass = by_standard("mul", ones(4), ones_but(4, 0, 1 + 0x1p-10), DType::Float16);
  EXPECT_EQ(pass.status, Status::Pass);
  EXPECT_EQ(pass.method, Method::AbsoluteThreshold);
  ASSERT_EQ(pass.criteria.size(), 3u);
  for (const auto& c : pass.criteria) EXPECT_EQ(c.value, 0) << c.name;

  Verdict fail = by_standard("mul", ones(4), ones_but(4, 0, 1 + 0x1p-9), DType::Float16);
  EXPECT_EQ(fail.status, Status::Error);
  const Criterion* rel = find(fail, "relative error ratio");
  ASSERT_NE(rel, nullptr);
  EXPECT_EQ(rel->value, 0.25);
  EXPECT_EQ(rel->op, "==");
  EXPECT_FALSE(rel->pass);
  EXPECT_TRUE(find(fail, "inf/nan")->pass);
}

// §2.10/§5.3: binary consistency (relu is in its list) passes only at error rate 0. The next fp16 after
// 4 is 4+2^-8; one of four differs -> 0.25.
TEST(Judge, BinaryConsistencyNeedsZeroMismatches) {
  const Tensor b = f64({1, 2, 3, 4});
  EXPECT_EQ(by_standard("relu", b, b, DType::Float16).status, Status::Pass);
  Verdict v = by_standard("relu", b, f64({1, 2, 3, 4 + 0x1p-8}), DType::Float16);
  EXPECT_EQ(v.status, Status::Error);
  EXPECT_EQ(v.method, Method::BinaryConsistency);
  ASSERT_EQ(v.criteria.size(), 1u);
  EXPECT_EQ(v.criteria[0].value, 0.25);
}

// §5.3: thousandth passes at >= 0.999 while the old rule (§3.1, float32) needs > 0.999. 1000 elements,
// one with rel error 2^-8 > 0.001: ratio 999/1000 = 0.999 exactly as the CSV prints it ("0.99900000000000").
// Old rule: cosine ~1 > 0.99, max abs 2^-8 >= 0.001, thousandth 0.999 not > 0.999 -> error (float32).
TEST(Judge, ThousandthBoundaryDiffersBetweenTheRules) {
  const Tensor b = ones(1000), d = ones_but(1000, 7, 1 + 0x1p-8);
  Verdict standard = by_standard("conv2d", b, d, DType::Float32);
  EXPECT_EQ(standard.status, Status::Pass);
  EXPECT_EQ(standard.method, Method::Thousandth);
  ASSERT_EQ(standard.criteria.size(), 1u);
  EXPECT_EQ(standard.criteria[0].value, 0.999);
  EXPECT_EQ(standard.criteria[0].op, ">=");

  Verdict old = judge("conv2d", b, d, msprobe_cfg(), DType::Float32);
  EXPECT_EQ(old.status, Status::Error);
  EXPECT_EQ(old.method, Method::OldRule);
  const Criterion* th = find(old, "thousandth");
  ASSERT_NE(th, nullptr);
  EXPECT_EQ(th->value, 0.999);
  EXPECT_EQ(th->op, ">");
  EXPECT_FALSE(th->pass);
  // Two such elements: 0.998 fails the standard too.
  std::vector<double> two(1000, 1.0);
  two[1] = two[2] = 1 + 0x1p-8;
  EXPECT_EQ(by_standard("conv2d", b, f64(two), DType::Float32).status, Status::Error);
}

// §2.9/§5.3 ULP (matmul, fp16): share of elements with more than 1 ulp (fp16 at 1.0: 2^-10) must be below
// 0.001, or below the reference's share (ratio < 1, the reference's floored at minimum_err 2^-11).
// Exactly 1 ulp off is not "more than 1": pass. 2 ulps on 1 of 4: p = 0.25; the correctly rounded
// reference has p = 0, so ratio = 0.25 / 2^-11 = 512 -> error.
TEST(Judge, UlpProportionAndReference) {
  Verdict one = by_standard("matmul", ones(4), ones_but(4, 2, 1 + 0x1p-10), DType::Float16);
  EXPECT_EQ(one.status, Status::Pass);
  EXPECT_EQ(one.method, Method::Ulp);
  EXPECT_TRUE(one.pass_if_any);

  const Tensor two_ulp = ones_but(4, 2, 1 + 0x1p-9);
  Verdict two = by_standard("matmul", ones(4), two_ulp, DType::Float16);
  EXPECT_EQ(two.status, Status::Error);
  ASSERT_EQ(two.criteria.size(), 2u);  // no mean-ULP criterion below float32
  EXPECT_EQ(two.criteria[0].value, 0.25);
  EXPECT_EQ(two.criteria[0].threshold, 0.001);
  EXPECT_EQ(two.criteria[1].value, 512);
  ASSERT_FALSE(two.worst.empty());
  EXPECT_EQ(two.worst[0].index, 2);
  EXPECT_EQ(two.worst[0].ulp, 2.0);  // 2^-9 * 2^(10 - 0)

  // A second device that is as bad: ratio 0.25 / 0.25 = 1, not < 1 -> still error; one twice as bad
  // (2 elements at 2 ulps, p = 0.5): ratio 0.5 < 1 -> pass.
  JudgeOptions same;
  same.reference = two_ulp;
  EXPECT_EQ(by_standard("matmul", ones(4), two_ulp, DType::Float16, msprobe_cfg(), same).status,
            Status::Error);
  JudgeOptions worse;
  worse.reference = f64({1 + 0x1p-9, 1, 1 + 0x1p-9, 1}).to(DType::Float16);
  Verdict relative = by_standard("matmul", ones(4), two_ulp, DType::Float16, msprobe_cfg(), worse);
  EXPECT_EQ(relative.status, Status::Pass);
  EXPECT_EQ(relative.criteria[1].value, 0.5);
}

// §2.7/§5.3 benchmark (gelu, fp16) against the correctly rounded result (all metrics 0, floored at
// minimum_err 2^-11). rmse of abs_err [a,0,0,0] with msprobe's factor: sqrt(a^2/4 * (4/4.0001 + 0.0001));
// numpy: a = 2^-9 -> 0.00097659912071 (CSV text), ratio 2.00007499921408 > 2 -> error;
// a = 2^-10 -> 0.00048829956036, ratio 1.00003749961728 -> pass. Max rel 2^-9 -> ratio 4 <= 10 and mean
// rel 2^-11 -> ratio 1 <= 2 pass; error balance 0.25 -> ratio 512 fails but never decides.
TEST(Judge, BenchmarkRmseRatioAtTwo) {
  Verdict fail = by_standard("gelu", ones(4), ones_but(4, 1, 1 + 0x1p-9), DType::Float16);
  EXPECT_EQ(fail.status, Status::Error);
  EXPECT_EQ(fail.method, Method::Benchmark);
  ASSERT_EQ(fail.criteria.size(), 5u);
  const Criterion* rmse = find(fail, "rmse");
  ASSERT_NE(rmse, nullptr);
  EXPECT_NEAR(rmse->value, 2.00007499921408, 1e-12);
  EXPECT_FALSE(rmse->pass);
  EXPECT_EQ(find(fail, "max relative")->value, 4);
  EXPECT_TRUE(find(fail, "max relative")->pass);
  EXPECT_EQ(find(fail, "mean relative")->value, 1);
  const Criterion* eb = find(fail, "error balance");
  EXPECT_EQ(eb->value, 512);
  EXPECT_FALSE(eb->pass);
  EXPECT_FALSE(eb->decides);

  Verdict pass = by_standard("gelu", ones(4), ones_but(4, 1, 1 + 0x1p-10), DType::Float16);
  EXPECT_EQ(pass.status, Status::Pass) << pass.message;
  EXPECT_NEAR(find(pass, "rmse")->value, 1.00003749961728, 1e-12);
}

// §3.1 old rule, float16: max abs < 0.001 passes at once (2^-10 = 0.0009765625); 2^-9 goes on to the dual
// ratios: rel 2^-9 < 0.01 for all (hundredth 1 > 0.99), rel >= 0.001 on 1 of 4 (thousandth 0.75) -> Warning.
TEST(Judge, OldRuleLadderIsRecorded) {
  Verdict early = judge("gelu", ones(4), ones_but(4, 0, 1 + 0x1p-10), msprobe_cfg(), DType::Float16);
  EXPECT_EQ(early.status, Status::Pass);
  ASSERT_EQ(early.criteria.size(), 2u);
  EXPECT_EQ(early.criteria[0].name, "cosine");
  EXPECT_EQ(early.criteria[1].name, "max abs error");
  EXPECT_EQ(early.criteria[1].value, 0x1p-10);
  EXPECT_TRUE(early.criteria[1].pass);

  Verdict warn = judge("gelu", ones(4), ones_but(4, 0, 1 + 0x1p-9), msprobe_cfg(), DType::Float16);
  EXPECT_EQ(warn.status, Status::Warning);
  ASSERT_EQ(warn.criteria.size(), 4u);
  EXPECT_FALSE(warn.criteria[1].pass);
  EXPECT_EQ(warn.criteria[2].value, 1);
  EXPECT_EQ(warn.criteria[3].value, 0.75);
  EXPECT_FALSE(warn.criteria[3].pass);
  EXPECT_NE(warn.message.find("consider as warning"), std::string::npos);
}

// DECISIONS D12 (probe profile): bf16 outputs count elements within relative error 2^-7 with the
// denominator |b| + 2^-8. b = 2 (x4), d = 2 + 2^-6 (one bf16 ulp at 2): rel = 2^-6 / (2 + 2^-8) < 2^-7 ->
// pass; msprobe profile: rel 0.0078 > 0.001 on 1 of 4 -> Warning.
TEST(Judge, Bf16BoundDependsOnTheProfile) {
  const Tensor b = f64({2, 2, 2, 2}), d = f64({2 + 0x1p-6, 2, 2, 2});
  Verdict probe = judge("gelu", b, d, probe_cfg(), DType::BFloat16, old_rule());
  EXPECT_EQ(probe.status, Status::Pass);
  EXPECT_NE(probe.criteria.back().name.find("D12"), std::string::npos);
  EXPECT_EQ(judge("gelu", b, d, msprobe_cfg(), DType::BFloat16).status, Status::Warning);
}

// D12's share on a tensor the thread pool splits into several 65536-element ranges: 300000 elements b = 1,
// d = 1 except k of them, one every 1000 (so in every range), at d = 1 + 2^-6 (two bf16 ulps above 1):
// rel = 2^-6 / (1 + 2^-8) = 0.0156, above 2^-7 and above 0.01, but k / n <= 0.001 keeps the hundredth
// above 0.99, and max_abs = 2^-6 >= 0.001, so the ladder reaches D12's step. Share (n - k) / n: k = 299 ->
// 0.999003 > 0.999 -> pass; k = 300 -> 0.999 exactly (the same double as 1 - 0.001) -> Warning.
TEST(Judge, Bf16ShareCountsEveryRangeOfALargeTensor) {
  constexpr std::size_t n = 300000;
  for (std::size_t k : {std::size_t{299}, std::size_t{300}}) {
    SCOPED_TRACE(k);
    std::vector<double> d(n, 1.0);
    for (std::size_t j = 0; j < k; ++j) d[1000 * j + 17] = 1 + 0x1p-6;
    Verdict v = judge("gelu", ones(n), f64(d), probe_cfg(), DType::BFloat16, old_rule());
    ASSERT_NE(v.criteria.back().name.find("D12"), std::string::npos);
    EXPECT_EQ(v.criteria.back().value, static_cast<double>(n - k) / static_cast<double>(n));
    EXPECT_EQ(v.status, k < 300 ? Status::Pass : Status::Warning) << v.message;
  }
}

// D12's share at its boundary, against the definition computed here with the division: an element counts
// when fl(|d - b| / (|b| + 2^-8)) < 2^-7. For every bfloat16 d in [1, 128) (both signs), the bench b that
// puts the relative error at 2^-7 exactly, (|d| - 2^-15) / (1 + 2^-7), and its four neighbours on each side
// (one ulp apart): quotients just below, at and just above 2^-7 after rounding. Every relative error stays
// below 0.01 and max_abs >= 0.001, so the ladder reaches D12's step.
TEST(Judge, Bf16ShareAtTheBoundaryMatchesTheDivision) {
  std::vector<double> bench, device;
  std::int64_t within = 0;
  for (int e = 0; e < 7; ++e)
    for (int m = 0; m < 128; ++m)
      for (double sign : {1.0, -1.0}) {
        const double d = sign * std::ldexp(1 + m / 128.0, e);
        double b = sign * ((std::fabs(d) - 0x1p-15) / (1 + 0x1p-7));
        for (int k = 0; k < 4; ++k) b = std::nextafter(b, 0.0);
        for (int k = 0; k < 9; ++k, b = std::nextafter(b, 2 * d)) {
          bench.push_back(b);
          device.push_back(d);
          within += std::fabs(d - b) / (std::fabs(b) + 0x1p-8) < 0x1p-7;
        }
      }
  const auto n = static_cast<double>(bench.size());
  ASSERT_GT(within, 0);
  ASSERT_LT(within, static_cast<std::int64_t>(bench.size()));
  Verdict v = judge("gelu", f64(bench), f64(device), probe_cfg(), DType::BFloat16, old_rule());
  ASSERT_NE(v.criteria.back().name.find("D12"), std::string::npos) << v.message;
  EXPECT_EQ(v.criteria.back().value, static_cast<double>(within) / n);
}

// Worst elements: non-finite mismatches first, then by ULPs of the device dtype at the bench's magnitude.
// fp16 at bench 1: ulp 2^-10; at bench 1024: ulp 1. Errors: index 1: 3 * 2^-10 at 1 -> 3 ulps;
// index 2: device 1026 vs bench 1024 -> 2 ulps; index 3: inf vs 5 -> first.
TEST(Judge, WorstElementsAreRankedAndDescribed) {
  const Tensor b = f64({1, 1, 1024, 5}), d = f64({1, 1 + 3 * 0x1p-10, 1026, INFINITY});
  JudgeOptions opt;
  opt.worst_count = 3;
  Verdict v = judge("gelu", b, d, msprobe_cfg(), DType::Float16, opt);
  ASSERT_EQ(v.worst.size(), 3u);
  EXPECT_EQ(v.worst[0].index, 3);
  EXPECT_FALSE(v.worst[0].ulp.has_value());
  EXPECT_EQ(v.worst[1].index, 1);
  EXPECT_EQ(v.worst[1].ulp, 3.0);
  EXPECT_EQ(v.worst[1].abs_err, 3 * 0x1p-10);
  EXPECT_EQ(v.worst[1].rel_err, 3 * 0x1p-10);
  EXPECT_EQ(v.worst[2].index, 2);
  EXPECT_EQ(v.worst[2].bench, 1024);
  EXPECT_EQ(v.worst[2].device, 1026);
  EXPECT_EQ(v.worst[2].ulp, 2.0);
  EXPECT_EQ(v.worst[2].rel_err, 2.0 / 1024);
}

// Every rule gives the worst elements' index per dimension: in a [2, 3] output flat index 4 is row 1,
// column 1, and index 2 is row 0, column 2 (row-major, worked by hand).
TEST(Judge, WorstElementsHaveTheirIndexPerDimension) {
  const Tensor b = f64({1, 1, 1, 1, 1, 1}).reshape({2, 3});
  const Tensor d = f64({1, 1, 1 + 2 * 0x1p-10, 1, 1 + 5 * 0x1p-10, 1}).reshape({2, 3});
  JudgeOptions opt = old_rule();  // run_ut's rule in both profiles (gelu's D14 needs a magnitude bench)
  opt.worst_count = 2;
  for (const Standards* cfg : {&msprobe_cfg(), &probe_cfg()}) {
    const Verdict v = judge("gelu", b, d, *cfg, DType::Float16, opt);
    ASSERT_EQ(v.worst.size(), 2u) << v.message;
    EXPECT_EQ(v.worst[0].index, 4);
    EXPECT_EQ(v.worst[0].coords, (std::vector<std::int64_t>{1, 1}));
    EXPECT_EQ(v.worst[1].index, 2);
    EXPECT_EQ(v.worst[1].coords, (std::vector<std::int64_t>{0, 2}));
  }
}

// More differing elements than worst_count, each worse than the one before it: the kept set must be the
// largest errors, not the first ones seen. fp16 at bench 1: device 1 + k * 2^-10 is k ulps off (k = 1..5 at
// indices 1..5; index 0 equal). The three worst are k = 5, 4, 3, largest first.
TEST(Judge, WorstElementsKeepTheLargestWhenErrorsRise) {
  const Tensor b = ones(6);
  const Tensor d = f64({1, 1 + 0x1p-10, 1 + 2 * 0x1p-10, 1 + 3 * 0x1p-10, 1 + 4 * 0x1p-10, 1 + 5 * 0x1p-10});
  JudgeOptions opt;
  opt.worst_count = 3;
  Verdict v = judge("gelu", b, d, msprobe_cfg(), DType::Float16, opt);
  ASSERT_EQ(v.worst.size(), 3u);
  for (std::size_t r = 0; r < 3; ++r) {
    const std::int64_t k = 5 - static_cast<std::int64_t>(r);
    EXPECT_EQ(v.worst[r].index, k) << "rank " << r;
    EXPECT_EQ(v.worst[r].ulp, static_cast<double>(k)) << "rank " << r;
    EXPECT_EQ(v.worst[r].abs_err, static_cast<double>(k) * 0x1p-10) << "rank " << r;
  }
  // The same with the errors falling instead: the order of arrival does not change the answer.
  const Tensor falling =
      f64({1, 1 + 5 * 0x1p-10, 1 + 4 * 0x1p-10, 1 + 3 * 0x1p-10, 1 + 2 * 0x1p-10, 1 + 0x1p-10});
  Verdict w = judge("gelu", b, falling, msprobe_cfg(), DType::Float16, opt);
  ASSERT_EQ(w.worst.size(), 3u);
  EXPECT_EQ(w.worst[0].index, 1);
  EXPECT_EQ(w.worst[1].index, 2);
  EXPECT_EQ(w.worst[2].index, 3);
}

// What the standards cannot judge is SKIP (api_precision_compare's SKIP rows), never pass; run_ut's rule
// says error for the same structural problems.
TEST(Judge, UncomparedIsSkipOrErrorNeverPass) {
  const Tensor b = f64({1, 2});
  Verdict shape = by_standard("gelu", b, f64({1, 2, 3}), DType::Float16);
  EXPECT_EQ(shape.status, Status::Skip);
  EXPECT_EQ(shape.method, Method::NotCompared);
  EXPECT_EQ(judge("gelu", b, f64({1, 2, 3}), msprobe_cfg(), DType::Float16).status, Status::Error);
  Verdict fp64 = by_standard("gelu", b, b, DType::Float64);
  EXPECT_EQ(fp64.status, Status::Skip);
  EXPECT_NE(fp64.message.find("not supported for new precision standard"), std::string::npos);
  Verdict empty = by_standard("gelu", f64({}), f64({}), DType::Float16);
  EXPECT_EQ(empty.status, Status::Skip);
}

TEST(Judge, ForcedStandardReplacesTheApiChoice) {
  JudgeOptions opt;
  opt.standard = Standard::Ulp;
  Verdict v = by_standard("gelu", ones(4), ones_but(4, 2, 1 + 0x1p-9), DType::Float16, msprobe_cfg(), opt);
  EXPECT_EQ(v.method, Method::Ulp);
  EXPECT_EQ(v.status, Status::Error);
}

TEST(Judge, StatusSpellingTableRoundTrips) {
  for (Status s : {Status::Pass, Status::Warning, Status::Error, Status::Skip})
    EXPECT_EQ(parse_status(to_string(s)), s);
  EXPECT_EQ(to_string(Status::Warning), "Warning");  // precheck.md §0.2: capital W
  EXPECT_EQ(to_string(Status::Skip), "SKIP");
  EXPECT_FALSE(parse_status(" ").has_value());
  EXPECT_FALSE(parse_status("PASS").has_value());
}

}  // namespace
}  // namespace probe
