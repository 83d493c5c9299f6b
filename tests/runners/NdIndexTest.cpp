// The xtensor kernels of lib/runners/NdIndex.h against plain index loops written here: bit-identical
// sums (same summation order, +0.0 start) and permutations, over ranks 0..8 with size-1 and empty dims;
// the cases they decline are the documented ones. Then the autograd primitives built on them (sum, sum_to
// through a broadcast gradient, permute) through the registry on int, bool, float16 and bfloat16 tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "probe/runner.h"
#include "runners/NdIndex.h"

namespace {

using probe::Shape;
using probe::runners::nd::permute;
using probe::runners::nd::sum_axes;

// Values of very different magnitudes (and some -0.0), so that another summation order changes the bits.
std::vector<double> values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> e(-20, 20);
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i % 11 == 5 ? -0.0 : std::ldexp(u(gen), e(gen));
  return v;
}

std::int64_t count(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), std::int64_t{1}, std::multiplies<>());
}

// Sequential reference: every input element added, in flat order, to its output (which starts at +0.0).
std::vector<double> reference_sum(const std::vector<double>& in, const Shape& s,
                                  const std::vector<bool>& red) {
  Shape kept;
  for (std::size_t d = 0; d < s.size(); ++d)
    if (!red[d]) kept.push_back(s[d]);
  std::vector<double> out(static_cast<std::size_t>(count(kept)), 0.0);
  std::vector<std::int64_t> idx(s.size(), 0);
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::int64_t o = 0;
    for (std::size_t d = 0; d < s.size(); ++d)
      if (!red[d]) o = o * s[d] + idx[d];
    out[static_cast<std::size_t>(o)] += in[i];
    for (std::size_t d = s.size(); d-- > 0;)
      if (++idx[d] < s[d])
        break;
      else
        idx[d] = 0;
  }
  return out;
}

std::vector<double> reference_permute(const std::vector<double>& in, const Shape& s,
                                      const std::vector<std::int64_t>& dims) {
  const std::size_t n = s.size();
  Shape os(n);
  for (std::size_t i = 0; i < n; ++i) os[i] = s[static_cast<std::size_t>(dims[i])];
  std::vector<double> out(in.size());
  std::vector<std::int64_t> oi(n, 0);
  for (std::size_t o = 0; o < out.size(); ++o) {
    std::int64_t src = 0;
    std::vector<std::int64_t> ii(n);
    for (std::size_t i = 0; i < n; ++i) ii[static_cast<std::size_t>(dims[i])] = oi[i];
    for (std::size_t d = 0; d < n; ++d) src = src * s[d] + ii[d];
    out[o] = in[static_cast<std::size_t>(src)];
    for (std::size_t d = n; d-- > 0;)
      if (++oi[d] < os[d])
        break;
      else
        oi[d] = 0;
  }
  return out;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  // memcmp must not see the null data() of an empty vector (undefined even for size 0).
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

std::vector<Shape> shapes() {
  return {{},
          {1},
          {0},
          {7},
          {3, 4},
          {1, 5},
          {5, 1},
          {4, 0, 3},
          {2, 3, 4},
          {3, 1, 4},
          {2, 1, 1, 3},
          {3, 4, 5, 2},
          {2, 3, 2, 3, 2},
          {2, 1, 3, 2, 1, 2},
          {2, 2, 2, 2, 2, 2, 2},
          {1, 2, 3, 1, 2, 3, 1, 2}};
}

TEST(NdIndex, SumAxesIsBitIdenticalToTheSequentialLoopOrDeclines) {
  int taken = 0, declined = 0;
  unsigned seed = 1;
  for (const Shape& s : shapes()) {
    const std::size_t n = s.size();
    const std::vector<double> in = values(static_cast<std::size_t>(count(s)), seed++);
    for (unsigned mask = 0; mask < (1u << n); ++mask) {
      std::vector<bool> red(n);
      for (std::size_t d = 0; d < n; ++d) red[d] = (mask >> d) & 1u;
      const std::vector<double> want = reference_sum(in, s, red);
      std::vector<double> got(want.size(), 42.0);
      if (sum_axes(in.data(), s, red, got.data())) {
        ++taken;
        EXPECT_TRUE(same_bits(got, want)) << probe::shape_to_string(s) << " mask " << mask;
      } else {
        ++declined;
        EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](double v) { return v == 42.0; }));
      }
    }
  }
  EXPECT_GT(taken, 300);  // of 911 masks; most of the declined ones are of the rank-7 and rank-8 shapes
  EXPECT_GT(declined, 0);
  // The shapes of the runner benchmark, and a reduction it declines: [N, C, H, W] -> [C] sums partial
  // rows of W first in xtensor's reducer, another association than the loop.
  const Shape bench{64, 128, 128};
  const std::vector<double> in = values(static_cast<std::size_t>(count(bench)), 99);
  for (std::vector<bool> red : {std::vector<bool>{true, false, false},
                                {false, true, false},
                                {true, true, false},
                                {false, true, true}}) {
    std::vector<double> got(static_cast<std::size_t>(count(bench)));
    ASSERT_TRUE(sum_axes(in.data(), bench, red, got.data()));
    got.resize(reference_sum(in, bench, red).size());
    EXPECT_TRUE(same_bits(got, reference_sum(in, bench, red)));
  }
  std::vector<double> out(3);
  const std::vector<double> nchw = values(2 * 3 * 4 * 5, 7);
  EXPECT_FALSE(sum_axes(nchw.data(), {2, 3, 4, 5}, {true, false, true, true}, out.data()));
}

