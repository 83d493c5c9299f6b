// Hostile and unusual dump.json inputs: every one must end in a probe::Error naming the file and the
// field (or parse into the documented model), never a crash. Also the data_name escape checks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "probe/dump.h"
#include "probe/error.h"

namespace probe {
namespace {

const std::string kDumps = std::string(PROBE_TEST_DATA_DIR) + "/dumps";
const std::string kBad = kDumps + "/malformed/";

Error open_error(const std::string& path, const DumpParseOptions& options = {}) {
  try {
    Dump::open(path, options);
  } catch (const Error& e) {
    return e;
  }
  throw std::runtime_error("no error for " + path);
}

TEST(DumpMalformed, TruncatedJsonGivesLineAndOffset) {
  const Error e = open_error(kBad + "truncated.json");
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  EXPECT_EQ(e.file(), kBad + "truncated.json");
  EXPECT_NE(e.message().find("line "), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("byte offset"), std::string::npos) << e.what();
}

TEST(DumpMalformed, InvalidUtf8) {
  const Error e = open_error(kBad + "invalid_utf8.json");
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  // the 0xFF byte sits on the dtype line (11) after 5 spaces of indent and `"dtype": "torch.` (16 chars)
  EXPECT_NE(e.message().find("line 11, column 22"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("encoding"), std::string::npos) << e.what();
}

TEST(DumpMalformed, DeepNestingIsRejectedWithoutRecursion) {
  const Error e = open_error(kBad + "deep.json");  // 100000 '['
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  EXPECT_NE(e.message().find("deeper than 512"), std::string::npos) << e.what();
  EXPECT_EQ(e.api(), "Torch.x.0.forward");
  // 600 closed levels: over the default limit, fine with a higher one.
  EXPECT_EQ(open_error(kBad + "deep_closed.json").kind(), ErrorKind::Format);
  DumpParseOptions deep;
  deep.max_depth = 1000;
  const Dump d = Dump::open(kBad + "deep_closed.json", deep);
  ASSERT_EQ(d.entries().size(), 1u);
  // an absurd limit is clamped, so 100000 levels still fail cleanly instead of exhausting the stack
  deep.max_depth = 1 << 30;
  const Error clamped = open_error(kBad + "deep.json", deep);
  EXPECT_NE(clamped.message().find("deeper than 10000"), std::string::npos) << clamped.what();
}

struct WrongField {
  const char* file;
  const char* field;  // expected Error::field()
  const char* api;    // expected Error::api()
};

class DumpWrongTypes : public ::testing::TestWithParam<WrongField> {};

TEST_P(DumpWrongTypes, NameTheFileAndField) {
  const WrongField w = GetParam();
  const Error e = open_error(kBad + w.file);
  EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
  EXPECT_EQ(e.file(), kBad + w.file);
  EXPECT_EQ(e.field(), w.field) << e.what();
  EXPECT_EQ(e.api(), w.api) << e.what();
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, DumpWrongTypes,
    ::testing::Values(WrongField{"wrong_data.json", "data", ""}, WrongField{"wrong_task.json", "task", ""},
                      WrongField{"wrong_shape.json", "input_args.0.shape", "Functional.relu.0.forward"},
                      WrongField{"wrong_dtype.json", "input_args.0.dtype", "Functional.relu.0.forward"},
                      WrongField{"wrong_max.json", "input_args.0.Max", "Functional.relu.0.forward"},
                      WrongField{"wrong_input_args.json", "input_args", "Functional.relu.0.forward"},
                      WrongField{"wrong_entry.json", "", "Functional.relu.0.forward"},
                      WrongField{"missing_shape.json", "input_args.0.shape", "Functional.relu.0.forward"},
                      WrongField{"not_object.json", "", ""}, WrongField{"empty.json", "", ""}));

TEST(DumpMalformed, MissingFileIsIo) {
  const Error e = open_error(kBad + "no_such.json");
  EXPECT_EQ(e.kind(), ErrorKind::Io);
  EXPECT_EQ(e.file(), kBad + "no_such.json");
  EXPECT_EQ(open_error(kBad).kind(), ErrorKind::Io);  // a directory
}

Error parse_error(std::string_view json) {
  try {
    Dump::parse(json, "inline.json");
  } catch (const Error& e) {
    return e;
  }
  throw std::runtime_error("no error for " + std::string(json));
}

TEST(DumpMalformed, InlineWrongTypes) {
  EXPECT_EQ(
      parse_error(
          R"({"data": {"A.b.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32",
            "shape": [-1]}]}}})")
          .field(),
      "input_args.0.shape");
  EXPECT_EQ(parse_error(R"({"data": {"A.b.0.forward": {"input_kwargs": [1]}}})").field(), "input_kwargs");
  EXPECT_EQ(parse_error(R"({"data": {"A.b.0.forward": {"is_recompute": 1}}})").field(), "is_recompute");
  EXPECT_EQ(
      parse_error(
          R"({"data": {"A.b.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float32",
            "shape": [1], "requires_grad": "yes"}]}}})")
          .field(),
      "input_args.0.requires_grad");
  EXPECT_EQ(
      parse_error(R"({"data": {"A.b.0.forward": {"input_args": [{"type": "torch.Size", "value": 3}]}}})")
          .field(),
      "input_args.0.value");
  EXPECT_EQ(parse_error(R"({"dump_data_dir": 5, "data": {}})").field(), "dump_data_dir");
  EXPECT_EQ(parse_error(R"({"data": {}} x)").kind(), ErrorKind::Format);  // trailing garbage
  EXPECT_EQ(parse_error("{\"data\": {\"A.b.0.forward\": {\"input_args\": [\"\\ud800\"]}}}").kind(),
            ErrorKind::Format);  // lone surrogate escape
  EXPECT_EQ(parse_error(std::string_view("{\"da\0ta\": {}}", 13)).kind(), ErrorKind::Format);
  EXPECT_EQ(parse_error("{\"data\": {\"A.b.0.forward\": {\"input_args\": [\":\xe7").kind(),
            ErrorKind::Format);
  // a NUL after a complete document must not hide what follows it
  const Error nul = parse_error(std::string_view("{\"data\": {}}\0{\"x\": 1}", 21));
  EXPECT_NE(nul.message().find("NUL byte"), std::string::npos) << nul.what();
}

