// The error-bound verdict (DECISIONS D14, JudgeRule::ErrorBound): torch's fault-injection cases
// (tests/data/make_error_bound_fixtures.py) are all flagged and their clean outputs all pass, at every
// output scale; the magnitude bench and accumulation length of a call are what the hand derivations say.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/Slurp.h"
#include "probe/error_bound.h"
#include "probe/judge.h"
#include "probe/output_compare.h"
#include "probe/parallel.h"
#include "probe/runner.h"
#include "standards/ErrorBound.h"

namespace probe {
namespace {

std::vector<double> numbers(const rapidjson::Value& a) {
  std::vector<double> out;
  for (const auto& x : a.GetArray()) out.push_back(x.IsString() ? std::nan("") : x.GetDouble());
  return out;
}

Tensor f64(const std::vector<double>& v, Shape shape) {
  return Tensor::from_values<double>(v, std::move(shape));
}

const Standards& probe_standards() {
  static const Standards s = Standards::builtin(Profile::Probe);
  return s;
}
const Standards& msprobe_standards() {
  static const Standards s = Standards::builtin(Profile::MsProbe);
  return s;
}

// The rules compared in the table: D14 and the three msprobe-derived verdicts probe had before.
struct RuleColumn {
  const char* name;
  JudgeRule rule;
  const Standards* standards;
};

struct Tally {
  int faults = 0, caught = 0, warned = 0, clean = 0, false_alarms = 0;
};

TEST(ErrorBound, EveryTorchFaultIsFlaggedAndEveryCleanOutputPasses) {
  const std::string text = testing::slurp(std::string(PROBE_TEST_DATA_DIR) + "/error_bound/cases.json");
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  ASSERT_FALSE(doc.HasParseError());
  const RuleColumn columns[] = {
      {"error bound (D14)", JudgeRule::ErrorBound, &probe_standards()},
      {"run_ut rule, probe profile", JudgeRule::RunUt, &probe_standards()},
      {"run_ut rule, msprobe profile", JudgeRule::RunUt, &msprobe_standards()},
      {"precision standard, msprobe", JudgeRule::PrecisionStandard, &msprobe_standards()},
  };
  std::map<std::string, Tally> by_rule, by_fault, by_family;  // the last two for D14 only
  int cases = 0;
  for (const auto& c : doc["cases"].GetArray()) {
    ++cases;
    const std::string api = c["api"].GetString(), family = c["family"].GetString();
    const DType dtype = *parse_dtype(c["dtype"].GetString());
    Shape shape;
    for (const auto& d : c["shape"].GetArray()) shape.push_back(d.GetInt64());
    const Tensor bench = f64(numbers(c["bench"]), shape);
    JudgeOptions d14;
    d14.rule = JudgeRule::ErrorBound;
    if (c.HasMember("magnitude")) {
      d14.magnitude = f64(numbers(c["magnitude"]), shape);
      d14.accumulation = c["k"].GetInt64();
    }
    const std::string where =
        fmt::format("{} {} scale {:g}", family, c["dtype"].GetString(), c["scale"].GetDouble());
    auto verdict = [&](const RuleColumn& col, const Tensor& device) {
      JudgeOptions o = d14;
      o.rule = col.rule;
      // msprobe's rules know the API by its list name ("mm", "gelu").
      const std::string name = col.rule == JudgeRule::ErrorBound ? api : api.substr(api.find('.') + 1);
      return judge(name, bench, device, *col.standards, dtype, o);
    };
    const Tensor clean = f64(numbers(c["clean"]), shape);
    for (const RuleColumn& col : columns) {
      const Verdict v = verdict(col, clean);
      Tally& t = by_rule[col.name];
      ++t.clean;
      if (v.status != Status::Pass) ++t.false_alarms;
      if (col.rule == JudgeRule::ErrorBound) {
        ++by_family[family].clean;
        EXPECT_EQ(v.status, Status::Pass) << where << " clean: " << v.message;
        if (v.status != Status::Pass) ++by_family[family].false_alarms;
      }
    }
    for (const auto& f : c["faults"].GetObject()) {
      const std::string fault = f.name.GetString();
      const Tensor device = f64(numbers(f.value), shape);
      for (const RuleColumn& col : columns) {
        const Verdict v = verdict(col, device);
        Tally& t = by_rule[col.name];
        ++t.faults;
        const bool caught = v.status != Status::Pass;
        t.caught += caught;
        if (col.rule == JudgeRule::ErrorBound) {
          EXPECT_TRUE(caught) << where << " fault '" << fault << "' passed: " << v.message;
          ++by_fault[fault].faults;
          by_fault[fault].caught += caught;
          by_fault[fault].warned += v.status == Status::Warning;
          ++by_family[family].faults;
          by_family[family].caught += caught;
          if (caught) {
            ASSERT_FALSE(v.worst.empty()) << where << " " << fault;
            EXPECT_EQ(v.worst.front().coords.size(), shape.size());
          }
        }
      }
    }
  }
  EXPECT_GE(cases, 100);
  // The table of the note: recall and false alarms per rule, then D14 per fault and per family.
  std::cout << "rule | faults caught | clean outputs flagged\n";
  for (const auto& [name, t] : by_rule)
    std::cout << fmt::format("{} | {}/{} | {}/{}\n", name, t.caught, t.faults, t.false_alarms, t.clean);
  for (const auto& [name, t] : by_fault)
    std::cout << fmt::format("D14 fault {} | {}/{} ({} of them Warning)\n", name, t.caught, t.faults,
                             t.warned);
  for (const auto& [name, t] : by_family)
    std::cout << fmt::format("D14 family {} | {}/{} | {}/{}\n", name, t.caught, t.faults, t.false_alarms,
                             t.clean);
}

// The bias gradient of a mean-reduced loss is exactly zero in exact arithmetic; a float32 kernel leaves
// rounding noise. Judged against the magnitude of its terms it passes; a 2% error on a non-zero sum fails.
TEST(ErrorBound, ZeroSumWithRoundingNoisePassesAndAScaledSumFails) {
  std::mt19937 gen(7);
  std::normal_distribution<double> n(0.0, 1e-4);
  const int rows = 16, k = 512;
  std::vector<double> x(rows * k), bench(rows), magnitude(rows), device(rows);
  for (int r = 0; r < rows; ++r) {
    // pairs +v, -v of float32 values: the exact sum is 0; the float32 running sum is not, in general.
    std::vector<float> terms;
    for (int j = 0; j < k / 2; ++j) {
      const float v = static_cast<float>(n(gen));
      terms.push_back(v);
      terms.push_back(-v);
    }
    std::shuffle(terms.begin(), terms.end(), gen);
    float acc = 0;
    double exact = 0, mag = 0;
    for (int j = 0; j < k; ++j) {
      x[r * k + j] = terms[j];
      acc += terms[j];
      exact += terms[j];
      mag += std::fabs(terms[j]);
    }
    bench[r] = exact;
    magnitude[r] = mag;
    device[r] = acc;
  }
  int noisy = 0;
  for (int r = 0; r < rows; ++r) noisy += device[r] != 0;
  ASSERT_GT(noisy, 0) << "the float32 sums should carry rounding noise";
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  o.magnitude = f64(magnitude, {rows});
  o.accumulation = k;
  const Verdict v = judge("Aten.sum.dim_IntList", f64(bench, {rows}), f64(device, {rows}), probe_standards(),
                          DType::Float32, o);
  EXPECT_EQ(v.status, Status::Pass) << v.message;
  // The old rule's cosine on rounding noise around zero is meaningless: it is what made this an error.
  JudgeOptions old;
  old.rule = JudgeRule::RunUt;
  EXPECT_NE(
      judge("sum", f64(bench, {rows}), f64(device, {rows}), probe_standards(), DType::Float32, old).status,
      Status::Pass);

  // A non-zero sum 2% off is an error whatever the scale.
  for (double scale : {1e-9, 1.0, 1e4}) {
    std::vector<double> b(rows), d(rows), m(rows);
    for (int r = 0; r < rows; ++r) {
      b[r] = scale * (r + 1);
      m[r] = scale * (r + 1) * 3;
      d[r] = static_cast<float>(b[r] * (r == 5 ? 1.02 : 1.0));
    }
    o.magnitude = f64(m, {rows});
    const Verdict bad =
        judge("Torch.sum", f64(b, {rows}), f64(d, {rows}), probe_standards(), DType::Float32, o);
    EXPECT_EQ(bad.status, Status::Error) << scale << ": " << bad.message;
    ASSERT_FALSE(bad.worst.empty());
    EXPECT_EQ(bad.worst.front().coords, std::vector<std::int64_t>{5});
    EXPECT_GT(bad.worst.front().abs_err, bad.worst.front().bound);
  }
}

// Bounds at their edge for an element-wise family, derived by hand: exp in float32 has c = 8, K = 1 and
// g(1, u) = u / (1 - u), so the bound is (1 + 2^-10) (u + 8 u + u / (1 - u)) |b| + 2^-149, u = 2^-24.
TEST(ErrorBound, ElementwiseBoundAtItsEdge) {
  const double b = 1.5;
  const double u = std::ldexp(1.0, -24);
  const double bound = (1 + 1.0 / 1024) * (9 * u + u / (1 - u)) * b + std::ldexp(1.0, -149);
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  const Verdict v = judge("Torch.exp", f64({b}, {1}), f64({b * (1 + 9.5 * std::ldexp(1.0, -24))}, {1}),
                          probe_standards(), DType::Float32, o);
  // 1.5 (1 + 9.5 u) rounds to a float32 within the bound; 1.5 (1 + 12 u) does not.
  EXPECT_EQ(v.status, Status::Pass) << v.message;
  const Verdict w = judge("Torch.exp", f64({b}, {1}), f64({b * (1 + 12 * std::ldexp(1.0, -24))}, {1}),
                          probe_standards(), DType::Float32, o);
  EXPECT_EQ(w.status, Status::Error) << w.message;
  ASSERT_EQ(w.worst.size(), 1u);
  EXPECT_NEAR(w.worst[0].bound, bound, bound * 1e-15);
}

// A GEMM accumulated in bfloat16 is a Warning naming that cause, not a silent pass or a bare error: with
// K = 256 and magnitude 256, the float32 accumulation bound is 8 sqrt(256) 2^-24 256 ~ 2e-3 (plus the
// final rounding 2^-8 |b|) and the bfloat16 accumulation band 4 2^-8 256 = 4: an error of 0.5 on 20 is a
// Warning, a sign flip (error 40) an error.
TEST(ErrorBound, ReducedPrecisionAccumulationIsAWarningWithItsReason) {
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  o.magnitude = f64({256.0, 256.0}, {2});
  o.accumulation = 256;
  const Verdict v = judge("Torch.mm", f64({10.0, 20.0}, {2}), f64({10.0, 20.5}, {2}), probe_standards(),
                          DType::BFloat16, o);
  EXPECT_EQ(v.status, Status::Warning) << v.message;
  EXPECT_NE(v.message.find("reduced precision"), std::string::npos) << v.message;
  const Verdict e = judge("Torch.mm", f64({10.0, 20.0}, {2}), f64({10.0, -20.0}, {2}), probe_standards(),
                          DType::BFloat16, o);
  EXPECT_EQ(e.status, Status::Error) << e.message;
}

// An accumulating family without its magnitude bench is refused, never judged on |bench| alone.
TEST(ErrorBound, AccumulatingFamilyNeedsTheMagnitudeBench) {
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  EXPECT_THROW(judge("Torch.mm", f64({1.0}, {1}), f64({1.0}, {1}), probe_standards(), DType::Float32, o),
               Error);
  // An API without a D14 family is judged by run_ut's rule and says so.
  const Verdict v = judge("Torch.linalg.vector_norm", f64({1.0, 2.0}, {2}), f64({1.0, 2.0}, {2}),
                          probe_standards(), DType::Float32, o);
  EXPECT_EQ(v.status, Status::Pass);
  EXPECT_NE(v.message.find("no error bound"), std::string::npos) << v.message;
  // The default rule is D14 in the probe profile and run_ut's in the msprobe profile.
  const Verdict dflt =
      judge("Torch.exp", f64({1.0}, {1}), f64({-1.0}, {1}), probe_standards(), DType::Float32);
  EXPECT_EQ(dflt.method, Method::ErrorBound);
  EXPECT_EQ(judge("exp", f64({1.0}, {1}), f64({1.0}, {1}), msprobe_standards(), DType::Float32).method,
            Method::OldRule);
}

// The magnitude bench is the API on the inputs' absolute values: for mm, |a| |b| (by hand below); for sub,
// add on the absolute values; the accumulation length is the contracted dim.
TEST(ErrorBound, MagnitudeBenchAndAccumulationOfACall) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  ApiCall mm;
  mm.args = {Value(Tensor::from_values<float>({1, -2, 3, -4}, {2, 2})),
             Value(Tensor::from_values<float>({-5, 6, 7, -8}, {2, 2}))};
  const std::vector<Value> m = error_bound_magnitude(reg, Framework::PyTorch, "Torch.mm", mm);
  ASSERT_EQ(m.size(), 1u);
  // |a| |b| = [[1*5 + 2*7, 1*6 + 2*8], [3*5 + 4*7, 3*6 + 4*8]] = [[19, 22], [43, 50]]; D14 bounds it by
  // Cauchy-Schwarz, the row norms of a (sqrt 5, 5) times the column norms of b (sqrt 74, 10).
  const std::vector<double> got = m[0].tensor().to_doubles(), exact{19, 22, 43, 50},
                            want{std::sqrt(5.0 * 74), std::sqrt(5.0) * 10, 5 * std::sqrt(74.0), 50};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-12 * want[i]);
    EXPECT_GE(got[i], exact[i]);
  }
  // The gradients of mm for G = [[1, -1], [2, 0]]: dA = G B^T is bounded by ||G_i.|| ||B_k.|| (rows of B:
  // sqrt 61, sqrt 113), dB = A^T G by ||A_.k|| ||G_.j|| (columns of A: sqrt 10, sqrt 20; of G: sqrt 5, 1).
  const std::vector<InputGradient> gm = error_bound_grad_magnitude(
      reg, Framework::PyTorch, "Torch.mm", mm, {Value(Tensor::from_values<float>({1, -1, 2, 0}, {2, 2}))});
  ASSERT_EQ(gm.size(), 2u);
  EXPECT_EQ(gm[0].path, "input.0");
  const std::vector<double> da = gm[0].grad.to_doubles(), db = gm[1].grad.to_doubles();
  EXPECT_NEAR(da[1], std::sqrt(2.0) * std::sqrt(113.0), 1e-12);
  EXPECT_NEAR(da[2], 2 * std::sqrt(61.0), 1e-12);
  EXPECT_NEAR(db[0], std::sqrt(10.0) * std::sqrt(5.0), 1e-12);
  EXPECT_NEAR(db[3], std::sqrt(20.0) * 1, 1e-12);
  EXPECT_EQ(error_bound_accumulation("Torch.mm.0", mm, {2, 2}), 2);
  ApiCall sub;
  sub.args = {Value(Tensor::from_values<float>({1, -2}, {2})),
              Value(Tensor::from_values<float>({3, 4}, {2}))};
  const std::vector<Value> s = error_bound_magnitude(reg, Framework::PyTorch, "Torch.sub", sub);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].tensor().to_doubles(), (std::vector<double>{4, 6}));
  EXPECT_TRUE(error_bound_magnitude(reg, Framework::PyTorch, "Torch.exp", sub).empty());
  EXPECT_TRUE(error_bound_support("Aten.mm.default").needs_magnitude);
  EXPECT_EQ(error_bound_support("Tensor.__rmatmul__").family, "gemm");
  EXPECT_FALSE(error_bound_support("Torch.einsum").covered);
  // layer_norm: x = [1, 3] over K = 2 has mean 2, mean |x| 2, var 1, r = 1 (eps 0); with w = [2, -1] and
  // b = [0.5, -0.25], m = r |w| (|x - mean| + mean |x|) + |b| = [2 * 3 + 0.5, 1 * 3 + 0.25].
  ApiCall ln;
  ln.args = {Value(Tensor::from_values<float>({1, 3}, {1, 2})), Value(std::vector<Value>{Value(2)}),
             Value(Tensor::from_values<float>({2, -1}, {2})),
             Value(Tensor::from_values<float>({0.5, -0.25}, {2}))};
  ln.kwargs = {{"eps", Value(0.0)}};
  const std::vector<Value> lm = error_bound_magnitude(reg, Framework::PyTorch, "Functional.layer_norm", ln);
  ASSERT_EQ(lm.size(), 1u);
  EXPECT_EQ(lm[0].tensor().to_doubles(), (std::vector<double>{6.5, 3.25}));
  EXPECT_EQ(error_bound_accumulation("Functional.layer_norm", ln, {1, 2}), 2);
}

