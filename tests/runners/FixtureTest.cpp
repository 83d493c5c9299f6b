// Every built-in runner against PyTorch float64 (tests/data/runners/*.json, from
// tests/data/make_runner_fixtures.py): forward values, device dtypes, and input gradients.
// Default tolerance: |probe - torch| <= 1e-12 * |torch|; a case that needs more says why in its
// `tol_reason` (generated into the fixture next to the case).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "FixtureUtil.h"
#include "probe/error.h"
#include "probe/runner.h"

namespace probe::test {
namespace {

std::string describe(double a) { return fmt::format("{:.17g}", a); }

// A tolerance only applies between two finite numbers: `inf <= inf` would let any value (or the other
// infinity) pass where torch gives an infinity, so infinities must be equal and NaN must meet NaN.
bool values_match(double probe, double torch, double rtol, double atol) {
  if (std::isnan(probe) || std::isnan(torch)) return std::isnan(probe) && std::isnan(torch);
  if (std::isinf(probe) || std::isinf(torch)) return probe == torch;
  return probe == torch || std::fabs(probe - torch) <= atol + rtol * std::fabs(torch);
}

TEST(RunnerFixtureMatch, InfinitiesMustBeEqualAndNanMustMeetNan) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  EXPECT_TRUE(values_match(inf, inf, 1e-12, 0));
  EXPECT_TRUE(values_match(-inf, -inf, 1e-12, 0));
  EXPECT_TRUE(values_match(nan, nan, 1e-12, 0));
  EXPECT_FALSE(values_match(0.0, inf, 1e-6, 0));   // erfinv(1) mutated to 0.0
  EXPECT_FALSE(values_match(-inf, inf, 1e-6, 0));  // erfinv(1) mutated to -inf
  EXPECT_FALSE(values_match(1e308, inf, 1e-6, 1.0));
  EXPECT_FALSE(values_match(inf, 1e308, 1e-6, 1.0));
  EXPECT_FALSE(values_match(nan, 1.0, 1e-6, 1.0));
  EXPECT_FALSE(values_match(1.0, nan, 1e-6, 1.0));
  EXPECT_TRUE(values_match(1.0 + 1e-13, 1.0, 1e-12, 0));
  EXPECT_FALSE(values_match(1.0 + 1e-11, 1.0, 1e-12, 0));
}

void expect_tensor(const FixTensor& want, const Tensor& got, double rtol, double atol,
                   const std::string& what) {
  ASSERT_EQ(shape_to_string(got.shape()), shape_to_string(want.shape)) << what;
  if (is_floating(want.dtype)) {
    EXPECT_EQ(got.dtype(), DType::Float64) << what << ": bench tensors of floating APIs are float64";
  } else {
    EXPECT_EQ(name(got.dtype()), name(want.dtype)) << what << ": integer/bool results keep their dtype";
  }
  const std::vector<double> g = got.to_doubles();
  int reported = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double a = g[i], b = want.data[i];
    const bool ok = values_match(a, b, rtol, atol);
    if (!ok && reported++ < 3)
      ADD_FAILURE() << what << ": element " << i << " probe " << describe(a) << " torch " << describe(b);
  }
}

void expect_value(const rapidjson::Value& want, const Value& got, DType device_dtype, double rtol,
                  double atol, const std::string& what) {
  if (want.IsNull()) {
    EXPECT_TRUE(got.is_none()) << what;
    return;
  }
  if (want.IsObject() && want.HasMember("tensor")) {
    ASSERT_TRUE(got.is_tensor()) << what << ": expected a tensor, got " << got.to_string();
    const FixTensor w = decode_tensor(want["tensor"]);
    EXPECT_EQ(name(device_dtype), name(w.dtype)) << what << ": device dtype";
    expect_tensor(w, got.tensor(), rtol, atol, what);
    return;
  }
  const Value w = decode_value(want);
  EXPECT_EQ(w.to_string(), got.to_string()) << what;
}

void flatten_dtypes(const rapidjson::Value& outs, std::vector<const rapidjson::Value*>& tensors) {
  for (const auto& o : outs.GetArray()) {
    if (o.IsArray())
      flatten_dtypes(o, tensors);
    else if (o.IsObject() && o.HasMember("tensor"))
      tensors.push_back(&o);
  }
}

