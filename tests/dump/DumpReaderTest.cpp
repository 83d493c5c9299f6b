// dump.json reader: the fixtures written by tests/data/make_dump_fixtures.py (real torch/numpy) and
// hand-written JSON for the corner cases. Expected statistics are derived by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "probe/dump.h"
#include "probe/error.h"

namespace probe {
namespace {

const std::string kDumps = std::string(PROBE_TEST_DATA_DIR) + "/dumps";
const std::string kTensorDump = kDumps + "/pytorch_tensor/step0/rank0/dump.json";

const DumpEntry& entry(const Dump& d, std::string_view key) {
  const DumpEntry* e = d.find(key);
  if (!e) throw std::runtime_error("missing entry " + std::string(key));
  return *e;
}

const TensorInfo& arg(const DumpEntry& e, std::size_t i) { return e.inputs()->items().at(i).tensor(); }

double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

TEST(DumpReader, TopLevelOfATensorModeDump) {
  const Dump d = Dump::open(kTensorDump);
  EXPECT_EQ(d.task(), "tensor");
  EXPECT_EQ(d.level(), "mix");
  EXPECT_EQ(d.framework_field(), "pytorch");
  EXPECT_EQ(d.framework(), Framework::PyTorch);
  ASSERT_TRUE(d.dump_data_dir().has_value());
  EXPECT_EQ(*d.dump_data_dir(), "/dump/path/pytorch_tensor/step0/rank0/dump_tensor_data");
  EXPECT_TRUE(d.declares_tensor_data());
  EXPECT_EQ(d.tensor_dir(), kDumps + "/pytorch_tensor/step0/rank0/dump_tensor_data");
}

TEST(DumpReader, EntriesKeepFileOrder) {
  const Dump d = Dump::open(kTensorDump);
  ASSERT_GE(d.entries().size(), 4u);
  // The module record is written when the module finishes, after the API inside it.
  EXPECT_EQ(d.entries()[0].key, "Functional.linear.0.forward");
  EXPECT_EQ(d.entries()[1].key, "Module.fc.Linear.forward.0");
  EXPECT_EQ(d.entries()[2].key, "Functional.relu.0.forward");
  EXPECT_EQ(d.entries()[3].key, "Torch.cat.0.forward");
  EXPECT_EQ(d.entries().back().key, "Module.fc.Linear.parameters_grad.0");
  EXPECT_EQ(d.find("Nope.x.0.forward"), nullptr);
}

TEST(DumpReader, FloatTensorDescriptor) {
  const Dump d = Dump::open(kTensorDump);
  const DumpEntry& e = entry(d, "Functional.linear.0.forward");
  EXPECT_EQ(e.name.direction, EntryDirection::Forward);
  EXPECT_EQ(e.name.full_name, "Functional.linear.0");
  EXPECT_FALSE(e.name.is_module);
  ASSERT_EQ(e.inputs()->items().size(), 3u);
  // x = [[1, -2, 3, -4], [0.5, 0, -0.5, 8]]: Max 8, Min -4, Mean 6/8, Norm sqrt(94.5) in float32.
  const TensorInfo& x = arg(e, 0);
  EXPECT_EQ(x.type, "torch.Tensor");
  EXPECT_EQ(x.dtype_name, "torch.float32");
  EXPECT_EQ(x.dtype, DType::Float32);
  EXPECT_EQ(x.shape, (Shape{2, 4}));
  EXPECT_EQ(x.max.kind, Statistic::Kind::Float);
  EXPECT_EQ(x.max.d, 8.0);
  EXPECT_EQ(x.min.d, -4.0);
  EXPECT_EQ(x.mean.d, 0.75);
  EXPECT_EQ(x.norm.d, f32(std::sqrt(94.5)));
  EXPECT_EQ(x.requires_grad, true);
  EXPECT_EQ(x.data_name, "Functional.linear.0.forward.input.0.pt");
  EXPECT_EQ(x.field, "input_args.0");
  EXPECT_EQ(x.md5, "");
  EXPECT_EQ(x.nbytes(), 32);
  EXPECT_EQ(e.outputs()->items().at(0).tensor().field, "output.0");
  EXPECT_EQ(e.kwargs()->members().size(), 0u);
  EXPECT_EQ(e.tensors().size(), 4u);
}

TEST(DumpReader, IntScalarStatisticsStayInts) {
  const Dump d = Dump::open(kTensorDump);
  const DumpEntry& e = entry(d, "Tensor.__add__.0.forward");
  const TensorInfo& t = arg(e, 0);  // torch.tensor(423): 0-d stats are the value itself, as JSON int
  EXPECT_EQ(t.dtype, DType::Int64);
  EXPECT_TRUE(t.shape.empty());
  EXPECT_EQ(t.max.kind, Statistic::Kind::Int);
  EXPECT_EQ(t.max.i, 423);
  EXPECT_EQ(t.norm.i, 423);
  const DumpNode& one = e.inputs()->items().at(1);
  ASSERT_EQ(one.kind(), DumpNode::Kind::Value);
  EXPECT_EQ(one.leaf().type, "int");
  EXPECT_EQ(one.leaf().value.as_int(), 1);
  EXPECT_EQ(e.outputs()->items().at(0).tensor().max.i, 424);
}

TEST(DumpReader, NanAndInfinityTokens) {
  const Dump d = Dump::open(kTensorDump);
  // abs input [1, inf, -inf, nan]: torch's max/min/mean/norm all propagate NaN.
  const TensorInfo& s = arg(entry(d, "Torch.abs.0.forward"), 0);
  EXPECT_TRUE(std::isnan(s.max.d));
  EXPECT_TRUE(std::isnan(s.min.d));
  EXPECT_TRUE(std::isnan(s.norm.d));
  // neg input [-inf, 1, 2]: Max 2, Min -inf, Mean -inf, Norm +inf.
  const TensorInfo& n = arg(entry(d, "Torch.neg.0.forward"), 0);
  EXPECT_EQ(n.max.d, 2.0);
  EXPECT_EQ(n.min.d, -INFINITY);
  EXPECT_EQ(n.mean.d, -INFINITY);
  EXPECT_EQ(n.norm.d, INFINITY);
  EXPECT_EQ(entry(d, "Torch.neg.0.forward").outputs()->items()[0].tensor().max.d, INFINITY);
}

TEST(DumpReader, HalfBoolEmptyAndDtypeKwarg) {
  const Dump d = Dump::open(kTensorDump);
  // bf16 [[1.5, -2.25], [0, 3]]: Mean 2.25/4 = 0.5625; Norm sqrt(16.3125) = 4.0389 rounds to bf16 4.03125.
  const DumpEntry& sum = entry(d, "Torch.sum.0.forward");
  const TensorInfo& bf = arg(sum, 0);
  EXPECT_EQ(bf.dtype, DType::BFloat16);
  EXPECT_EQ(bf.mean.d, 0.5625);
  EXPECT_EQ(bf.norm.d, 4.03125);
  EXPECT_EQ(bf.nbytes(), 8);
  const DumpNode* dtype = sum.kwargs()->find("dtype");
  ASSERT_NE(dtype, nullptr);
  EXPECT_EQ(dtype->leaf().type, "torch.dtype");
  EXPECT_EQ(dtype->leaf().value.as_dtype(), DType::Float32);
  // bool [T, F, T]: Max = any = true, Min = all = false, Mean/Norm null.
  const TensorInfo& mask = arg(entry(d, "Tensor.__or__.0.forward"), 0);
  EXPECT_EQ(mask.dtype, DType::Bool);
  EXPECT_EQ(mask.max.kind, Statistic::Kind::Bool);
  EXPECT_TRUE(mask.max.b);
  EXPECT_FALSE(mask.min.b);
  EXPECT_EQ(mask.mean.kind, Statistic::Kind::Null);
  EXPECT_TRUE(std::isnan(mask.mean.as_double()));
  // empty tensors: null statistics and no file
  const TensorInfo& empty = arg(entry(d, "Torch.flatten.0.forward"), 0);
  EXPECT_EQ(empty.shape, (Shape{0, 3}));
  EXPECT_EQ(empty.max.kind, Statistic::Kind::Null);
  EXPECT_FALSE(empty.has_file());
  EXPECT_EQ(empty.nbytes(), 0);
  // nested list argument; fp16 ones(2,3): Norm sqrt(6) = 2.4494898 rounds to fp16 2.44921875
  const DumpEntry& cat = entry(d, "Torch.cat.0.forward");
  const DumpNode& list = cat.inputs()->items().at(0);
  ASSERT_EQ(list.kind(), DumpNode::Kind::List);
  EXPECT_EQ(list.items().at(1).tensor().field, "input_args.0.1");
  EXPECT_EQ(list.items().at(0).tensor().norm.d, 2.44921875);
  EXPECT_EQ(cat.kwargs()->find("dim")->leaf().value.as_int(), 0);
}

TEST(DumpReader, SliceEllipsisSizeAndMemoryFormatLeaves) {
  const Dump d = Dump::open(kTensorDump);
  const DumpNode& index = entry(d, "Tensor.__getitem__.0.forward").inputs()->items().at(1);
  ASSERT_EQ(index.items().size(), 2u);
  EXPECT_EQ(index.items()[0].leaf().value.kind(), Value::Kind::Ellipsis);
  const Slice s = index.items()[1].leaf().value.as_slice();
  EXPECT_EQ(s, (Slice{1, std::nullopt, 2}));
  const Value v = index.to_value();
  EXPECT_EQ(v.to_string(), "[Ellipsis, slice(1, None, 2)]");

  const DumpNode& size = entry(d, "Tensor.reshape.0.forward").inputs()->items().at(1);
  EXPECT_EQ(size.leaf().type, "torch.Size");
  EXPECT_EQ(size.leaf().value.as_int_list(), (std::vector<std::int64_t>{4, 6}));

  const DumpNode* fmt = entry(d, "Tensor.contiguous.0.forward").kwargs()->find("memory_format");
  ASSERT_NE(fmt, nullptr);
  ASSERT_EQ(fmt->leaf().value.kind(), Value::Kind::Opaque);
  EXPECT_EQ(std::get<OpaqueValue>(fmt->leaf().value.storage()).text, "contiguous_format");
}

TEST(DumpReader, ModuleBackwardAndParameterGradients) {
  const Dump d = Dump::open(kTensorDump);
  const DumpEntry& m = entry(d, "Module.fc.Linear.forward.0");
  EXPECT_TRUE(m.name.is_module);
  EXPECT_EQ(m.name.prefix, "Module");
  EXPECT_EQ(m.name.api, "fc.Linear");
  EXPECT_EQ(m.name.call_index, "0");
  EXPECT_EQ(m.name.direction, EntryDirection::Forward);
  EXPECT_EQ(m.is_recompute, false);
  const DumpNode* params = m.section("parameters");
  ASSERT_NE(params, nullptr);
  EXPECT_EQ(params->members().at(0).first, "weight");
  EXPECT_EQ(params->members().at(0).second.tensor().shape, (Shape{3, 4}));
  EXPECT_EQ(params->members().at(1).second.tensor().data_name,
            "Module.fc.Linear.forward.0.parameters.bias.pt");

  const DumpEntry& b = entry(d, "Functional.relu.0.backward");
  EXPECT_EQ(b.name.direction, EntryDirection::Backward);
  EXPECT_EQ(b.name.full_name, "Functional.relu.0");
  EXPECT_EQ(b.inputs()->items().at(0).tensor().field, "input.0");
  EXPECT_EQ(b.outputs()->items().at(0).tensor().data_name, "Functional.relu.0.backward.output.0.pt");

  const DumpEntry& g = entry(d, "Module.fc.Linear.parameters_grad.0");
  EXPECT_EQ(g.name.direction, EntryDirection::ParametersGrad);
  EXPECT_TRUE(g.name.is_module);
  const auto grads = g.tensors();
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(grads[0]->field, "weight.0");
  EXPECT_EQ(grads[0]->data_name, "Module.fc.Linear.parameters_grad.0.weight.pt");
  EXPECT_EQ(grads[0]->requires_grad, false);
}

TEST(DumpReader, RunUtMapsSkipModulesAndKeepOrder) {
  const Dump d = Dump::open(kTensorDump);
  const auto maps = d.run_ut_maps();
  ASSERT_FALSE(maps.forward.empty());
  EXPECT_EQ(maps.forward[0].first, "Functional.linear.0");
  EXPECT_EQ(maps.forward[1].first, "Functional.relu.0");
  for (const auto& [name, e] : maps.forward) EXPECT_EQ(name.find("Module"), std::string::npos);
  ASSERT_EQ(maps.backward.size(), 2u);
  EXPECT_EQ(maps.backward[0].first, "Functional.relu.0");
  EXPECT_EQ(maps.backward[0].second->key, "Functional.relu.0.backward");
}

TEST(DumpReader, StatisticsDumpWithoutFrameworkField) {
  const Dump d = Dump::open(kDumps + "/pytorch_statistics/dump.json");
  EXPECT_EQ(d.task(), "statistics");
  EXPECT_EQ(d.level(), "L1");
  EXPECT_EQ(d.framework_field(), "");
  EXPECT_EQ(d.framework(), Framework::PyTorch);  // sniffed from "torch.Tensor"
  EXPECT_FALSE(d.dump_data_dir().has_value());
  EXPECT_FALSE(d.declares_tensor_data());
  for (const DumpEntry& e : d.entries())
    for (const TensorInfo* t : e.tensors()) EXPECT_FALSE(t->has_file()) << e.key;

  const DumpEntry& drop = entry(d, "Functional.dropout.0.forward");
  EXPECT_EQ(drop.kwargs()->members().size(), 3u);
  EXPECT_EQ(drop.kwargs()->find("p")->leaf().value.kind(), Value::Kind::Float);
  EXPECT_EQ(drop.kwargs()->find("training")->leaf().value.as_bool(), false);
  // fp16 [[1,2],[3,4]]: Norm sqrt(30) = 5.4772 rounds to fp16 5.4765625
  EXPECT_EQ(arg(drop, 0).norm.d, 5.4765625);
  EXPECT_EQ(arg(drop, 0).dtype, DType::Float16);

  const DumpEntry& to = entry(d, "Tensor.to.0.forward");
  EXPECT_EQ(to.is_recompute, false);
  const Value dev = to.kwargs()->find("device")->leaf().value;
  EXPECT_EQ(std::get<OpaqueValue>(dev.storage()).type, "torch.device");
  EXPECT_EQ(std::get<OpaqueValue>(dev.storage()).text, "cpu:None");
  EXPECT_EQ(to.kwargs()->find("dtype")->leaf().value.as_dtype(), DType::Float64);

  EXPECT_EQ(entry(d, "Aten.add.Tensor.0.forward").name.api, "add.Tensor");
  EXPECT_EQ(entry(d, "Torch.linalg.vector_norm.0.forward").name.api, "linalg.vector_norm");
  const DumpNode& fill = entry(d, "Torch.full.0.forward").inputs()->items().at(1);
  EXPECT_EQ(fill.leaf().type, "float32");  // numpy scalar
  EXPECT_EQ(fill.leaf().value.as_double(), 1.5);

  const DumpEntry& ar = entry(d, "Distributed.all_reduce.0.forward");
  EXPECT_TRUE(ar.kwargs()->find("group")->is_null());
  ASSERT_EQ(ar.outputs()->items().size(), 2u);
  EXPECT_TRUE(ar.outputs()->items()[1].is_null());

  const TensorInfo& legacy = arg(entry(d, "Torch.max.0.forward"), 0);
  EXPECT_EQ(legacy.max.d, INFINITY);
  EXPECT_EQ(legacy.max_except_inf_nan.d, 2.0);
  EXPECT_EQ(legacy.min_except_inf_nan.d, 1.0);
  EXPECT_FALSE(arg(drop, 0).max_except_inf_nan.present());

  const Value group = entry(d, "Distributed.barrier.0.forward").kwargs()->find("group")->leaf().value;
  EXPECT_EQ(std::get<OpaqueValue>(group.storage()).text, "[0, 1]");

  const DumpEntry& mb = entry(d, "Torch.matmul.0.backward");
  EXPECT_TRUE(mb.outputs()->items().at(1).is_null());
  EXPECT_EQ(d.run_ut_maps().backward.size(), 1u);
}

// Bitwise CRC-32 (IEEE, reflected 0xEDB88320), written independently of zlib.
std::uint32_t crc32_of(const void* data, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

TEST(DumpReader, Md5ModeCarriesCrc32) {
  const Dump d = Dump::open(kDumps + "/pytorch_md5/dump.json");
  const float relu_in[] = {-1.0f, 0.0f, 1.0f};
  char want[9];
  std::snprintf(want, sizeof want, "%08x", crc32_of(relu_in, sizeof relu_in));
  EXPECT_EQ(arg(entry(d, "Functional.relu.0.forward"), 0).md5, want);
  // bf16 [1, 2] hashes its raw 16-bit words 0x3f80, 0x4000 (little endian)
  const unsigned char bf[] = {0x80, 0x3f, 0x00, 0x40};
  std::snprintf(want, sizeof want, "%08x", crc32_of(bf, sizeof bf));
  EXPECT_EQ(arg(entry(d, "Torch.mul.0.forward"), 0).md5, want);
  EXPECT_EQ(arg(entry(d, "Torch.flatten.0.forward"), 0).md5, "00000000");
}

TEST(DumpReader, MindSporeDump) {
  const Dump d = Dump::open(kDumps + "/mindspore_tensor/step0/rank/dump.json");
  EXPECT_EQ(d.framework(), Framework::MindSpore);
  const DumpEntry& add = entry(d, "Mint.add.0.forward");
  EXPECT_EQ(add.name.prefix, "Mint");
  const TensorInfo& x = arg(add, 0);
  EXPECT_EQ(x.type, "mindspore.Tensor");
  EXPECT_EQ(x.dtype_name, "Float32");
  EXPECT_EQ(x.dtype, DType::Float32);
  EXPECT_FALSE(x.requires_grad.has_value());
  EXPECT_EQ(x.data_name, "Mint.add.0.forward.input.0.npy");
  EXPECT_EQ(x.md5.size(), 8u);
  // x = [[0.5, -1, 2], [4, 0, -8]]: Max 4, Min -8, Mean -2.5/6, Norm sqrt(85.25)
  EXPECT_EQ(x.max.d, 4.0);
  EXPECT_EQ(x.min.d, -8.0);
  EXPECT_EQ(x.mean.d, f32(-2.5 / 6));
  EXPECT_EQ(x.norm.d, f32(std::sqrt(85.25)));
  // positional mindspore.dtype leaf; graph-mode forward using "input"; 0-d bool output
  EXPECT_EQ(entry(d, "Tensor.to.0.forward").inputs()->items().at(1).leaf().value.as_dtype(), DType::BFloat16);
  EXPECT_EQ(entry(d, "Tensor.to.0.forward").outputs()->items().at(0).tensor().dtype, DType::BFloat16);
  const DumpEntry& rms = entry(d, "Primitive.norm.RmsNorm.0.forward");
  EXPECT_EQ(rms.name.api, "norm.RmsNorm");
  ASSERT_NE(rms.inputs(), nullptr);
  EXPECT_EQ(rms.inputs()->items().at(0).tensor().field, "input.0");
  const TensorInfo& flag = rms.outputs()->items().at(1).tensor();
  EXPECT_EQ(flag.dtype, DType::Bool);
  EXPECT_EQ(flag.max.kind, Statistic::Kind::Bool);
  EXPECT_EQ(flag.mean.kind, Statistic::Kind::Null);
  EXPECT_EQ(entry(d, "Functional.flash_attention_score.0.forward")
                .kwargs()
                ->find("input_layout")
                ->leaf()
                .value.as_string(),
            "SBH");
  EXPECT_TRUE(entry(d, "Cell.dense.Dense.forward.0").name.is_module);
  EXPECT_EQ(entry(d, "Jit.Net.0.forward").name.prefix, "Jit");
}

TEST(DumpReader, EntryNames) {
  auto n = parse_entry_name("Torch.linalg.vector_norm.3.backward");
  EXPECT_EQ(n.prefix, "Torch");
  EXPECT_EQ(n.api, "linalg.vector_norm");
  EXPECT_EQ(n.call_index, "3");
  EXPECT_EQ(n.full_name, "Torch.linalg.vector_norm.3");
  EXPECT_EQ(n.direction, EntryDirection::Backward);
  n = parse_entry_name("Cell.0.net.conv2.Conv2d.backward.12");
  EXPECT_TRUE(n.is_module);
  EXPECT_EQ(n.api, "0.net.conv2.Conv2d");
  EXPECT_EQ(n.call_index, "12");
  EXPECT_EQ(n.full_name, "Cell.0.net.conv2.Conv2d.12");
  n = parse_entry_name("Module.conv2.Conv2d.parameters_grad");  // before 2025-12
  EXPECT_EQ(n.direction, EntryDirection::ParametersGrad);
  EXPECT_EQ(n.call_index, "");
  n = parse_entry_name("x_grad.0.debug");
  EXPECT_EQ(n.direction, EntryDirection::Debug);
  EXPECT_EQ(n.api, "x_grad");
  EXPECT_EQ(parse_entry_name("weird").direction, EntryDirection::Unknown);
  EXPECT_EQ(parse_entry_name("").direction, EntryDirection::Unknown);
  EXPECT_EQ(parse_entry_name("...").direction, EntryDirection::Unknown);
  // The spellings are the key's own last segments.
  EXPECT_EQ(to_string(EntryDirection::Forward), "forward");
  EXPECT_EQ(to_string(EntryDirection::Backward), "backward");
  EXPECT_EQ(to_string(EntryDirection::ParametersGrad), "parameters_grad");
  EXPECT_EQ(to_string(EntryDirection::Debug), "debug");
  EXPECT_EQ(to_string(EntryDirection::Unknown), "unknown");
}

TEST(DumpReader, RunUtKeyClassification) {
  EXPECT_EQ(classify_run_ut_key("Module.fc.Linear.forward.0").kind, RunUtKey::Kind::Ignored);
  EXPECT_EQ(classify_run_ut_key("Functional.Module_x.0.forward").kind, RunUtKey::Kind::Ignored);
  auto k = classify_run_ut_key("Aten.add.Tensor.0.forward");
  EXPECT_EQ(k.kind, RunUtKey::Kind::Forward);
  EXPECT_EQ(k.full_name, "Aten.add.Tensor.0");
  EXPECT_EQ(classify_run_ut_key("Torch.matmul.0.backward").kind, RunUtKey::Kind::Backward);
  // "forward" anywhere but not at the end aborts run_ut's parse
  EXPECT_EQ(classify_run_ut_key("Cell.net.forward.0").kind, RunUtKey::Kind::Invalid);
  EXPECT_EQ(classify_run_ut_key("Torch.x.0.parameters_grad").kind, RunUtKey::Kind::Invalid);
  const Dump d =
      Dump::parse(R"({"data": {"Functional.relu.0.forward": {}, "Cell.x.X.forward.0": {}}})", "m.json");
  try {
    d.run_ut_maps();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format);
    EXPECT_EQ(e.api(), "Cell.x.X.forward.0");
    EXPECT_EQ(e.file(), "m.json");
  }
}

}  // namespace
}  // namespace probe