// DECISIONS D25: addmm's magnitude is |beta| |input| + |alpha| ||a_i.|| ||b_.j|| with input broadcast, by
// hand: rows of a [[1, -2], [3, -4]] have norms sqrt 5 and 5, columns of b [[-5, 6], [7, -8]] sqrt 74 and 10.
// DECISIONS D25: torch casts a Python number to the output dtype; one exact there rounds nothing. By hand:
// 0.5, 2 and 3 are exact in bfloat16 (8 significant bits); 257 needs 9 (exact in float16's 11); 0.1 is
// exact in no binary format; sqrt(48) as aten's wrapped float64 number is not exact in bfloat16.
TEST(ErrorBound, ExactScalarsAreThoseTheOutputDtypeHolds) {
  auto call = [](std::vector<Value> args, std::vector<std::pair<std::string, Value>> kwargs = {}) {
    ApiCall c;
    c.args = std::move(args);
    c.kwargs = std::move(kwargs);
    return c;
  };
  const Value x(Tensor::from_values<float>({1, 2}, {2}));
  EXPECT_TRUE(error_bound_exact_scalars(call({x, x}, {{"alpha", Value(0.5)}}), DType::BFloat16));
  EXPECT_TRUE(
      error_bound_exact_scalars(call({x, Value(2.0)}, {{"alpha", Value(std::int64_t{3})}}), DType::BFloat16));
  EXPECT_FALSE(error_bound_exact_scalars(call({x, Value(std::int64_t{257})}), DType::BFloat16));
  EXPECT_TRUE(error_bound_exact_scalars(call({x, Value(std::int64_t{257})}), DType::Float16));
  EXPECT_FALSE(error_bound_exact_scalars(call({x, x}, {{"alpha", Value(0.1)}}), DType::Float32));
  EXPECT_FALSE(error_bound_exact_scalars(call({x, x}, {{"alpha", Value(-0.05)}}), DType::BFloat16));
  EXPECT_TRUE(error_bound_exact_scalars(call({x, x}, {{"non_blocking", Value(true)}}), DType::BFloat16));
  EXPECT_FALSE(error_bound_exact_scalars(call({x, Value(Tensor::from_values<double>({std::sqrt(48.0)}, {}))}),
                                         DType::BFloat16));
  EXPECT_TRUE(
      error_bound_exact_scalars(call({x, Value(Tensor::from_values<double>({0.25}, {}))}), DType::BFloat16));
  EXPECT_FALSE(error_bound_exact_scalars(call({x}), DType::Int32));
  // The term it removes, on mul (correctly rounded, one rounding of |b| = 1 in bfloat16: u = 2^-8): a
  // device 2 u away is beyond (1 + 2^-10)(u + 2 2^-24) with an exact scalar and within one more u without.
  const Tensor bench = Tensor::from_values<double>({1.0}, {1});
  const Tensor device = Tensor::from_values<double>({1.0078125}, {1}).to(DType::BFloat16);
  JudgeOptions o;
  EXPECT_EQ(judge("Torch.mul", bench, device, probe_standards(), DType::BFloat16, o).status, Status::Pass);
  o.exact_scalars = true;
  EXPECT_EQ(judge("Torch.mul", bench, device, probe_standards(), DType::BFloat16, o).status, Status::Error);
}

