// The bench-cost estimate behind --max_api_flops, against FLOP counts derived by hand.
#include <gtest/gtest.h>

#include <cstdint>

#include "probe/dump.h"
#include "probe/runner.h"
#include "run_ut/BenchCost.h"

namespace {

using probe::ApiCall;
using probe::DType;
using probe::Tensor;
using probe::Value;
using probe::rut::estimated_bench_flops;
using probe::rut::estimated_result_elements;

Value t(probe::Shape s) { return Value(Tensor::zeros(DType::Float32, std::move(s))); }

ApiCall call(std::vector<Value> args, std::vector<std::pair<std::string, Value>> kwargs = {}) {
  ApiCall c;
  c.args = std::move(args);
  c.kwargs = std::move(kwargs);
  return c;
}

Value ints(std::vector<Value> v) { return Value(std::move(v)); }

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

// Result sizes behind --max_api_elements, each derived by hand from torch's shape rules.
TEST(BenchCost, ResultElementsOfRepeatExpandAndCreation) {
  // repeat([2, 3], 4, 5) and repeat([2, 3], (1, 4, 5)): 6 elements x 20 = 120 (a new leading dim of 1).
  EXPECT_EQ(estimated_result_elements("repeat", call({t({2, 3}), Value(4), Value(5)})), 120.0);
  EXPECT_EQ(estimated_result_elements("repeat", call({t({2, 3}), ints({Value(1), Value(4), Value(5)})})),
            120.0);
  // tile([2, 3], dims=(7,)): 42.
  EXPECT_EQ(estimated_result_elements("tile", call({t({2, 3})}, {{"dims", ints({Value(7)})}})), 42.0);
  // expand([3, 1], 2, -1, 5): -1 keeps 3, so [2, 3, 5] = 30; broadcast_to([1], (6, 7)) = 42.
  EXPECT_EQ(estimated_result_elements("expand", call({t({3, 1}), Value(2), Value(-1), Value(5)})), 30.0);
  EXPECT_EQ(estimated_result_elements("broadcast_to", call({t({1}), ints({Value(6), Value(7)})})), 42.0);
  // new_full(x, (3, 4), 1.5) = 12, new_zeros(x, 3, 4) = 12, zeros(size=(2, 5)) = 10, full((2, 5), 0) = 10.
  EXPECT_EQ(estimated_result_elements("new_full", call({t({1}), ints({Value(3), Value(4)}), Value(1.5)})),
            12.0);
  EXPECT_EQ(estimated_result_elements("new_zeros", call({t({1}), Value(3), Value(4)})), 12.0);
  EXPECT_EQ(estimated_result_elements("zeros", call({}, {{"size", ints({Value(2), Value(5)})}})), 10.0);
  EXPECT_EQ(estimated_result_elements("full", call({ints({Value(2), Value(5)}), Value(0)})), 10.0);
  // arange(10) = 10, arange(1, 10, 2) = [1, 3, 5, 7, 9] = 5, arange(0, 1, 0.3) = [0, .3, .6, .9] = 4,
  // arange(5, 0) = 0, arange(end=7) = 7.
  EXPECT_EQ(estimated_result_elements("arange", call({Value(10)})), 10.0);
  EXPECT_EQ(estimated_result_elements("arange", call({Value(1), Value(10), Value(2)})), 5.0);
  EXPECT_EQ(estimated_result_elements("arange", call({Value(0), Value(1), Value(0.3)})), 4.0);
  EXPECT_EQ(estimated_result_elements("arange", call({Value(5), Value(0)})), 0.0);
  EXPECT_EQ(estimated_result_elements("arange", call({}, {{"end", Value(7)}})), 7.0);
  // linspace(0, 1, 9) = 9, eye(3) = 9, eye(3, 5) = 15.
  EXPECT_EQ(estimated_result_elements("linspace", call({Value(0), Value(1), Value(9)})), 9.0);
  EXPECT_EQ(estimated_result_elements("eye", call({Value(3)})), 9.0);
  EXPECT_EQ(estimated_result_elements("eye", call({Value(3), Value(5)})), 15.0);
}

TEST(BenchCost, ResultElementsOfProductsAndResampling) {
  // interpolate([2, 3, 4, 5], size=(8, 10)) = 6 * 80 = 480; size=7 -> 6 * 49 = 294;
  // scale_factor=2.5 -> floor(10) x floor(12.5) = 10 x 12 per channel: 6 * 120 = 720.
  EXPECT_EQ(estimated_result_elements("interpolate", call({t({2, 3, 4, 5}), ints({Value(8), Value(10)})})),
            480.0);
  EXPECT_EQ(estimated_result_elements("interpolate", call({t({2, 3, 4, 5})}, {{"size", Value(7)}})), 294.0);
  EXPECT_EQ(estimated_result_elements("interpolate", call({t({2, 3, 4, 5})}, {{"scale_factor", Value(2.5)}})),
            720.0);
  // bilinear: the sparse map's 4 taps per output element: 4 * 480.
  EXPECT_EQ(estimated_result_elements("interpolate", call({t({2, 3, 4, 5}), ints({Value(8), Value(10)}),
                                                           Value(), Value("bilinear")})),
            1920.0);
  // one_hot of 4 indices with 10 classes = 40; with num_classes=-1 the classes are max + 1 = 8: 32.
  const Tensor idx = Tensor::from_values<std::int64_t>({0, 1, 7, 2}, {4});
  EXPECT_EQ(estimated_result_elements("one_hot", call({Value(idx), Value(10)})), 40.0);
  EXPECT_EQ(estimated_result_elements("one_hot", call({Value(idx)})), 32.0);
  // outer([3], [4]) = 12, kron([2, 3], [4, 5]) = 6 * 20 = 120.
  EXPECT_EQ(estimated_result_elements("outer", call({t({3}), t({4})})), 12.0);
  EXPECT_EQ(estimated_result_elements("kron", call({t({2, 3}), t({4, 5})})), 120.0);
  // cdist([2, 3, 4], [2, 5, 4]) forms the [2, 3, 5, 4] difference: 120.
  EXPECT_EQ(estimated_result_elements("cdist", call({t({2, 3, 4}), t({2, 5, 4})})), 120.0);
  // The results alone (tensor dumps weigh them against the dumped outputs): cdist [2, 3, 5] = 30, bilinear
  // 480.
  EXPECT_EQ(estimated_result_elements("cdist", call({t({2, 3, 4}), t({2, 5, 4})}), false), 30.0);
  EXPECT_EQ(estimated_result_elements(
                "interpolate",
                call({t({2, 3, 4, 5}), ints({Value(8), Value(10)}), Value(), Value("bilinear")}), false),
            480.0);
  // pad([2, 3], (1, 2, 3, 4)): last dim 3 + 1 + 2 = 6, first 2 + 3 + 4 = 9: 54.
  EXPECT_EQ(
      estimated_result_elements("pad", call({t({2, 3}), ints({Value(1), Value(2), Value(3), Value(4)})})),
      54.0);
  // [M, 1] @ [1, N]: M * N outputs from M + N inputs; addmm(input, [3, 4], [4, 5]) = 15.
  EXPECT_EQ(estimated_result_elements("matmul", call({t({300, 1}), t({1, 400})})), 120000.0);
  EXPECT_EQ(estimated_result_elements("addmm", call({t({5}), t({3, 4}), t({4, 5})})), 15.0);
}

TEST(BenchCost, OtherApisAndOddArgumentsHaveNoResultEstimate) {
  EXPECT_FALSE(estimated_result_elements("gelu", call({t({1000})})));
  EXPECT_FALSE(estimated_result_elements("repeat", call({t({2}), Value("x")})));
  EXPECT_FALSE(estimated_result_elements("arange", call({Value(0), Value(1), Value(0)})));
  EXPECT_FALSE(estimated_result_elements("interpolate", call({t({2, 3})})));
}

}  // namespace

