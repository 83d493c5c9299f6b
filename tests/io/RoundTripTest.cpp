// save_npy writes what numpy.save writes; save_pt writes what load_pt (and torch.load) reads back.
#include <cmath>
#include <cstring>

#include "IoTestUtil.h"
#include "probe/tensor_file.h"

namespace probe {
namespace {

using test::tensors_dir;
using testing::slurp;

const char* const kNumpyWritten[] = {
    "npy_bool.npy",          "npy_uint8.npy",          "npy_int8.npy",         "npy_int16.npy",
    "npy_int32.npy",         "npy_int64.npy",          "npy_uint16.npy",       "npy_uint32.npy",
    "npy_uint64.npy",        "npy_float16.npy",        "npy_float32.npy",      "npy_float64.npy",
    "npy_complex64.npy",     "npy_complex128.npy",     "npy_0d_float64.npy",   "npy_0d_bool.npy",
    "npy_empty_float32.npy", "npy_empty_3d_int64.npy", "npy_fortran_int64.npy"};

TEST(NpyRoundTrip, SaveNpyIsByteIdenticalToNumpy) {
  test::TempDir dir;
  for (const char* name : kNumpyWritten) {
    SCOPED_TRACE(name);
    Tensor t = load_npy(tensors_dir() + name);
    std::string out = dir.file("out.npy");
    save_npy(out, t);
    std::string want = slurp(tensors_dir() + name);
    if (std::string(name) == "npy_fortran_int64.npy") {
      // numpy wrote it in Fortran order; probe writes C order: same header length, other data order.
      EXPECT_EQ(slurp(out).size(), want.size());
      EXPECT_EQ(load_npy(out).to_doubles(), t.to_doubles());
      continue;
    }
    EXPECT_EQ(slurp(out), want);
  }
}

TEST(NpyRoundTrip, BigEndianAndFortranFilesSaveAsNativeCOrder) {
  test::TempDir dir;
  Tensor be = load_npy(tensors_dir() + "npy_be_float64.npy");
  std::string out = dir.file("be.npy");
  save_npy(out, be);
  EXPECT_EQ(slurp(out), slurp(tensors_dir() + "npy_float64.npy"));
}

TEST(NpyRoundTrip, BFloat16IsStoredAsFloat32LikeMindSporeDumps) {
  test::TempDir dir;
  Tensor bf = load_pt(tensors_dir() + "pt_bfloat16.pt").at(0).tensor;
  ASSERT_EQ(bf.dtype(), DType::BFloat16);
  std::string out = dir.file("bf.npy");
  save_npy(out, bf);
  Tensor back = load_npy(out);
  EXPECT_EQ(back.dtype(), DType::Float32);
  Tensor want = bf.to(DType::Float32);
  ASSERT_EQ(back.nbytes(), want.nbytes());
  EXPECT_EQ(std::memcmp(back.bytes(), want.bytes(), want.nbytes()), 0);
  // Converting back to bfloat16 is exact (NaN payloads aside).
  Tensor again = back.to(DType::BFloat16);
  for (std::int64_t i = 0; i < bf.numel(); ++i) {
    if (std::isnan(bf.at(i))) {
      EXPECT_TRUE(std::isnan(again.at(i)));
    } else {
      EXPECT_EQ(again.data<bfloat16_t>()[i].bits, bf.data<bfloat16_t>()[i].bits) << i;
    }
  }
}

TEST(NpyRoundTrip, SaveReplacesAtomically) {
  test::TempDir dir;
  std::string out = dir.file("x.npy", "old contents");
  save_npy(out, Tensor::from_values<float>({1.0f, 2.0f}, Shape{2}));
  EXPECT_EQ(load_npy(out).to_doubles(), (std::vector<double>{1.0, 2.0}));
  test::expect_error([&] { save_npy(dir.path() + "/no/such/dir/x.npy", Tensor()); }, ErrorKind::Io,
                     {"x.npy"});
}

TEST(PtRoundTrip, EveryDTypeSurvivesSavePtLoadPt) {
  test::TempDir dir;
  std::vector<Tensor> tensors;
  for (const char* name : kNumpyWritten) tensors.push_back(load_npy(tensors_dir() + name));
  tensors.push_back(load_pt(tensors_dir() + "pt_bfloat16.pt").at(0).tensor);
  for (const Tensor& t : tensors) {
    SCOPED_TRACE(std::string(name(t.dtype())) + " " + shape_to_string(t.shape()));
    std::string out = dir.file("Functional.add.0.forward.output.0.pt");
    save_pt(out, t);
    Tensor back = load_tensor_file(out);
    EXPECT_EQ(back.dtype(), t.dtype());
    EXPECT_EQ(back.shape(), t.shape());
    ASSERT_EQ(back.nbytes(), t.nbytes());
    EXPECT_EQ(std::memcmp(back.bytes(), t.bytes(), t.nbytes()), 0);
    if (t.numel() > 0) {
      EXPECT_TRUE(back.is_mapped());
    }
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(back.bytes()) % 64, 0u) << "records are 64-byte aligned";
  }
}

}  // namespace
}  // namespace probe