// DECISIONS D25: conv2d's magnitude is ||x_patch|| ||w_co|| + |bias_co| per output element, checked against a
// direct loop over the receptive field (groups 2, stride 2, padding 1, dilation 2, a batch of 2), which
// also gives the exact sum on absolute values that it must bound.
TEST(ErrorBound, ConvTakesThePatchNormTimesTheFilterNorm) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  constexpr std::int64_t N = 2, C = 4, H = 7, W = 6, CO = 6, G = 2, KH = 3, KW = 2, S = 2, P = 1, D = 2;
  constexpr std::int64_t CG = C / G, OH = (H + 2 * P - D * (KH - 1) - 1) / S + 1,
                         OW = (W + 2 * P - D * (KW - 1) - 1) / S + 1;
  std::mt19937 gen(25);
  std::normal_distribution<float> nd;
  auto random = [&](std::int64_t n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& e : v) e = nd(gen);
    return v;
  };
  const std::vector<float> x = random(N * C * H * W), w = random(CO * CG * KH * KW), b = random(CO);
  ApiCall call;
  call.args = {Value(Tensor::from_values<float>(x, {N, C, H, W})),
               Value(Tensor::from_values<float>(w, {CO, CG, KH, KW})),
               Value(Tensor::from_values<float>(b, {CO})),
               Value(std::vector<Value>{Value(S), Value(S)}),
               Value(std::vector<Value>{Value(P), Value(P)}),
               Value(std::vector<Value>{Value(D), Value(D)}),
               Value(G)};
  const std::vector<Value> m = error_bound_magnitude(reg, Framework::PyTorch, "Functional.conv2d", call);
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(m[0].tensor().shape(), (Shape{N, CO, OH, OW}));
  const std::vector<double> got = m[0].tensor().to_doubles();
  auto at = [](const std::vector<float>& v, std::int64_t i) {
    return static_cast<double>(v[static_cast<std::size_t>(i)]);
  };
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t co = 0; co < CO; ++co)
      for (std::int64_t oh = 0; oh < OH; ++oh)
        for (std::int64_t ow = 0; ow < OW; ++ow) {
          double patch = 0, filter = 0, exact = 0;
          for (std::int64_t c = 0; c < CG; ++c)
            for (std::int64_t kh = 0; kh < KH; ++kh)
              for (std::int64_t kw = 0; kw < KW; ++kw) {
                const double wv = at(w, ((co * CG + c) * KH + kh) * KW + kw);
                filter += wv * wv;
                const std::int64_t ih = oh * S - P + kh * D, iw = ow * S - P + kw * D;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const double xv = at(x, ((n * C + co / (CO / G) * CG + c) * H + ih) * W + iw);
                patch += xv * xv;
                exact += std::fabs(xv * wv);
              }
          const double want = std::sqrt(patch) * std::sqrt(filter) + std::fabs(at(b, co));
          const double g = got[static_cast<std::size_t>(((n * CO + co) * OH + oh) * OW + ow)];
          EXPECT_NEAR(g, want, 1e-12 * want) << n << " " << co << " " << oh << " " << ow;
          EXPECT_GE(g * (1 + 1e-12), exact + std::fabs(at(b, co)));
        }
  // conv1d on an unbatched input [2, 4] by hand: ||w|| = sqrt(1 + 1 + 4) and the patches (1, 2 | 0, 1),
  // (2, 3 | 1, 0), (3, 4 | 0, 1) have norms sqrt 6, sqrt 14, sqrt 26.
  ApiCall c1;
  c1.args = {Value(Tensor::from_values<float>({1, 2, 3, 4, 0, 1, 0, 1}, {2, 4})),
             Value(Tensor::from_values<float>({1, -1, 2, 0}, {1, 2, 2}))};
  const std::vector<Value> m1 = error_bound_magnitude(reg, Framework::PyTorch, "Functional.conv1d", c1);
  ASSERT_EQ(m1.size(), 1u);
  ASSERT_EQ(m1[0].tensor().shape(), (Shape{1, 3}));
  const std::vector<double> g1 = m1[0].tensor().to_doubles();
  EXPECT_NEAR(g1[0], 6, 1e-12);
  EXPECT_NEAR(g1[1], std::sqrt(84.0), 1e-12);
  EXPECT_NEAR(g1[2], std::sqrt(156.0), 1e-12);
}

