#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "probe/tensor.h"

namespace probe {
namespace {

TEST(Shape, NumelAndSpelling) {
  EXPECT_EQ(numel({}), 1);
  EXPECT_EQ(numel({2, 0, 3}), 0);
  EXPECT_EQ(shape_to_string({}), "()");
  EXPECT_EQ(shape_to_string({12}), "(12,)");
  EXPECT_EQ(shape_to_string({100, 100}), "(100, 100)");
  EXPECT_THROW(numel({-1}), Error);
  EXPECT_THROW(numel({1LL << 40, 1LL << 40}), Error);
}

TEST(Tensor, FromValuesAndAt) {
  Tensor t = Tensor::from_values<float>({1.5f, -2.0f, 3.25f, 0.0f}, {2, 2});
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.numel(), 4);
  EXPECT_EQ(t.nbytes(), 16u);
  EXPECT_DOUBLE_EQ(t.at(2), 3.25);
  EXPECT_THROW(t.at(4), Error);
  EXPECT_THROW(t.data<double>(), Error);
  EXPECT_THROW((Tensor::from_values<float>({1.0f}, {2})), Error);
}

TEST(Tensor, ScalarIsZeroDim) {
  Tensor s = Tensor::scalar<std::int64_t>(423);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_DOUBLE_EQ(s.at(0), 423.0);
}

// Expected bit patterns from numpy: np.array([...], np.float32).astype(np.float16).view(np.uint16)
TEST(Tensor, Float32ToFloat16RoundsToNearestEven) {
  Tensor f = Tensor::from_values<float>({1.0f, 1.00048828125f, 1.00146484375f, 65504.0f, 65520.0f,
                                         5.960464477539063e-08f, 2.9802322387695312e-08f, -0.0f},
                                        {8});
  Tensor h = f.to(DType::Float16);
  const float16_t* p = h.data<float16_t>();
  // 1+2^-11 is a tie -> even (1.0); 1+3*2^-11 is a tie -> even (1+2^-9); 65520 overflows to inf.
  const std::uint16_t expected[] = {0x3c00, 0x3c00, 0x3c02, 0x7bff, 0x7c00, 0x0001, 0x0000, 0x8000};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(p[i].bits, expected[i]) << i;
}

// torch.tensor([...], dtype=torch.float32).to(torch.bfloat16).view(torch.int16)
TEST(Tensor, Float32ToBFloat16RoundsToNearestEven) {
  Tensor f = Tensor::from_values<float>(
      {1.0f, 1.00390625f, 1.01171875f, 3.3895313892515355e38f, std::numeric_limits<float>::quiet_NaN()}, {5});
  Tensor b = f.to(DType::BFloat16);
  const bfloat16_t* p = b.data<bfloat16_t>();
  EXPECT_EQ(p[0].bits, 0x3f80);
  EXPECT_EQ(p[1].bits, 0x3f80);  // 1 + 2^-8 is a tie -> even
  EXPECT_EQ(p[2].bits, 0x3f82);  // 1 + 3*2^-8 is a tie -> even (1 + 2^-6)
  EXPECT_EQ(p[3].bits, 0x7f7f);
  EXPECT_TRUE(std::isnan(to_double(p[4])));
}

TEST(Tensor, FloatToIntTruncatesAndSaturates) {
  Tensor f = Tensor::from_values<double>({2.7, -2.7, std::nan(""), 1e30, -1e30}, {5});
  Tensor i = f.to(DType::Int32);
  const std::int32_t* p = i.data<std::int32_t>();
  EXPECT_EQ(p[0], 2);
  EXPECT_EQ(p[1], -2);
  EXPECT_EQ(p[2], 0);
  EXPECT_EQ(p[3], std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(p[4], std::numeric_limits<std::int32_t>::lowest());
  Tensor b = f.to(DType::Bool);
  EXPECT_EQ(b.at(0), 1.0);
  EXPECT_EQ(b.at(2), 1.0);  // NaN is truthy, as in torch
}

TEST(Tensor, FromStorageChecksSizeAndCopiesMisaligned) {
  auto storage = make_owned_storage(17);
  EXPECT_THROW(Tensor::from_storage(DType::Float64, {3}, storage, 0), Error);
  Tensor ok = Tensor::from_storage(DType::Float64, {2}, storage, 0);
  EXPECT_EQ(ok.storage(), storage);
  Tensor mis = Tensor::from_storage(DType::Float64, {2}, storage, 1);
  EXPECT_NE(mis.storage(), storage);
  EXPECT_EQ(mis.numel(), 2);
}

TEST(Tensor, ReshapeSharesStorage) {
  Tensor t = Tensor::zeros(DType::Int16, {2, 3});
  Tensor r = t.reshape({3, 2});
  EXPECT_EQ(r.storage(), t.storage());
  EXPECT_THROW(t.reshape({4}), Error);
}

TEST(Error, MessageCarriesContext) {
  Error e(ErrorKind::Format, "bad magic", "a/b.npy", "header");
  EXPECT_STREQ(e.what(), "a/b.npy: header: bad magic");
  Error f = Error(ErrorKind::Io, "x").with_context("f.json", "data", "Functional.relu.0");
  EXPECT_STREQ(f.what(), "f.json: data: API Functional.relu.0: x");
  EXPECT_EQ(exit_code(ErrorKind::Security), 6);
}

}  // namespace
}  // namespace probe
