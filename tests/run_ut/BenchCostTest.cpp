// The bench-cost estimate behind --max_api_flops, against FLOP counts derived by hand.
#include <gtest/gtest.h>

#include "probe/runner.h"
#include "run_ut/BenchCost.h"

namespace {

using probe::ApiCall;
using probe::DType;
using probe::Tensor;
using probe::Value;
using probe::rut::estimated_bench_flops;

Value t(probe::Shape s) { return Value(Tensor::zeros(DType::Float32, std::move(s))); }

ApiCall call(std::vector<Value> args) {
  ApiCall c;
  c.args = std::move(args);
  return c;
}

TEST(BenchCost, GemmFamilies) {
  // [M=3, K=4] @ [K=4, N=5]: 3*5 outputs, 4 multiply-adds each: 2*3*4*5 = 120.
  EXPECT_EQ(estimated_bench_flops("matmul", call({t({3, 4}), t({4, 5})})), 120.0);
  // Batched [B=2, 3, 4] @ [2, 4, 5] and broadcast [3, 4] @ [2, 4, 5]: 240 either way.
  EXPECT_EQ(estimated_bench_flops("bmm", call({t({2, 3, 4}), t({2, 4, 5})})), 240.0);
  EXPECT_EQ(estimated_bench_flops("matmul", call({t({3, 4}), t({2, 4, 5})})), 240.0);
  // Matrix-vector [3, 4] @ [4]: 2*3*4 = 24; __rmatmul__(self=b, other=a) is a @ b.
  EXPECT_EQ(estimated_bench_flops("mv", call({t({3, 4}), t({4})})), 24.0);
  EXPECT_EQ(estimated_bench_flops("__rmatmul__", call({t({4, 5}), t({3, 4})})), 120.0);
  // addmm(input, mat1 [3, 4], mat2 [4, 5]): the product's 120.
  EXPECT_EQ(estimated_bench_flops("addmm", call({t({5}), t({3, 4}), t({4, 5})})), 120.0);
  // linear(input [2, 3, 4], weight [5, 4]): 2*3 rows of 5 outputs of 4 terms: 2*24*5 = 240.
  EXPECT_EQ(estimated_bench_flops("linear", call({t({2, 3, 4}), t({5, 4})})), 240.0);
}

TEST(BenchCost, ConvolutionAndAttention) {
  // conv2d(input [N=2, C=3, 8, 8], weight [4, 3, 3, 3]): 2*8*8 positions x 108 weights x 2 = 27648.
  EXPECT_EQ(estimated_bench_flops("conv2d", call({t({2, 3, 8, 8}), t({4, 3, 3, 3})})), 27648.0);
  // Unbatched conv1d(input [C=3, 10], weight [4, 3, 5]): 10 positions x 60 weights x 2 = 1200.
  EXPECT_EQ(estimated_bench_flops("conv1d", call({t({3, 10}), t({4, 3, 5})})), 1200.0);
  // sdpa(q [B=1, H=2, L=6, E=8], k [1, 2, S=7, 8], v): QK^T 2*2*6*7*8 and PV the same: 4*96*7 = 2688.
  EXPECT_EQ(estimated_bench_flops("scaled_dot_product_attention",
                                  call({t({1, 2, 6, 8}), t({1, 2, 7, 8}), t({1, 2, 7, 8})})),
            2688.0);
}

TEST(BenchCost, OtherApisAndMissingTensorsHaveNoEstimate) {
  EXPECT_FALSE(estimated_bench_flops("gelu", call({t({1000})})));
  EXPECT_FALSE(estimated_bench_flops("matmul", call({t({3, 4})})));
  EXPECT_FALSE(estimated_bench_flops("conv2d", call({t({3}), t({4, 3, 3, 3})})));
}

}  // namespace