// DECISIONS D25 on real torch convolutions (tests/data/make_conv_fault_fixtures.py: four geometries, float32
// and bfloat16): with the Cauchy-Schwarz magnitude every fault (1% on a tile, 2% on a channel, a sign flip)
// is flagged and no clean output is an error, as with the exact magnitude (the convolution on absolute
// values) D14 used before; the table prints both.
TEST(ErrorBound, ConvFaultsAreFlaggedWithTheNormMagnitude) {
  const std::string text = testing::slurp(std::string(PROBE_TEST_DATA_DIR) + "/conv_faults/cases.json");
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  ASSERT_FALSE(doc.HasParseError());
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  auto shape_of = [](const rapidjson::Value& a) {
    Shape s;
    for (const auto& d : a.GetArray()) s.push_back(d.GetInt64());
    return s;
  };
  std::map<std::string, std::pair<int, int>> caught;  // "magnitude / fault" -> (flagged, of)
  for (const auto& c : doc["cases"].GetArray()) {
    const DType dtype = *parse_dtype(c["dtype"].GetString());
    const std::string where = std::string(c["geometry"].GetString()) + ", " + c["dtype"].GetString();
    const Shape out_shape = shape_of(c["out_shape"]);
    ApiCall call;
    call.args = {Value(f64(numbers(c["x"]), shape_of(c["x_shape"])).to(dtype)),
                 Value(f64(numbers(c["w"]), shape_of(c["w_shape"])).to(dtype)),
                 Value(f64(numbers(c["b"]), {shape_of(c["w_shape"])[0]}).to(dtype)),
                 Value(c["stride"].GetInt64()),
                 Value(c["padding"].GetInt64()),
                 Value(c["dilation"].GetInt64()),
                 Value(c["groups"].GetInt64())};
    const std::vector<Value> norm = error_bound_magnitude(reg, Framework::PyTorch, "Functional.conv2d", call);
    ASSERT_EQ(norm.size(), 1u) << where;
    const Tensor exact = f64(numbers(c["exact_magnitude"]), out_shape);
    const Tensor bench = f64(numbers(c["bench"]), out_shape);
    // The norm product bounds the sum on absolute values everywhere.
    const std::vector<double> nv = norm[0].tensor().to_doubles(), ev = exact.to_doubles();
    for (std::size_t i = 0; i < nv.size(); ++i) ASSERT_GE(nv[i] * (1 + 1e-12), ev[i]) << where << " " << i;
    for (const auto& [label, magnitude] : {std::pair<std::string, Tensor>{"norms (D25)", norm[0].tensor()},
                                           std::pair<std::string, Tensor>{"|x| conv |w| (before)", exact}}) {
      JudgeOptions o;
      o.magnitude = magnitude;
      o.accumulation = error_bound_accumulation("Functional.conv2d", call, out_shape);
      const Verdict clean =
          judge("conv2d", bench, f64(numbers(c["clean"]), out_shape).to(dtype), probe_standards(), dtype, o);
      EXPECT_NE(clean.status, Status::Error) << label << ", " << where << ": " << clean.message;
      auto& [cf, cn] = caught[label + " / clean rows flagged"];
      cf += clean.status != Status::Pass;
      ++cn;
      for (const auto& f : c["faults"].GetArray()) {
        const Verdict v = judge("conv2d", bench, f64(numbers(f["value"]), out_shape).to(dtype),
                                probe_standards(), dtype, o);
        auto& [flagged, of] = caught[label + " / " + f["name"].GetString()];
        flagged += v.status != Status::Pass;
        ++of;
        if (label == "norms (D25)") {
          EXPECT_NE(v.status, Status::Pass) << f["name"].GetString() << ", " << where << ": " << v.message;
        }
      }
    }
  }
  for (const auto& [k, v] : caught) std::cout << k << ": " << v.first << " of " << v.second << "\n";
}