namespace {

// A forward record of `api` as msprobe writes it: descriptors only, no tensor files needed.
probe::Dump dump_of(const std::string& key, const std::string& args, const std::string& kwargs = "{}") {
  const std::string json =
      R"({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null,
    "data": {")" +
      key + R"(": {"input_args": [)" + args + R"(], "input_kwargs": )" + kwargs + R"(, "output": []}}})";
  return probe::Dump::parse(json, "dump.json");
}

std::string desc(const std::string& dtype, const std::string& shape) {
  return R"({"type": "torch.Tensor", "dtype": "torch.)" + dtype + R"(", "shape": )" + shape +
         R"(, "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1, "requires_grad": false})";
}

TEST(BenchCost, EntryEstimateMatchesTheLoadedCallsFromDescriptorsAlone) {
  // matmul [3, 4] @ [4, 5]: 120 FLOPs, from the descriptors as from loaded tensors; a keyword tensor counts
  // after the positional ones (linear(input, weight=[5, 4]) on [2, 3, 4]: 240).
  const auto mm =
      dump_of("Torch.matmul.0.forward", desc("float32", "[3, 4]") + ", " + desc("float32", "[4, 5]"));
  EXPECT_EQ(estimated_bench_flops("matmul", mm.entries()[0]), 120.0);
  const auto lin = dump_of("Functional.linear.0.forward", desc("float16", "[2, 3, 4]"),
                           R"({"weight": )" + desc("float16", "[5, 4]") + "}");
  EXPECT_EQ(estimated_bench_flops("linear", lin.entries()[0]), 240.0);
  EXPECT_FALSE(estimated_bench_flops("gelu", lin.entries()[0]));
}

TEST(BenchCost, CheckWeightIsDumpedBytesPlusAnEighthOfTheFlops) {
  // float32 [3, 4] and [4, 5]: 48 + 80 bytes; 120 FLOPs / 8 = 15.
  const auto mm =
      dump_of("Torch.matmul.0.forward", desc("float32", "[3, 4]") + ", " + desc("float32", "[4, 5]"));
  EXPECT_DOUBLE_EQ(probe::rut::check_weight("matmul", mm.entries()[0], nullptr), 48.0 + 80.0 + 15.0);
  // gelu on bfloat16 [10]: 20 bytes, no FLOP estimate; its backward record's tensors add theirs (bfloat16
  // [10]).
  const auto g = dump_of("Functional.gelu.0.forward", desc("bfloat16", "[10]"));
  const auto b = dump_of("Functional.gelu.0.backward", desc("bfloat16", "[10]"));
  EXPECT_DOUBLE_EQ(probe::rut::check_weight("gelu", g.entries()[0], nullptr), 20.0);
  EXPECT_DOUBLE_EQ(probe::rut::check_weight("gelu", g.entries()[0], &b.entries()[0]), 40.0);
}

}  // namespace