void run_case(const RunnerRegistry& reg, const rapidjson::Value& c) {
  const std::string id = c["id"].GetString();
  SCOPED_TRACE(id);
  const Framework fw =
      std::string(c["framework"].GetString()) == "mindspore" ? Framework::MindSpore : Framework::PyTorch;
  ApiCall call;
  for (const auto& a : c["args"].GetArray()) call.args.push_back(decode_value(a));
  for (const auto& k : c["kwargs"].GetObject())
    call.kwargs.emplace_back(k.name.GetString(), decode_value(k.value));
  const double rtol = c.HasMember("rtol") ? c["rtol"].GetDouble() : 1e-12;
  const double atol = c.HasMember("atol") ? c["atol"].GetDouble() : 0.0;

  ApiResult r;
  try {
    r = reg.run_forward(fw, c["api"].GetString(), call);
  } catch (const Error& e) {
    ADD_FAILURE() << id << ": forward threw " << e.what();
    return;
  }
  const auto& outs = c["outputs"];
  ASSERT_EQ(r.outputs.size(), outs.Size()) << id << ": number of outputs";
  std::vector<const rapidjson::Value*> want_tensors;
  flatten_dtypes(outs, want_tensors);
  ASSERT_EQ(r.device_dtypes.size(), want_tensors.size()) << id << ": tensor outputs";
  std::size_t ti = 0;
  for (std::size_t i = 0; i < r.outputs.size(); ++i) {
    const auto& w = outs[static_cast<rapidjson::SizeType>(i)];
    if (w.IsArray()) {
      ASSERT_TRUE(r.outputs[i].is_list()) << id;
      ASSERT_EQ(r.outputs[i].list().size(), w.Size()) << id;
      for (std::size_t j = 0; j < w.Size(); ++j)
        expect_value(w[static_cast<rapidjson::SizeType>(j)], r.outputs[i].list()[j], r.device_dtypes[ti++],
                     rtol, atol, fmt::format("{} output {}.{}", id, i, j));
    } else {
      const bool is_t = w.IsObject() && w.HasMember("tensor");
      expect_value(w, r.outputs[i], is_t ? r.device_dtypes[ti] : DType::Float64, rtol, atol,
                   fmt::format("{} output {}", id, i));
      if (is_t) ++ti;
    }
  }
  if (!c.HasMember("grads")) return;
  std::vector<Value> gouts;
  for (const auto& g : c["grad_outputs"].GetArray()) gouts.push_back(decode_value(g));
  std::vector<InputGradient> grads;
  try {
    grads = reg.run_backward(fw, c["api"].GetString(), call, gouts);
  } catch (const Error& e) {
    ADD_FAILURE() << id << ": backward threw " << e.what();
    return;
  }
  std::map<std::string, const InputGradient*> got;
  for (const auto& g : grads) got[g.path] = &g;
  for (const auto& m : c["grads"].GetObject()) {
    const std::string path = m.name.GetString();
    auto it = got.find(path);
    if (m.value.IsNull()) {
      // torch has no gradient: probe may have none or an all-zero one.
      if (it != got.end()) {
        for (double v : it->second->grad.to_doubles()) EXPECT_EQ(v, 0.0) << id << " grad " << path;
      }
      continue;
    }
    if (it == got.end()) {
      ADD_FAILURE() << id << ": no gradient for " << path;
      continue;
    }
    const FixTensor w = decode_tensor(m.value["tensor"]);
    expect_tensor(w, it->second->grad, rtol, atol, id + " grad " + path);
  }
}

TEST(RunnerFixtures, AllCasesMatchTorchFloat64) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  std::size_t n = 0;
  for (const auto& file : fixture_files()) {
    SCOPED_TRACE(file.string());
    const rapidjson::Document d = load_json(file);
    ASSERT_FALSE(d.HasParseError()) << file;
    for (const auto& c : d["cases"].GetArray()) {
      run_case(reg, c);
      ++n;
    }
  }
  EXPECT_GT(n, 100u) << "fixture files missing?";
}

}  // namespace
}  // namespace probe::test