TEST(ErrorBound, AddmmAndBaddbmmTakeTheNormProductPlusTheAddedTerm) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  const Tensor a = Tensor::from_values<float>({1, -2, 3, -4}, {2, 2}),
               b = Tensor::from_values<float>({-5, 6, 7, -8}, {2, 2});
  const double r0 = std::sqrt(5.0), r1 = 5, c0 = std::sqrt(74.0), c1 = 10;
  auto magnitude = [&](const char* api, ApiCall call) {
    const std::vector<Value> m = error_bound_magnitude(reg, Framework::PyTorch, api, call);
    EXPECT_EQ(m.size(), 1u);
    return m.empty() ? std::vector<double>{} : m[0].tensor().to_doubles();
  };
  auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12 * want[i]) << i;
  };
  // A bias per column [N] (linear's), alpha = -2 and beta = 0.5 as keywords.
  ApiCall addmm;
  addmm.args = {Value(Tensor::from_values<float>({-1, 3}, {2})), Value(a), Value(b)};
  addmm.kwargs = {{"beta", Value(0.5)}, {"alpha", Value(-2.0)}};
  near(magnitude("Torch.addmm", addmm),
       {0.5 * 1 + 2 * r0 * c0, 0.5 * 3 + 2 * r0 * c1, 0.5 * 1 + 2 * r1 * c0, 0.5 * 3 + 2 * r1 * c1});
  // A bias per row [M, 1] under aten's name and argument name (self).
  ApiCall aten;
  aten.args = {Value(Tensor::from_values<float>({4, -7}, {2, 1})), Value(a), Value(b)};
  near(magnitude("Aten.addmm.default", aten), {4 + r0 * c0, 4 + r0 * c1, 7 + r1 * c0, 7 + r1 * c1});
  // beta = 0: the added term is ignored, NaN included.
  ApiCall ignored = aten;
  ignored.args[0] = Value(Tensor::from_values<float>({std::nanf(""), 1}, {2, 1}));
  ignored.kwargs = {{"beta", Value(0.0)}};
  near(magnitude("Torch.addmm", ignored), {r0 * c0, r0 * c1, r1 * c0, r1 * c1});
  // baddbmm: batch 0 is (a, b), batch 1 is (b, a) (rows of b: sqrt 61, sqrt 113; columns of a: sqrt 10,
  // sqrt 20), plus a scalar input 0.25.
  ApiCall baddbmm;
  std::vector<float> ab{1, -2, 3, -4, -5, 6, 7, -8}, ba{-5, 6, 7, -8, 1, -2, 3, -4};
  baddbmm.args = {Value(Tensor::from_values<float>({0.25f}, {})),
                  Value(Tensor::from_values<float>(ab, {2, 2, 2})),
                  Value(Tensor::from_values<float>(ba, {2, 2, 2}))};
  const double s61 = std::sqrt(61.0), s113 = std::sqrt(113.0), s10 = std::sqrt(10.0), s20 = std::sqrt(20.0);
  near(magnitude("Torch.baddbmm", baddbmm),
       {0.25 + r0 * c0, 0.25 + r0 * c1, 0.25 + r1 * c0, 0.25 + r1 * c1, 0.25 + s61 * s10, 0.25 + s61 * s20,
        0.25 + s113 * s10, 0.25 + s113 * s20});
  // Every element bounds the exact sum on absolute values (the registry's bench on |inputs|).
  const std::vector<double> exact =
      reg.run_forward(
             Framework::PyTorch, "Torch.baddbmm",
             [&] {
               ApiCall abs_call = baddbmm;
               abs_call.args[1] = Value(Tensor::from_values<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}));
               abs_call.args[2] = Value(Tensor::from_values<float>({5, 6, 7, 8, 1, 2, 3, 4}, {2, 2, 2}));
               return abs_call;
             }(),
             RunnerRole::Bench)
          .outputs.at(0)
          .tensor()
          .to_doubles();
  const std::vector<double> bound = magnitude("Torch.baddbmm", baddbmm);
  for (std::size_t i = 0; i < exact.size(); ++i) EXPECT_GE(bound[i], exact[i]) << i;
  // A bias that does not broadcast to the output falls back to the bench on absolute values.
  ApiCall odd = aten;
  odd.args[0] = Value(Tensor::from_values<float>({1, 2, 3}, {3}));
  EXPECT_ANY_THROW(error_bound_magnitude(reg, Framework::PyTorch, "Torch.addmm", odd));
}

// A float64 output's bench carries an error of the device's size, so its accumulation term is doubled:
// exp in float64 has c = 8, K = 1, u = u_out = u_acc = 2^-53, and its bound at b = 1.5 is
// (1 + 2^-10) (u + 2 (8 u + u / (1 - u))) 1.5 + 2^-1074 = 28.53 u. Float64's ulp at 1.5 is 2^-52 = 2 u:
// 14 ulps (28 u) pass, 15 ulps (30 u) fail. (Without the doubling the bound is 15.01 u; with u_acc = 2^-52,
// 55.5 u.)
TEST(ErrorBound, Float64OutputsDoubleTheAccumulationTerm) {
  const double b = 1.5, u = std::ldexp(1.0, -53);
  const double bound = (1 + 1.0 / 1024) * (u + 2 * (8 * u + u / (1 - u))) * b + std::ldexp(1.0, -1074);
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  auto verdict = [&](int ulps) {
    return judge("Torch.exp", f64({b}, {1}), f64({b + ulps * std::ldexp(1.0, -52)}, {1}), probe_standards(),
                 DType::Float64, o);
  };
  EXPECT_EQ(verdict(14).status, Status::Pass) << verdict(14).message;
  const Verdict w = verdict(15);
  EXPECT_EQ(w.status, Status::Error) << w.message;
  ASSERT_EQ(w.worst.size(), 1u);
  EXPECT_NEAR(w.worst[0].bound, bound, bound * 1e-15);
}

// The reduced-precision band (a Warning) belongs to low-precision sums whose precision is a kernel's
// choice, K > 1, and its u_low is TF32's 2^-11 for float32. Float32 mm, K = 256, magnitude 256, bench 20:
// the bound is (1 + 2^-10) (2^-24 20 + (2^-24 + 8 sqrt(256) 2^-24) 256) = 1.97e-3, the band's
// (1 + 2^-10) (2^-24 20 + (2^-24 + 4 2^-11) 256) = 0.50: an error of 0.25 is a Warning naming TF32, an error
// of 1 an error (bfloat16's 2^-8 would make the band 4).
TEST(ErrorBound, ReducedPrecisionBandOnlyWhereTheKernelChoosesThePrecision) {
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  o.magnitude = f64({256.0}, {1});
  o.accumulation = 256;
  const Verdict tf32 =
      judge("Torch.mm", f64({20.0}, {1}), f64({20.25}, {1}), probe_standards(), DType::Float32, o);
  EXPECT_EQ(tf32.status, Status::Warning) << tf32.message;
  EXPECT_NE(tf32.message.find("TF32"), std::string::npos) << tf32.message;
  const Verdict off =
      judge("Torch.mm", f64({20.0}, {1}), f64({21.0}, {1}), probe_standards(), DType::Float32, o);
  EXPECT_EQ(off.status, Status::Error) << off.message;
  // add is one rounding (K = 1): no band. bfloat16, bench 10, magnitude 30: bound (1 + 2^-10) (2^-8 10 +
  // (2 2^-24 + 2^-24 / (1 - 2^-24)) 30) = 0.039; an error of 0.25 (within the 4 2^-8 30 = 0.47 a band would
  // give) is an error.
  o.magnitude = f64({30.0}, {1});
  o.accumulation = 1;
  const Verdict add =
      judge("Torch.add", f64({10.0}, {1}), f64({10.25}, {1}), probe_standards(), DType::BFloat16, o);
  EXPECT_EQ(add.status, Status::Error) << add.message;
  EXPECT_EQ(add.criteria.size(), 2u);
  // A float64 GEMM has no reduced-precision band either: its verdict has no such criterion.
  o.magnitude = f64({256.0}, {1});
  o.accumulation = 256;
  const Verdict f64mm =
      judge("Torch.mm", f64({20.0}, {1}), f64({21.0}, {1}), probe_standards(), DType::Float64, o);
  EXPECT_EQ(f64mm.status, Status::Error) << f64mm.message;
  EXPECT_EQ(f64mm.criteria.size(), 2u);
  EXPECT_EQ(tf32.criteria.size(), 3u);
}