TEST(DumpEdgeCases, LenientValuesParse) {
  const Dump d = Dump::parse(R"({
 "task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": "", "new_field": {"x": [1]},
 "data": {
  "Torch.x.0.forward": {
   "input_args": [
    {"type": "torch.Tensor", "dtype": "torch.int64", "shape": [], "Max": 9007199254740993, "Min": -9223372036854775808,
     "Mean": 18446744073709551615, "Norm": NaN, "requires_grad": false},
    {"type": "torch.distributed.tensor.DTensor", "dtype": "torch.float8_e5m2", "shape": [2, 2], "Max": -Infinity,
     "Min": null, "device_mesh": [[0, 1]], "placements": [{"Shard": {"dim": 0}}]},
    {"type": "numpy.ndarray", "dtype": "float64", "shape": [3], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0},
    {}, null, {"class_type": "torch.distributed.P2POp", "op": "isend", "peer": 1,
     "tensor": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1]}},
    {"type": "torch.device", "value": 0}, {"type": "some.future.Type"}, 7, "bare", true,
    {"type": "slice", "value": [null, -1, null]},
    {"type": "torch.dtype", "value": "torch.float8_e4m3fn"},
    {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "datapath": "/old/dump/x.forward.input.0.pt"}
   ],
   "input_kwargs": {"z": {"type": "int", "value": 1}, "a": {"type": "float", "value": 2}},
   "output": []
  },
  "x.0.debug": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1], "data_name": "x.0.debug.pt"},
  "x_grad.0.debug": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1]}]
 }
})",
                             "/some/dir/dump.json");
  EXPECT_EQ(d.dump_data_dir(), std::optional<std::string>(""));
  EXPECT_FALSE(d.declares_tensor_data());
  const DumpEntry& e = d.entries().at(0);
  const auto& args = e.inputs()->items();
  ASSERT_EQ(args.size(), 14u);
  const TensorInfo& big = args[0].tensor();
  EXPECT_EQ(big.max.i, 9007199254740993);  // above 2^53: still exact
  EXPECT_EQ(big.min.i, INT64_MIN);
  EXPECT_EQ(big.mean.kind, Statistic::Kind::Float);  // beyond int64: kept as a float
  EXPECT_EQ(big.mean.d, 18446744073709551615.0);
  EXPECT_TRUE(std::isnan(big.norm.d));
  const TensorInfo& fp8 = args[1].tensor();
  EXPECT_EQ(fp8.type, "torch.distributed.tensor.DTensor");
  EXPECT_EQ(fp8.dtype_name, "torch.float8_e5m2");
  EXPECT_FALSE(fp8.dtype.has_value());  // reported as unsupported, not a parse failure
  EXPECT_FALSE(fp8.nbytes().has_value());
  EXPECT_EQ(fp8.max.d, -INFINITY);
  EXPECT_FALSE(fp8.norm.present());
  EXPECT_EQ(args[2].tensor().dtype, DType::Float64);
  EXPECT_FALSE(args[2].tensor().requires_grad.has_value());
  EXPECT_EQ(args[3].kind(), DumpNode::Kind::Dict);  // {}: a special object msprobe could not describe
  EXPECT_TRUE(args[3].members().empty());
  EXPECT_TRUE(args[4].is_null());
  EXPECT_EQ(args[5].kind(), DumpNode::Kind::Dict);  // P2POp: members kept, tensor reachable
  EXPECT_EQ(args[5].find("tensor")->tensor().field, "input_args.5.tensor");
  EXPECT_EQ(std::get<OpaqueValue>(args[6].leaf().value.storage()).text, "0");
  EXPECT_EQ(std::get<OpaqueValue>(args[7].leaf().value.storage()).type, "some.future.Type");
  EXPECT_EQ(args[8].leaf().type, "");
  EXPECT_EQ(args[8].leaf().value.as_int(), 7);
  EXPECT_EQ(args[9].leaf().value.as_string(), "bare");
  EXPECT_EQ(args[11].leaf().value.as_slice(), (Slice{std::nullopt, -1, std::nullopt}));
  EXPECT_EQ(std::get<OpaqueValue>(args[12].leaf().value.storage()).text, "torch.float8_e4m3fn");
  EXPECT_EQ(args[13].tensor().data_name, "x.forward.input.0.pt");  // legacy datapath: base name only
  EXPECT_EQ(e.kwargs()->members()[0].first, "z");                  // kwargs keep file order
  EXPECT_EQ(e.kwargs()->members()[1].second.leaf().value.kind(), Value::Kind::Float);
  EXPECT_THROW(e.inputs()->to_value(), Error);
  EXPECT_EQ(d.framework(), Framework::PyTorch);

  const DumpEntry& dbg = d.entries().at(1);
  EXPECT_EQ(dbg.name.direction, EntryDirection::Debug);
  EXPECT_EQ(dbg.body.tensor().field, "");
  EXPECT_EQ(dbg.tensors().size(), 1u);
  EXPECT_EQ(d.entries().at(2).tensors().at(0)->field, "0");
}

