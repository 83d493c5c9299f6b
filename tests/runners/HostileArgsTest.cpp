// Mistaken or hostile arguments from a dump give probe::Error, never a crash or a huge allocation.
#include <gtest/gtest.h>

#include "probe/error.h"
#include "probe/runner.h"

namespace probe {
namespace {

Tensor f32(std::vector<float> v, Shape s) { return Tensor::from_values<float>(v, std::move(s)); }
Tensor i64(std::vector<std::int64_t> v, Shape s) {
  return Tensor::from_values<std::int64_t>(v, std::move(s));
}
Value ints(std::initializer_list<std::int64_t> v) {
  std::vector<Value> items;
  for (auto x : v) items.push_back(Value(x));
  return Value(std::move(items));
}

void expect_error(const char* api, ApiCall call) {
  const RunnerRegistry reg = RunnerRegistry::with_builtins();
  for (RunnerRole role : {RunnerRole::Bench, RunnerRole::Device}) {
    try {
      reg.run_forward(Framework::PyTorch, api, call, role);
      ADD_FAILURE() << api << " accepted hostile arguments";
    } catch (const Error& e) {
      EXPECT_NE(e.kind(), ErrorKind::Internal) << api << ": " << e.what();
      EXPECT_EQ(e.api(), api);
    }
  }
}

TEST(HostileArgs, HugeResultsAreRefused) {
  Tensor x = f32({1, 2}, {2, 1});
  expect_error("Tensor.expand", {{Value(x), Value(std::int64_t{100000}), Value(std::int64_t{100000})}, {}});
  expect_error("Tensor.repeat", {{Value(x), Value(std::int64_t{1} << 20), Value(std::int64_t{1} << 20)}, {}});
  expect_error("Torch.add", {{Value(f32({1, 2}, {2, 1})), Value(f32({1}, {1}))},
                             {{"alpha", Value(f32({1, 2}, {2}))}}});  // alpha must be one element
  Tensor col = Tensor::zeros(DType::Float32, {1 << 15, 1}), row = Tensor::zeros(DType::Float32, {1, 1 << 15});
  expect_error("Torch.matmul", {{Value(col), Value(row)}, {}});  // 2^30 outputs
  expect_error("Torch.mul", {{Value(col), Value(row)}, {}});
  expect_error("Torch.repeat_interleave", {{Value(f32({1}, {1})), Value(std::int64_t{1} << 40)}, {}});
  expect_error("Torch.zeros_like", {{Value(f32({1}, {1}))}, {{"dtype", Value(DType::Complex64)}}});
}

TEST(HostileArgs, OutOfRangeIndicesAndDims) {
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error("Torch.sum", {{Value(x), Value(std::int64_t{5})}, {}});
  expect_error("Torch.transpose", {{Value(x), Value(std::int64_t{0}), Value(std::int64_t{-3})}, {}});
  expect_error("Torch.gather", {{Value(x), Value(std::int64_t{1}), Value(i64({0, 3}, {1, 2}))}, {}});
  expect_error("Torch.gather",
               {{Value(x), Value(std::int64_t{1}), Value(i64({0, 1, 0, 1, 0, 1, 0, 1}, {4, 2}))}, {}});
  expect_error("Torch.scatter",
               {{Value(x), Value(std::int64_t{1}), Value(i64({0, 1, 2, 0}, {2, 2})), Value(f32({1}, {1, 1}))},
                {}});  // src smaller than index
  expect_error("Torch.index_add",
               {{Value(x), Value(std::int64_t{0}), Value(i64({0}, {1})), Value(f32({1, 2}, {1, 2}))},
                {}});  // source shape does not match
  expect_error("Torch.index_select", {{Value(x), Value(std::int64_t{0}), Value(i64({-3}, {1}))}, {}});
  expect_error("Tensor.__getitem__", {{Value(x), Value(std::int64_t{2})}, {}});
  // a list holding a slice is a tuple of indices: three indices for two dims
  expect_error("Tensor.__getitem__",
               {{Value(x), Value(std::vector<Value>{Value(0), Value(0), Value(Slice{})})}, {}});
  expect_error("Tensor.__getitem__",
               {{Value(x), Value(std::vector<Value>{Value(0), Value(7)})}, {}});  // index list
  expect_error("Tensor.__getitem__", {{Value(x), Value(Tensor::zeros(DType::Bool, {3}))}, {}});
  expect_error("Tensor.__getitem__", {{Value(x), Value(std::vector<Value>{Value(Slice{0, 1, -1})})}, {}});
  expect_error("Tensor.view", {{Value(x), ints({4, -1})}, {}});
  expect_error("Torch.reshape", {{Value(x), ints({-1, -1})}, {}});
  expect_error("Torch.narrow",
               {{Value(x), Value(std::int64_t{1}), Value(std::int64_t{2}), Value(std::int64_t{5})}, {}});
  expect_error("Torch.topk", {{Value(x), Value(std::int64_t{4})}, {}});
  expect_error("Torch.split", {{Value(x), ints({1, 1})}, {{"dim", Value(std::int64_t{1})}}});
  expect_error("Torch.cat", {{Value(std::vector<Value>{Value(x), Value(f32({1}, {1, 1}))})}, {}});
  expect_error("Torch.einsum", {{Value("ij,jk->ik"), Value(x), Value(x)}, {}});
  expect_error("Torch.mm", {{Value(x), Value(x)}, {}});
}

TEST(HostileArgs, CoverageRunnersRefuseBadIndicesDimsAndSizes) {
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Value d0(std::int64_t{0}), d1(std::int64_t{1});
  expect_error("Torch.take", {{Value(x), Value(i64({6}, {1}))}, {}});
  expect_error("Torch.take_along_dim", {{Value(x), Value(i64({0, 3}, {1, 2})), d1}, {}});
  expect_error("Torch.select", {{Value(x), d1, Value(std::int64_t{-4})}, {}});
  expect_error("Torch.index_fill", {{Value(x), d1, Value(i64({3}, {1})), Value(1.0)}, {}});
  expect_error("Torch.index_copy", {{Value(x), d0, Value(i64({0, 2}, {2})), Value(x)}, {}});
  expect_error("Torch.diagonal", {{Value(x)}, {{"dim1", d1}, {"dim2", d1}}});
  expect_error("Torch.roll", {{Value(x), ints({1, 2}), ints({0})}, {}});
  expect_error("Torch.movedim", {{Value(x), ints({0, 0}), ints({0, 1})}, {}});
  expect_error("Torch.unflatten", {{Value(x), d1, ints({2, 2})}, {}});
  expect_error("Functional.glu", {{Value(x)}, {}});  // odd size along the last dim
  expect_error("Functional.one_hot", {{Value(i64({1, 2}, {2})), Value(std::int64_t{1} << 40)}, {}});
  expect_error("Functional.one_hot", {{Value(i64({1, 2}, {2})), Value(std::int64_t{-5})}, {}});
  expect_error("Functional.one_hot", {{Value(i64({-1}, {1}))}, {}});
  expect_error("Torch.cumprod", {{Value(x), Value(std::int64_t{2})}, {}});
  expect_error("Torch.cummax", {{Value(x), Value(std::int64_t{-3})}, {}});
  expect_error("Torch.tensordot", {{Value(x), Value(x)}, {{"dims", ints({1})}}});
  expect_error("Torch.tensordot", {{Value(x), Value(x), Value(std::int64_t{3})}, {}});
  expect_error("Torch.einsum", {{Value("...ijk->k"), Value(x)}, {}});  // more labels than dims
  expect_error("Torch.einsum", {{Value("i.j->i"), Value(x)}, {}});
  expect_error("Torch.inner", {{Value(x), Value(f32({1, 2}, {2}))}, {}});
  expect_error("Torch.addbmm", {{Value(x), Value(x), Value(x)}, {}});           // not 3-d
  expect_error("Functional.prelu", {{Value(x), Value(f32({1, 2}, {2}))}, {}});  // 2 weights, 3 channels
  expect_error("Torch.fmod", {{Value(i64({1}, {1})), Value(i64({0}, {1}))}, {}});
  expect_error("Torch.isclose", {{Value(x), Value(i64({1, 2, 3, 4, 5, 6}, {2, 3}))}, {}});
  expect_error("Functional.binary_cross_entropy", {{Value(f32({1.5f}, {1})), Value(f32({1}, {1}))}, {}});
  expect_error("Functional.kl_div", {{Value(x), Value(x)}, {{"reduction", Value("most")}}});
}

TEST(HostileArgs, WrongKindsAndDtypes) {
  Tensor x = f32({1, 2}, {2});
  expect_error("Torch.add", {{Value(x), Value("two")}, {}});
  expect_error("Torch.where", {{Value(x), Value(x), Value(x)}, {}});  // condition must be bool
  expect_error("Tensor.masked_fill", {{Value(x), Value(x), Value(0.0)}, {}});
  expect_error("Torch.mean", {{Value(i64({1, 2}, {2}))}, {}});
  expect_error("Torch.div", {{Value(x), Value(x)}, {{"rounding_mode", Value("up")}}});
  expect_error("Tensor.__and__", {{Value(x), Value(x)}, {}});
  expect_error("Torch.matmul", {{Value(x), Value(i64({1, 2}, {2}))}, {}});  // dtypes differ
  expect_error("Torch.add", {{Value(Tensor::zeros(DType::Complex64, {2})), Value(x)}, {}});
  expect_error("Torch.pow", {{Value(i64({2}, {1})), Value(std::int64_t{-1})}, {}});
}

}  // namespace
}  // namespace probe