// Above K = 64 the accumulation term is the probabilistic 8 sqrt(K) u, not a looser multiple. Float32 sum,
// K = 10000, magnitude 1, bench 0.5: bound (1 + 2^-10) (0.5 u + (2 u + 8 100 u)) = 803.3 u (the worst case
// K u / (1 - K u) is 10006 u); u = 2^-24. An error of 700 u passes, 1000 u does not (a Warning: within the
// band 4 2^-11 = 32768 u).
TEST(ErrorBound, LongSumsUseEightStandardDeviations) {
  const double u = std::ldexp(1.0, -24);
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  o.magnitude = f64({1.0}, {1});
  o.accumulation = 10000;
  // 0.5 + j u is a float32 (its ulp at 0.5 is 2^-24 = u) for integer j.
  const Verdict in =
      judge("Torch.sum", f64({0.5}, {1}), f64({0.5 + 700 * u}, {1}), probe_standards(), DType::Float32, o);
  EXPECT_EQ(in.status, Status::Pass) << in.message;
  const Verdict out =
      judge("Torch.sum", f64({0.5}, {1}), f64({0.5 + 1000 * u}, {1}), probe_standards(), DType::Float32, o);
  EXPECT_EQ(out.status, Status::Warning) << out.message;
  ASSERT_EQ(out.worst.size(), 1u);
  const double bound = (1 + 1.0 / 1024) * (0.5 * u + 2 * u + 800 * u) + std::ldexp(1.0, -149);
  EXPECT_NEAR(out.worst[0].bound, bound, bound * 1e-15);
}

// NaN must meet NaN; an infinity passes only where the bench is beyond float32's largest finite value
// (3.4028234663852886e38), with the same sign.
TEST(ErrorBound, NonFiniteValuesMustMatch) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  auto status = [&](double b, double d) {
    return judge("Torch.exp", f64({b}, {1}), f64({d}, {1}), probe_standards(), DType::Float32, o).status;
  };
  EXPECT_EQ(status(nan, nan), Status::Pass);
  EXPECT_EQ(status(1.0, nan), Status::Error);
  EXPECT_EQ(status(nan, 1.0), Status::Error);
  EXPECT_EQ(status(1e39, inf), Status::Pass);
  EXPECT_EQ(status(-1e39, -inf), Status::Pass);
  EXPECT_EQ(status(1e39, -inf), Status::Error);
  EXPECT_EQ(status(1.0, inf), Status::Error);
  EXPECT_EQ(status(3e38, inf), Status::Error);
}

// The worst elements are the largest error/bound ratios of the whole tensor, largest first, worst_count of
// them, whichever worker scanned them. exp in float32 at b = 1.5 (bound 10 u 1.5 = 7.5 ulps of 2^-23, as in
// ElementwiseBoundAtItsEdge): every element 1 ulp off (within), five elements 100..500 ulps off. Which
// workers take the four 65536-element ranges is up to the scheduler, so the verdict is taken 20 times.
TEST(ErrorBound, WorstElementsAreTheLargestRatiosOfAllWorkers) {
  struct Threads {
    int before = num_threads();
    Threads() { set_num_threads(4); }
    ~Threads() { set_num_threads(before); }
  } threads;
  const std::int64_t n = 4 * 65536;  // four ranges of the verdict's 65536-element grain
  const double ulp = std::ldexp(1.0, -23);
  std::vector<double> bench(static_cast<std::size_t>(n), 1.5), device(bench.size(), 1.5 + ulp);
  const std::vector<std::pair<std::int64_t, int>> off = {
      {5, 100}, {70000, 400}, {140000, 300}, {200000, 200}, {260000, 500}};
  for (const auto& [at, ulps] : off) device[static_cast<std::size_t>(at)] = 1.5 + ulps * ulp;
  const Tensor b = f64(bench, {n}), d = Tensor::from_values<double>(device, {n}).to(DType::Float32);
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  for (int run = 0; run < 20; ++run) {
    const Verdict v = judge("Torch.exp", b, d, probe_standards(), DType::Float32, o);
    EXPECT_EQ(v.status, Status::Error);
    EXPECT_EQ(v.criteria.front().value, 5.0);  // elements beyond their bound
    ASSERT_EQ(v.worst.size(), 3u) << "run " << run;
    EXPECT_EQ(v.worst[0].index, 260000);
    EXPECT_EQ(v.worst[1].index, 70000);
    EXPECT_EQ(v.worst[2].index, 140000);
    EXPECT_NE(v.message.find("worst at [260000]"), std::string::npos) << v.message;
    if (HasFailure()) break;
  }
}

// K of each accumulation kind, by hand: addmm(bias [3], mat1 [2, 5], mat2 [5, 3]) sums 5 products; conv2d's
// weight [8, 3, 3, 3] is [out, in, 3, 3]: 27 terms; aten's convolution may be transposed ([in, out, 3, 3],
// 72 terms): K bounds both, 216 / min(8, 3) = 72; sum of [4, 6] to [4] adds 6; mm [2, 3] x [3, 4]: the
// gradient of the first input (g [2, 4] times b^T) sums 4 products, of the second (a^T g) 2: 2 4 3 / 6 and
// / 12.
TEST(ErrorBound, AccumulationLengthOfEachKind) {
  auto t = [](Shape s) { return Value(Tensor::zeros(DType::Float32, std::move(s))); };
  ApiCall addmm;
  addmm.args = {t({3}), t({2, 5}), t({5, 3})};
  EXPECT_EQ(error_bound_accumulation("Torch.addmm", addmm, {2, 3}), 5);
  ApiCall conv;
  conv.args = {t({1, 3, 8, 8}), t({8, 3, 3, 3})};
  EXPECT_EQ(error_bound_accumulation("Functional.conv2d.0", conv, {1, 8, 6, 6}), 27);
  EXPECT_EQ(error_bound_accumulation("Aten.convolution.default", conv, {1, 8, 6, 6}), 72);
  ApiCall sum;
  sum.args = {t({4, 6}), Value(std::int64_t{1})};
  EXPECT_EQ(error_bound_accumulation("Torch.sum", sum, {4}), 6);
  ApiCall mm;
  mm.args = {t({2, 3}), t({3, 4})};
  EXPECT_EQ(error_bound_grad_accumulation("Torch.mm", mm, {2, 4}, {2, 3}), 4);
  EXPECT_EQ(error_bound_grad_accumulation("Torch.mm", mm, {2, 4}, {3, 4}), 2);
}

// Re-judging run_ut's rows: a SKIP row stays SKIP (run_ut could not compare it); the other rows take D14's
// verdict (exp 1.5 against 3.0 is far beyond its bound).
TEST(ErrorBound, RejudgedRowsKeepSkip) {
  const Value bench(f64({1.5}, {1})), device(Tensor::from_values<float>({3.0f}, {1}));
  std::vector<DetailRow> rows(2);
  rows[0].status = Status::Skip;
  rows[0].message = "skipped by run_ut";
  rows[1].status = Status::Pass;
  detail::rejudge_rows("Torch.exp", {bench, bench}, {device, device}, {}, {1, 1}, rows, 0,
                       Aggregation::Worst);
  EXPECT_EQ(rows[0].status, Status::Skip);
  EXPECT_EQ(rows[0].message, "skipped by run_ut");
  EXPECT_EQ(rows[1].status, Status::Error) << rows[1].message;
}