TEST(DumpEdgeCases, EmptyAndMinimalDumps) {
  const Dump d = Dump::parse(R"({"task": "structure", "level": "L0", "data": {}})", "s.json");
  EXPECT_TRUE(d.entries().empty());
  EXPECT_EQ(d.framework(), Framework::Unknown);
  const Dump ms = Dump::parse(
      R"({"data": {"Mint.abs.0.forward": {"input_args": [{"type": "mindspore.Tensor", "dtype": "Float16", "shape": [1]}]}}})",
      "ms.json");
  EXPECT_EQ(ms.framework(), Framework::MindSpore);  // sniffed
  EXPECT_EQ(ms.tensor_dir(), "./dump_tensor_data");
}

// --- data_name resolution ----------------------------------------------------------------------

const std::string kEscapes = kDumps + "/escapes/dump.json";

Error path_error(const Dump& d, const std::string& key) {
  const DumpEntry* e = d.find(key);
  if (!e) throw std::runtime_error("no entry " + key);
  try {
    d.tensor_path(*e, *e->tensors().at(0));
  } catch (const Error& err) {
    return err;
  }
  throw std::runtime_error("no error for " + key);
}

TEST(DumpTensorFiles, ResolvesInsideDumpTensorData) {
  const Dump d = Dump::open(kEscapes);
  const DumpEntry& e = *d.find("Functional.relu.0.forward");
  const std::string p = d.tensor_path(e, *e.tensors().at(0));
  EXPECT_EQ(p, std::filesystem::canonical(kDumps + "/escapes/dump_tensor_data/ok.pt").string());
}

