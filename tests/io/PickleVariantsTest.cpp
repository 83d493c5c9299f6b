// Pickle shapes other torch versions and torch_npu write (spec 1.5.2 "variants a robust reader
// should accept"), on a storage whose float32 elements are 0, 1, ..., 5.
#include "IoTestUtil.h"
#include "io/TensorIo.h"

namespace probe {
namespace {

using namespace std::string_literals;

std::vector<NamedTensor> run(const std::string& p) {
  Tensor values = Tensor::from_values<float>({0, 1, 2, 3, 4, 5}, Shape{6});
  io::StorageLoader load = [&](const std::string& key, std::uint64_t) {
    if (key != "7") throw Error(ErrorKind::Format, "unexpected key " + key);
    return io::StorageBytes{values.storage(), 0, 24};
  };
  return io::unpickle_tensors(p, load, "v.pt");
}

// Arguments (storage, offset, size, stride, requires_grad, hooks) of a (3, 2) transposed view.
const std::string kArgs =
    "(X\x07\0\0\0storage"
    "ctorch.cuda\nFloatStorage\n"  // older torch wrote CUDA storages like this
    "X\x01\0\0\0"
    "7X\x05\0\0\0npu:0K\x06tQK\x00(K\x03K\x02t(K\x01K\x03t\x88"
    "ccollections\nOrderedDict\n)R"s;

void expect_transposed(const std::vector<NamedTensor>& got) {
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].tensor.shape(), (Shape{3, 2}));
  EXPECT_EQ(got[0].tensor.to_doubles(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(PickleVariants, RebuildTensorV2WithMetadataDict) {
  expect_transposed(
      run("\x80\x02"
          "ctorch._utils\n_rebuild_tensor_v2\n("s +
          kArgs + "}tR."s));
}

TEST(PickleVariants, LegacyTorchNpuRebuild) {
  expect_transposed(
      run("\x80\x02"
          "ctorch_npu.utils.storage\n_rebuild_npu_tensor\n("s +
          kArgs + "K\x1dtR."s));
}

TEST(PickleVariants, TensorSubclassViaRebuildFromTypeV2) {
  expect_transposed(
      run("\x80\x02"
          "ctorch._tensor\n_rebuild_from_type_v2\n(ctorch._utils\n_rebuild_tensor_v2\n"
          "ctorch\nTensor\n("s +
          kArgs + "t}tR."s));
}

TEST(PickleVariants, ParameterInsideOrderedDictBuiltByNewobjAndBuild) {
  // OrderedDict via NEWOBJ, filled by SETITEMS, then BUILD with an (ignored) state; the value is a
  // Parameter wrapping the tensor.
  std::string p =
      "\x80\x02"
      "ccollections\nOrderedDict\n)\x81(X\x01\0\0\0w"
      "ctorch._utils\n_rebuild_parameter\n(ctorch._utils\n_rebuild_tensor_v2\n("s +
      kArgs +
      "tR\x88"
      "ccollections\nOrderedDict\n)RtRu}b."s;
  auto got = run(p);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].name, "w");
  EXPECT_EQ(got[0].tensor.to_doubles(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(PickleVariants, MemoSharedStorageAndTextOpcodes) {
  // Two tensors over one storage, the second reusing the memoised persistent id through GET (text
  // protocol-0 memo ops): a contiguous row with a storage offset.
  std::string p =
      "\x80\x02(ctorch._utils\n_rebuild_tensor_v2\n"
      "((X\x07\0\0\0storage"
      "ctorch\nFloatStorage\nX\x01\0\0\0"
      "7X\x03\0\0\0cpuK\x06tp5\nQK\x00(K\x02K\x03t(K\x03K\x01t\x89}tR"
      "ctorch._utils\n_rebuild_tensor_v2\n(g5\nQI3\n(K\x03t(K\x01t\x89}tRl."s;
  auto got = run(p);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].name, "0");
  EXPECT_EQ(got[1].name, "1");
  EXPECT_EQ(got[1].tensor.to_doubles(), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(got[0].tensor.storage(), got[1].tensor.storage()) << "contiguous views share the storage";
}

}  // namespace
}  // namespace probe