// log_softmax's error is the logarithm's of a sum: absolute, relative to the sum, so its magnitude is
// |b| + 1. float32, b = -2^-10, K = 1 (shape [1]): bound (1 + 2^-10) (2^-34 + (8 u + u / (1 - u))
// (1 + 2^-10)) = 9.02 u, u = 2^-24. An error of 4 u = 2^-22 passes (|b| alone would give 0.0098 u).
TEST(ErrorBound, LogSoftmaxIsBoundedByItsBenchPlusOne) {
  const double u = std::ldexp(1.0, -24), b = -std::ldexp(1.0, -10);
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  const Verdict in = judge("Functional.log_softmax.0", f64({b}, {1}), f64({b + 4 * u}, {1}),
                           probe_standards(), DType::Float32, o);
  EXPECT_EQ(in.status, Status::Pass) << in.message;
  const Verdict out = judge("Functional.log_softmax.0", f64({b}, {1}), f64({b + 16 * u}, {1}),
                            probe_standards(), DType::Float32, o);
  EXPECT_EQ(out.status, Status::Error) << out.message;
  ASSERT_EQ(out.worst.size(), 1u);
  const double bound = (1 + 1.0 / 1024) * (u * -b + (8 * u + u / (1 - u)) * (1 - b)) + std::ldexp(1.0, -149);
  EXPECT_NEAR(out.worst[0].bound, bound, bound * 1e-15);
}

// softmax's exp sees x - max rounded: its magnitude is |b| (1 + |ln |b|| + ln K), K the largest dim, which
// judge takes from the bench when the caller gives none. 1024 equal logits: b = 2^-10 everywhere, K = 1024,
// ln 1024 = |ln 2^-10| = 6.93; g(1024, u) = min(1024 u / (1 - 1024 u), 8 32 u) = 256 u; bound (1 + 2^-10)
// (u + (8 u + 256 u)(1 + 2 6.93)) 2^-10 = 3928.6 u 2^-10. An element 3000 u 2^-10 off passes (without
// ln K the bound would be 2096 u 2^-10, with K = 1 72 u 2^-10), one 4000 u 2^-10 off does not.
TEST(ErrorBound, SoftmaxMagnitudeTakesLnKOfTheLargestDim) {
  const double u = std::ldexp(1.0, -24), b = std::ldexp(1.0, -10);
  const std::int64_t k = 1024;
  std::vector<double> bench(k, b), device(k, b);
  JudgeOptions o;
  o.rule = JudgeRule::ErrorBound;
  device[7] = b + 3000 * u * b;  // a float32: 1500 of its ulps (2^-33) at 2^-10
  const Verdict in =
      judge("Functional.softmax.0", f64(bench, {k}), f64(device, {k}), probe_standards(), DType::Float32, o);
  EXPECT_EQ(in.status, Status::Pass) << in.message;
  device[7] = b + 4000 * u * b;
  const Verdict out =
      judge("Functional.softmax.0", f64(bench, {k}), f64(device, {k}), probe_standards(), DType::Float32, o);
  EXPECT_EQ(out.status, Status::Error) << out.message;
  ASSERT_FALSE(out.worst.empty());
  const double ln = 10 * std::log(2.0);
  const double bound = (1 + 1.0 / 1024) * (u + 264 * u * (1 + 2 * ln)) * b + std::ldexp(1.0, -149);
  EXPECT_NEAR(out.worst[0].bound, bound, bound * 1e-15);
}

}  // namespace
}  // namespace probe