TEST(DumpTensorFiles, MissingFileIsIoNamingThePath) {
  const Dump d = Dump::open(kEscapes);
  const DumpEntry& e = *d.find("Functional.relu.0.forward");
  try {
    d.tensor_path(e, *e.tensors().at(1));
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::Io);
    EXPECT_NE(err.message().find("dump_tensor_data/missing.pt"), std::string::npos) << err.what();
    EXPECT_EQ(err.field(), "output.0.data_name");
    EXPECT_EQ(err.api(), "Functional.relu.0.forward");
  }
}

TEST(DumpTensorFiles, EscapesAreSecurityErrors) {
  const Dump d = Dump::open(kEscapes);
  for (const char* key : {"Functional.relu.1.forward", "Functional.relu.2.forward",
                          "Functional.relu.3.forward", "Functional.relu.4.forward"}) {
    const Error e = path_error(d, key);
    EXPECT_EQ(e.kind(), ErrorKind::Security) << key << ": " << e.what();
    EXPECT_EQ(e.file(), kEscapes);
    EXPECT_EQ(e.field(), "input_args.0.data_name");
    EXPECT_EQ(e.api(), key);
  }
  EXPECT_NE(path_error(d, "Functional.relu.3.forward").message().find("symlink"), std::string::npos);
}

// Symlinks inside the tensor directory, nested names and a symlinked tensor directory: each file resolves
// to its real path, and a link that leaves the directory is refused, whichever dump was resolved before.
TEST(DumpTensorFiles, SymlinksAndSubdirectoriesResolveToTheRealFile) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("probe-tensor-path-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path real_dir = root / "a" / "real_tensors";
  fs::create_directories(real_dir / "sub");
  fs::create_directories(root / "elsewhere");
  for (const fs::path& f : {real_dir / "ok.pt", real_dir / "sub" / "n.pt", root / "elsewhere" / "x.pt"})
    std::ofstream(f) << "x";
  fs::create_symlink("ok.pt", real_dir / "in_link.pt");
  fs::create_symlink("sub", real_dir / "sub_link");
  fs::create_symlink(root / "elsewhere", real_dir / "out_dir");
  fs::create_directories(root / "b");
  fs::create_directory_symlink(real_dir, root / "b" / "dump_tensor_data");  // the tensor directory is a link
  fs::create_directories(root / "c" / "dump_tensor_data");
  std::ofstream(root / "c" / "dump_tensor_data" / "ok.pt") << "x";
  const std::string json = R"({"task": "tensor", "level": "L1", "data": {"Functional.relu.0.forward": {
    "input_args": [
      {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1], "data_name": "ok.pt"},
      {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1], "data_name": "sub/n.pt"},
      {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1], "data_name": "in_link.pt"},
      {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1], "data_name": "sub_link/n.pt"},
      {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1], "data_name": "./sub/./n.pt"},
      {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1], "data_name": "out_dir/x.pt"}]}}})";
  const Dump linked = Dump::parse(json, (root / "b" / "dump.json").string());
  const Dump plain = Dump::parse(json, (root / "c" / "dump.json").string());
  const DumpEntry& e = linked.entries().at(0);
  const DumpEntry& pe = plain.entries().at(0);
  const std::string real = fs::canonical(real_dir).string();
  for (int round = 0; round < 2; ++round) {  // alternate between the two dumps' tensor directories
    SCOPED_TRACE(round);
    EXPECT_EQ(linked.tensor_path(e, *e.tensors().at(0)), real + "/ok.pt");
    EXPECT_EQ(plain.tensor_path(pe, *pe.tensors().at(0)),
              fs::canonical(root / "c" / "dump_tensor_data" / "ok.pt").string());
    EXPECT_EQ(linked.tensor_path(e, *e.tensors().at(1)), real + "/sub/n.pt");
    EXPECT_EQ(linked.tensor_path(e, *e.tensors().at(2)), real + "/ok.pt");
    EXPECT_EQ(linked.tensor_path(e, *e.tensors().at(3)), real + "/sub/n.pt");
    EXPECT_EQ(linked.tensor_path(e, *e.tensors().at(4)), real + "/sub/n.pt");
    try {
      linked.tensor_path(e, *e.tensors().at(5));
      ADD_FAILURE() << "a symlinked directory leaving the tensor directory was followed";
    } catch (const Error& err) {
      EXPECT_EQ(err.kind(), ErrorKind::Security) << err.what();
    }
    EXPECT_THROW(plain.tensor_path(pe, *pe.tensors().at(1)), Error);  // c has no sub/n.pt
  }
  fs::remove_all(root);
}

