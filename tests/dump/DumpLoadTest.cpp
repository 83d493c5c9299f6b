// Lazy tensor loading through Dump::load_tensor: the files torch.save / numpy.save wrote must match the
// descriptors that the same generator wrote into dump.json (shape, dtype, and Max/Min statistics).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "probe/dump.h"
#include "probe/error.h"

namespace probe {
namespace {

const std::string kDumps = std::string(PROBE_TEST_DATA_DIR) + "/dumps";

// Max/Min of the loaded data against the statistics torch computed when dumping (NaN-free tensors).
void expect_stats_match(const TensorInfo& t, const Tensor& x, const std::string& where) {
  if (x.numel() == 0 || t.shape.empty()) return;
  const std::vector<double> v = x.to_doubles();
  if (std::any_of(v.begin(), v.end(), [](double d) { return std::isnan(d); })) return;
  const double hi = *std::max_element(v.begin(), v.end());
  const double lo = *std::min_element(v.begin(), v.end());
  if (t.max.kind == Statistic::Kind::Bool) {
    EXPECT_EQ(t.max.b, hi != 0) << where;
    EXPECT_EQ(t.min.b, lo != 0) << where;
  } else {
    EXPECT_EQ(t.max.as_double(), hi) << where;
    EXPECT_EQ(t.min.as_double(), lo) << where;
  }
}

TEST(DumpLoad, EveryPyTorchTensorFileMatchesItsDescriptor) {
  for (const char* rank : {"rank0", "rank1"}) {
    const Dump d = Dump::open(kDumps + "/pytorch_tensor/step0/" + rank + "/dump.json");
    int loaded = 0;
    for (const DumpEntry& e : d.entries()) {
      for (const TensorInfo* t : e.tensors()) {
        if (!t->has_file()) continue;
        const std::string where = e.key + " " + t->field;
        const Tensor x = d.load_tensor(e, *t);
        EXPECT_EQ(x.shape(), t->shape) << where;
        ASSERT_TRUE(t->dtype.has_value()) << where;
        EXPECT_EQ(x.dtype(), *t->dtype) << where;  // .pt keeps bf16 as bf16
        expect_stats_match(*t, x, where);
        ++loaded;
      }
    }
    EXPECT_GE(loaded, 40) << rank;
  }
}

TEST(DumpLoad, KnownValues) {
  const Dump d = Dump::open(kDumps + "/pytorch_tensor/step0/rank0/dump.json");
  const DumpEntry& e = *d.find("Functional.linear.0.forward");
  const Tensor x = d.load_tensor(e, e.inputs()->items()[0].tensor());
  EXPECT_EQ(x.to_doubles(), (std::vector<double>{1, -2, 3, -4, 0.5, 0, -0.5, 8}));
  const DumpEntry& add = *d.find("Tensor.__add__.0.forward");
  const Tensor s = d.load_tensor(add, add.inputs()->items()[0].tensor());
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.dtype(), DType::Int64);
  EXPECT_EQ(s.at(0), 423.0);
}

TEST(DumpLoad, MindSporeNpyFiles) {
  const Dump d = Dump::open(kDumps + "/mindspore_tensor/step0/rank/dump.json");
  int loaded = 0;
  for (const DumpEntry& e : d.entries()) {
    for (const TensorInfo* t : e.tensors()) {
      if (!t->has_file()) continue;
      const Tensor x = d.load_tensor(e, *t);
      EXPECT_EQ(x.shape(), t->shape) << e.key;
      // MindSpore saves bf16 tensors as float32 .npy while dump.json keeps "BFloat16" (§1.5.1).
      EXPECT_EQ(x.dtype(), *t->dtype == DType::BFloat16 ? DType::Float32 : *t->dtype) << e.key;
      expect_stats_match(*t, x, e.key + " " + t->field);
      ++loaded;
    }
  }
  EXPECT_GE(loaded, 20);
}

TEST(DumpLoad, ErrorsCarryTheRecordAndFile) {
  const Dump d = Dump::open(kDumps + "/escapes/dump.json");
  const DumpEntry& bad = *d.find("Functional.relu.5.forward");
  try {
    d.load_tensor(bad, *bad.tensors()[0]);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    EXPECT_NE(e.file().find("corrupt.pt"), std::string::npos) << e.what();
    EXPECT_EQ(e.api(), "Functional.relu.5.forward");
  }
  const DumpEntry& link = *d.find("Functional.relu.3.forward");
  try {
    d.load_tensor(link, *link.tensors()[0]);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Security);
  }
}

}  // namespace
}  // namespace probe