namespace probe {
namespace {

// DECISIONS D20: torch's own bfloat16 CPU kernels (tests/data/make_error_bound_fixtures.py,
// reduced_kernels.json: rsqrt, sigmoid, exp, tanh, silu and silu's backward on 8 elements, the scalar
// path, and 1024, the vectorised one) round intermediate results to bfloat16. None of their outputs is an
// error; those that are not within D14's bound are Warnings naming the roundings; one element 3% off or
// a sign flip on the largest element stays an error (forward) or at least a Warning (silu's backward,
// whose band is 8 roundings of |dy| s (1 + |x|)).
TEST(ErrorBound, TorchBfloat16KernelsRoundingIntermediatesAreWarningsAndFaultsStayCaught) {
  const std::string text =
      testing::slurp(std::string(PROBE_TEST_DATA_DIR) + "/error_bound/reduced_kernels.json");
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  ASSERT_FALSE(doc.HasParseError());
  int cases = 0, warnings = 0, not_rounded_once = 0;
  for (const auto& c : doc["cases"].GetArray()) {
    ++cases;
    const std::string api = c["api"].GetString(), direction = c["direction"].GetString();
    const bool backward = direction == "backward";
    Shape shape;
    for (const auto& d : c["shape"].GetArray()) shape.push_back(d.GetInt64());
    const Tensor bench = f64(numbers(c["bench"]), shape);
    const Tensor device = f64(numbers(c["device"]), shape).to(DType::BFloat16);
    std::optional<Tensor> mag;
    if (c.HasMember("magnitude")) mag = f64(numbers(c["magnitude"]), shape);
    const detail::BoundFamily* family = detail::bound_family(api, backward);
    ASSERT_NE(family, nullptr) << api;
    auto verdict = [&](const Tensor& d) {
      return detail::error_bound_verdict(*family, bench, d, mag ? &*mag : nullptr, 1, 1);
    };
    const std::string where = fmt::format("{} {} n={}", api, direction, shape[0]);
    const Verdict v = verdict(device);
    not_rounded_once += c["not_rounded_once"].GetInt();
    EXPECT_NE(v.status, Status::Error) << where << ": " << v.message;
    if (v.status == Status::Warning) {
      ++warnings;
      EXPECT_NE(v.message.find("rounds its intermediate results to bfloat16 (D20"), std::string::npos)
          << v.message;
    }
    for (const auto& f : c["faults"].GetObject()) {
      const Verdict fv = verdict(f64(numbers(f.value), shape).to(DType::BFloat16));
      if (backward)
        EXPECT_NE(fv.status, Status::Pass) << where << " " << f.name.GetString() << ": " << fv.message;
      else
        EXPECT_EQ(fv.status, Status::Error) << where << " " << f.name.GetString() << ": " << fv.message;
    }
  }
  EXPECT_EQ(cases, 12);
  // The fixture shows kernels that are not correctly rounded (rsqrt's scalar path, silu both ways), and
  // some of them need the band.
  EXPECT_GT(not_rounded_once, 100);
  EXPECT_GE(warnings, 2);
  std::cout << fmt::format("{} torch bfloat16 kernel outputs, {} Warnings, {} elements not rounded once\n",
                           cases, warnings, not_rounded_once);
}

// DECISIONS D20: torch's CPU backward of softmax, log_softmax, layer_norm, mul (a broadcast operand) and
// rsqrt (reduced_kernels.json, "backward"). probe's gradient magnitudes equal the ones the generator derives
// in float64; with them torch's float32 gradients pass, its bfloat16 ones are never an error (a Warning where
// the kernel is worse than float32 computation), and one element 3% (bfloat16; 10% for log_softmax, whose
// bfloat16 kernel works from rounded log-probabilities) or 1% (float32) off is caught, a sign flip an error.
TEST(ErrorBound, TorchSoftmaxAndLayerNormBackwardAreBoundedByTheirSumsOnAbsoluteValues) {
  const std::string text =
      testing::slurp(std::string(PROBE_TEST_DATA_DIR) + "/error_bound/reduced_kernels.json");
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  ASSERT_FALSE(doc.HasParseError());
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  int cases = 0, warnings = 0;
  for (const auto& c : doc["backward"].GetArray()) {
    ++cases;
    const std::string api = c["api"].GetString();
    const DType dtype = *parse_dtype(c["dtype"].GetString());
    Shape shape;
    for (const auto& d : c["shape"].GetArray()) shape.push_back(d.GetInt64());
    const std::int64_t k = shape.back();
    ApiCall call;
    call.args.push_back(Value(f64(numbers(c["x"]), shape).to(dtype)));
    if (c.HasMember("dim")) {
      call.args.push_back(Value(static_cast<std::int64_t>(c["dim"].GetInt())));
    } else if (c.HasMember("other")) {
      call.args.push_back(Value(f64(numbers(c["other"]), {k}).to(dtype)));
    } else if (api != "Torch.rsqrt") {
      call.args.push_back(Value(std::vector<Value>{Value(k)}));
      call.args.push_back(Value(f64(numbers(c["w"]), {k}).to(dtype)));
      call.args.push_back(Value(f64(numbers(c["b"]), {k}).to(dtype)));
    }
    const Value grad(f64(numbers(c["g"]), shape).to(dtype));
    const std::vector<InputGradient> gm =
        error_bound_grad_magnitude(reg, Framework::PyTorch, api, call, {grad});
    const auto& benches = c["bench"].GetArray();
    ASSERT_EQ(gm.size(), benches.Size()) << api;
    const detail::BoundFamily* family = detail::bound_family(api, true);
    ASSERT_NE(family, nullptr) << api;
    const std::string where = fmt::format("{} {} {}", api, c["dtype"].GetString(), shape_to_string(shape));
    for (rapidjson::SizeType i = 0; i < benches.Size(); ++i) {
      const std::vector<double> want = numbers(c["magnitude"][i]), got = gm[i].grad.to_doubles();
      ASSERT_EQ(got.size(), want.size()) << where;
      for (std::size_t e = 0; e < got.size(); ++e)
        ASSERT_NEAR(got[e], want[e], 1e-9 * want[e]) << where << " " << i;
      const Shape gshape = gm[i].grad.shape();
      const Tensor bench = f64(numbers(benches[i]), gshape);
      const std::int64_t acc = error_bound_grad_accumulation(api, call, shape, gshape);
      const Verdict v = detail::error_bound_verdict(
          *family, bench, f64(numbers(c["device"][i]), gshape).to(dtype), &gm[i].grad, acc, 1);
      if (dtype == DType::Float32) {
        EXPECT_EQ(v.status, Status::Pass) << where << " gradient " << i << ": " << v.message;
      } else {
        EXPECT_NE(v.status, Status::Error) << where << " gradient " << i << ": " << v.message;
      }
      warnings += v.status == Status::Warning;
      if (i != 0) continue;
      for (const auto& f : c["faults"].GetObject()) {
        const std::string fault = f.name.GetString();
        const Verdict fv = detail::error_bound_verdict(
            *family, bench, f64(numbers(f.value), gshape).to(dtype), &gm[i].grad, acc, 1);
        if (fault == "sign flip")
          EXPECT_EQ(fv.status, Status::Error) << where << " " << fault << ": " << fv.message;
        else
          EXPECT_NE(fv.status, Status::Pass) << where << " " << fault << ": " << fv.message;
      }
    }
  }
  EXPECT_EQ(cases, 16);
  std::cout << fmt::format("{} torch softmax/log_softmax/layer_norm/mul/rsqrt backward cases, {} Warnings\n",
                           cases, warnings);
}

// D20's band at its edge: bfloat16 rsqrt, bench 0.8125. D14's bound is (1 + 2^-10) (2^-8 + 8 2^-24)
// 0.8125; the band adds 2 2^-8 0.8125 (two more roundings of |bench|). An error of 2.5 2^-8 0.8125 is a
// Warning, 3.5 2^-8 0.8125 an error; in float32 (no band) the first is an error.
TEST(ErrorBound, ElementwiseRoundingBandAtItsEdge) {
  const double b = 0.8125, u = std::ldexp(1.0, -8);
  const Verdict in =
      detail::error_bound_verdict(*detail::bound_family("Torch.rsqrt"), f64({b}, {1}),
                                  f64({b * (1 + 2.5 * u)}, {1}).to(DType::BFloat16), nullptr, 1, 1);
  EXPECT_EQ(in.status, Status::Warning) << in.message;
  const Verdict out =
      detail::error_bound_verdict(*detail::bound_family("Torch.rsqrt"), f64({b}, {1}),
                                  f64({b * (1 + 3.5 * u)}, {1}).to(DType::BFloat16), nullptr, 1, 1);
  EXPECT_EQ(out.status, Status::Error) << out.message;
  const Verdict f32 =
      detail::error_bound_verdict(*detail::bound_family("Torch.rsqrt"), f64({b}, {1}),
                                  f64({b * (1 + 2.5 * u)}, {1}).to(DType::Float32), nullptr, 1, 1);
  EXPECT_EQ(f32.status, Status::Error) << f32.message;
  // silu's backward: x = -1.25 (s = 0.2227), dy = 1: magnitude |dy| s (1 + |x|) = 0.5011 (numpy); the
  // band is 8 2^-8 of it (0.01566).
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  ApiCall call;
  call.args = {Value(Tensor::from_values<float>({-1.25f}, {1}))};
  const std::vector<InputGradient> gm = error_bound_grad_magnitude(
      reg, Framework::PyTorch, "Functional.silu", call, {Value(Tensor::from_values<float>({1.0f}, {1}))});
  ASSERT_EQ(gm.size(), 1u);
  EXPECT_EQ(gm[0].path, "input.0");
  const double s = 1 / (1 + std::exp(1.25)), m = s * 2.25;
  EXPECT_NEAR(gm[0].grad.to_doubles()[0], m, 1e-15);
  EXPECT_NEAR(m, 0.50107, 1e-5);
  const double grad = s * (1 - 1.25 * (1 - s));  // 0.0061
  const Tensor mt = f64({m}, {1});
  const detail::BoundFamily& bw = *detail::bound_family("Functional.silu", true);
  const Verdict w = detail::error_bound_verdict(bw, f64({grad}, {1}),
                                                f64({grad + 7 * u * m}, {1}).to(DType::BFloat16), &mt, 1, 1);
  EXPECT_EQ(w.status, Status::Warning) << w.message;
  const Verdict e = detail::error_bound_verdict(bw, f64({grad}, {1}),
                                                f64({grad + 9 * u * m}, {1}).to(DType::BFloat16), &mt, 1, 1);
  EXPECT_EQ(e.status, Status::Error) << e.message;
}

}  // namespace
}  // namespace probe