TEST(DumpTensorFiles, NoDataName) {
  const Dump d = Dump::open(kDumps + "/pytorch_statistics/dump.json");
  const DumpEntry& e = d.entries().at(0);
  try {
    d.tensor_path(e, *e.tensors().at(0));
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::InvalidArgument);
  }
}

}  // namespace
}  // namespace probe

namespace probe {
namespace {

// Numbers arrive as text and are converted by std::from_chars: correctly rounded like Python's float(),
// ints kept exact within int64.
TEST(DumpEdgeCases, NumberConversion) {
  const Dump d = Dump::parse(R"({"data": {"A.b.0.forward": {"input_args": [
    0.1, 2.2250738585072014e-308, 1.7976931348623157e+308, 5e-324, 1e300, -1e-400, 1.0, -0,
    123456789012345678901234, -9223372036854775809, 1E2, 0.30000000000000004, -Infinity, NaN]}}})",
                             "n.json");
  const auto& a = d.entries().at(0).inputs()->items();
  auto num = [&](std::size_t i) { return a.at(i).leaf().value; };
  EXPECT_EQ(num(0).as_double(), 0.1);
  EXPECT_EQ(num(1).as_double(), 2.2250738585072014e-308);
  EXPECT_EQ(num(2).as_double(), 1.7976931348623157e+308);
  EXPECT_EQ(num(3).as_double(), 5e-324);
  EXPECT_EQ(num(4).as_double(), 1e300);
  EXPECT_EQ(num(5).as_double(), 0.0);
  EXPECT_TRUE(std::signbit(num(5).as_double()));
  EXPECT_EQ(num(6).kind(), Value::Kind::Float);  // "1.0" stays a float
  EXPECT_EQ(num(7).kind(), Value::Kind::Int);
  EXPECT_EQ(num(7).as_int(), 0);
  EXPECT_EQ(num(8).kind(), Value::Kind::Float);  // beyond int64
  EXPECT_EQ(num(8).as_double(), 123456789012345678901234.0);
  EXPECT_EQ(num(9).as_double(), -9223372036854775809.0);
  EXPECT_EQ(num(10).as_double(), 100.0);
  EXPECT_EQ(num(11).as_double(), 0.1 + 0.2);
  EXPECT_EQ(num(12).as_double(), -INFINITY);
  EXPECT_TRUE(std::isnan(num(13).as_double()));
  // Python reads 1e400 as inf, RapidJSON rejects it; msprobe writes Infinity, never an overflowing literal.
  EXPECT_THROW(Dump::parse(R"({"data": {"A.b.0.forward": {"input_args": [1e400]}}})", "n.json"), Error);
}

}  // namespace
}  // namespace probe