TEST(NdIndex, PermuteMatchesTheIndexLoopForEveryPermutation) {
  unsigned seed = 100;
  int declined = 0;
  for (const Shape& s : shapes()) {
    const std::vector<double> in = values(static_cast<std::size_t>(count(s)), seed++);
    std::vector<std::int64_t> dims(s.size());
    std::iota(dims.begin(), dims.end(), 0);
    int tried = 0;
    do {
      if (s.size() > 5 && ++tried % 97 != 1) continue;  // a sample of the 7! and 8! permutations
      std::vector<double> got(in.size(), 42.0);
      if (!permute(in.data(), s, dims, got.data())) {
        ++declined;
        continue;
      }
      EXPECT_TRUE(same_bits(got, reference_permute(in, s, dims))) << probe::shape_to_string(s);
    } while (std::next_permutation(dims.begin(), dims.end()));
  }
  // Only ranks above 6 after dropping size-1 dims and merging can be declined.
  EXPECT_GT(declined, 0);
  std::vector<double> out(128);
  const std::vector<double> in = values(128, 5);
  EXPECT_FALSE(
      permute(in.data(), {2, 2, 2, 2, 2, 2, 2}, std::vector<std::int64_t>{6, 5, 4, 3, 2, 1, 0}, out.data()));
  EXPECT_TRUE(
      permute(in.data(), {2, 2, 2, 2, 2, 2, 2}, std::vector<std::int64_t>{1, 0, 2, 3, 4, 5, 6}, out.data()));
}

// ---- through the runners -----------------------------------------------------------------------
probe::Tensor tensor_of(probe::DType dt, const Shape& s, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> u(-3, 3);
  std::vector<double> v(static_cast<std::size_t>(count(s)));
  for (double& x : v) x = dt == probe::DType::Bool ? (u(gen) > 0) : u(gen) * 0.5;
  if (probe::is_integral(dt))
    for (double& x : v) x = std::trunc(x);
  return probe::Tensor::from_values<double>(v, s).to(dt);
}

std::vector<double> as_doubles(const probe::Tensor& t) {
  const probe::Tensor d = t.to(probe::DType::Float64);
  const auto* p = reinterpret_cast<const double*>(d.bytes());
  return {p, p + d.numel()};
}

probe::Value ints(std::vector<std::int64_t> v) {
  std::vector<probe::Value> out;
  for (auto x : v) out.emplace_back(x);
  return probe::Value(std::move(out));
}

TEST(NdIndex, PermuteAndSumRunnersOnEveryDtypeAndEdgeShape) {
  const probe::RunnerRegistry reg = probe::RunnerRegistry::with_builtins();
  using probe::DType;
  for (DType dt :
       {DType::Float32, DType::Float16, DType::BFloat16, DType::Int64, DType::Int32, DType::Bool}) {
    for (const Shape& s : std::vector<Shape>{{2, 3, 4}, {2, 0, 3}, {1, 3, 1}}) {
      const probe::Tensor x = tensor_of(dt, s, 3);
      const std::vector<double> xv = as_doubles(x);
      // permute(2, 0, -2): out dim i is input dim dims[i]
      probe::ApiCall pc{{probe::Value(x), probe::Value(std::int64_t{2}), probe::Value(std::int64_t{0}),
                         probe::Value(std::int64_t{-2})},
                        {}};
      const probe::ApiResult pr = reg.run_forward(probe::Framework::PyTorch, "Tensor.permute.0", pc);
      const probe::Tensor& pt = pr.outputs.at(0).tensor();
      EXPECT_EQ(pt.shape(), (Shape{s[2], s[0], s[1]}));
      EXPECT_EQ(as_doubles(pt), reference_permute(xv, s, {2, 0, 1})) << probe::name(dt);
      // sum over dim 1 (keepdim) and over all dims: integer and bool sums are int64 like torch's, floating
      // ones float64 (the bench side)
      probe::ApiCall sc{{probe::Value(x), ints({1}), probe::Value(true)}, {}};
      const probe::ApiResult sr = reg.run_forward(probe::Framework::PyTorch, "Torch.sum.0", sc);
      EXPECT_EQ(sr.outputs.at(0).tensor().shape(), (Shape{s[0], 1, s[2]}));
      EXPECT_EQ(as_doubles(sr.outputs.at(0).tensor()), reference_sum(xv, s, {false, true, false}));
      EXPECT_EQ(sr.outputs.at(0).tensor().dtype(), probe::is_floating(dt) ? DType::Float64 : DType::Int64);
      probe::ApiCall all{{probe::Value(x)}, {}};
      const probe::ApiResult ar = reg.run_forward(probe::Framework::PyTorch, "Torch.sum.0", all);
      EXPECT_EQ(as_doubles(ar.outputs.at(0).tensor()), reference_sum(xv, s, {true, true, true}));
    }
  }
  // 0-d: permute() with no dims and sum() of a scalar
  const probe::Tensor z = probe::Tensor::from_values<double>({-2.5}, {}).to(DType::Float32);
  EXPECT_EQ(as_doubles(reg.run_forward(probe::Framework::PyTorch, "Tensor.permute.0", {{probe::Value(z)}, {}})
                           .outputs.at(0)
                           .tensor()),
            std::vector<double>{-2.5});
  EXPECT_EQ(as_doubles(reg.run_forward(probe::Framework::PyTorch, "Torch.sum.0", {{probe::Value(z)}, {}})
                           .outputs.at(0)
                           .tensor()),
            std::vector<double>{-2.5});
}

TEST(NdIndex, BackwardOfPermuteExpandAndBroadcastAddAreTheIndexLoops) {
  const probe::RunnerRegistry reg = probe::RunnerRegistry::with_builtins();
  using probe::DType;
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    const Shape s{2, 3, 4};
    const probe::Tensor x = tensor_of(dt, s, 8);
    // permute backward: the output gradient permuted back (dims (1, 2, 0) inverted is (2, 0, 1))
    probe::ApiCall pc{{probe::Value(x), probe::Value(std::int64_t{1}), probe::Value(std::int64_t{2}),
                       probe::Value(std::int64_t{0})},
                      {}};
    probe::TapedCall taped = reg.run_forward_taped(probe::Framework::PyTorch, "Tensor.permute.0", pc);
    const Shape os{3, 4, 2};
    const std::vector<double> g = values(24, 21);
    auto grads = taped.backward({probe::Value(probe::Tensor::from_values<double>(g, os))});
    EXPECT_EQ(as_doubles(grads.at(0).grad), reference_permute(g, os, {2, 0, 1})) << probe::name(dt);
    // expand [1, 3, 1] -> [2, 3, 4]: backward sums over dims 0 and 2 (sum_to), in flat order
    const probe::Tensor e = tensor_of(dt, {1, 3, 1}, 9);
    probe::ApiCall ec{{probe::Value(e), probe::Value(std::int64_t{2}), probe::Value(std::int64_t{3}),
                       probe::Value(std::int64_t{4})},
                      {}};
    probe::TapedCall te = reg.run_forward_taped(probe::Framework::PyTorch, "Tensor.expand.0", ec);
    auto ge = te.backward({probe::Value(probe::Tensor::from_values<double>(g, s))});
    EXPECT_EQ(as_doubles(ge.at(0).grad), reference_sum(g, s, {true, false, true}));
    // add [2, 3, 4] + [4]: the second operand's gradient sums the leading dims
    probe::ApiCall ac{{probe::Value(x), probe::Value(tensor_of(dt, {4}, 10))}, {}};
    probe::TapedCall ta = reg.run_forward_taped(probe::Framework::PyTorch, "Torch.add.0", ac);
    auto ga = ta.backward({probe::Value(probe::Tensor::from_values<double>(g, s))});
    ASSERT_EQ(ga.size(), 2u);
    EXPECT_EQ(as_doubles(ga.at(1).grad), reference_sum(g, s, {true, true, false}));
  }
}

}  // namespace
