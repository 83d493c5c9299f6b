// probe::DumpWriter: statistics and md5 against torch/zlib, dump.json byte-exact against Python's json.dump,
// round trips through probe's own readers in both layouts, levels, side files, steps, crash safety, and the
// CLI reading what was written.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/construct.h"
#include "probe/csv.h"
#include "probe/dump.h"
#include "probe/dump_layout.h"
#include "probe/dump_writer.h"
#include "probe/error.h"
#include "probe/stack.h"
#include "probe/tensor_file.h"

namespace fs = std::filesystem;
using namespace probe;

namespace {

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/dump_writer";

using probe::testing::slurp;

using TempDir = probe::testing::ScratchDir;

DumpWriterOptions opts(std::string path, const std::function<void(DumpWriterOptions&)>& edit = {}) {
  DumpWriterOptions o;
  o.dump_path = std::move(path);
  if (edit) edit(o);
  return o;
}

DumpRecordContext ctx(std::vector<std::string> stack, std::optional<std::string> parent = std::nullopt) {
  DumpRecordContext c;
  c.stack = std::move(stack);
  c.parent = std::move(parent);
  return c;
}

Tensor f16(std::initializer_list<double> v, Shape s) {
  return Tensor::from_values<double>(std::vector<double>(v), std::move(s)).to(DType::Float16);
}

Tensor tensor_from_case(const rapidjson::Value& c) {
  const DType dt = *parse_dtype(c["dtype"].GetString());
  Shape shape;
  for (const auto& d : c["shape"].GetArray()) shape.push_back(d.GetInt64());
  const auto& vals = c["values"].GetArray();
  if (dt == DType::Bool) {
    std::vector<std::uint8_t> b;
    for (const auto& v : vals) b.push_back(v.GetBool());
    Tensor t = Tensor::zeros(DType::Bool, shape);
    if (!b.empty()) std::memcpy(t.mutable_bytes(), b.data(), b.size());
    return t;
  }
  if (dt == DType::Complex64) {
    std::vector<std::complex<float>> z;
    for (const auto& v : vals)
      z.emplace_back(static_cast<float>(v[0].GetDouble()), static_cast<float>(v[1].GetDouble()));
    return Tensor::from_values<std::complex<float>>(z, shape);
  }
  if (is_integral(dt)) {
    std::vector<std::int64_t> iv;
    for (const auto& v : vals) iv.push_back(v.GetInt64());
    return Tensor::from_values<std::int64_t>(iv, shape).to(dt);
  }
  std::vector<double> dv;
  for (const auto& v : vals) dv.push_back(v.GetDouble());
  return Tensor::from_values<double>(dv, shape).to(dt);
}

// The unit in the last place of `v` in the dtype msprobe computes a statistic in.
double ulp_in(double v, DType stat_dtype) {
  const int mant = stat_dtype == DType::Float16 ? 10 : stat_dtype == DType::BFloat16 ? 7 : 23;
  int e = 0;
  std::frexp(v, &e);
  return std::ldexp(1.0, e - 1 - mant);
}

}  // namespace

// Every case of tests/data/dump_writer/statistics.json (torch/numpy/zlib values, see the generator): Max and
// Min exactly, md5 exactly, Mean and Norm within one unit in the last place of fp16/bf16 statistics and four
// of float32 ones (probe sums in float64 and rounds once; torch sums float32 in float32, which drifts a few
// ulps from the correctly rounded result when terms cancel, e.g. -0.17252306640148163 vs
// -0.17252309620380402).
TEST(DumpStatistics, MatchTorchAndZlibForEveryDtype) {
  const std::string text = slurp(kData + "/statistics.json");
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag>(text.c_str());
  ASSERT_FALSE(doc.HasParseError());
  int checked = 0;
  for (const auto& c : doc.GetArray()) {
    const Tensor t = tensor_from_case(c);
    for (const auto& [fw, field] :
         {std::pair{Framework::PyTorch, "pytorch"}, std::pair{Framework::MindSpore, "mindspore"}}) {
      const std::string where = std::string(c["name"].GetString()) + " / " + field;
      const auto& want = c[field];
      EXPECT_EQ(dump_crc32(t, fw), want["md5"].GetString()) << where;
      const DumpStatistics s = dump_statistics(t, fw);
      const std::string got[4] = {s.max, s.min, s.mean, s.norm};
      DType stat = DType::Float32;
      if (t.dtype() == DType::Float16 || (t.dtype() == DType::BFloat16 && fw == Framework::PyTorch))
        stat = t.dtype();
      for (int k = 0; k < 4; ++k) {
        const auto& w = want["stats"][k];
        const std::string label = where + " stat " + std::to_string(k) + " got " + got[k];
        if (w.IsNull()) {
          EXPECT_EQ(got[k], "null") << label;
        } else if (w.IsBool()) {
          EXPECT_EQ(got[k], w.GetBool() ? "true" : "false") << label;
        } else if (w.IsInt64() && t.ndim() == 0) {
          EXPECT_EQ(got[k], std::to_string(w.GetInt64())) << label;  // 0-d ints stay exact JSON ints
        } else {
          const double e = w.GetDouble();
          double g = 0;
          if (got[k] == "NaN")
            g = NAN;
          else if (got[k] == "Infinity")
            g = INFINITY;
          else if (got[k] == "-Infinity")
            g = -INFINITY;
          else
            g = std::stod(got[k]);
          if (std::isnan(e)) {
            EXPECT_TRUE(std::isnan(g)) << label;
          } else if (std::isinf(e) || k < 2 || t.ndim() == 0) {
            EXPECT_EQ(g, e) << label;
          } else {
            EXPECT_LE(std::abs(g - e), (stat == DType::Float32 ? 4 : 1) * ulp_in(e, stat))
                << label << " want " << e;
          }
          EXPECT_NE(got[k].find_first_of(".eIN"), std::string::npos) << label << ": a float token";
        }
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * 24);
}

// The same calls that tests/data/make_dump_writer_fixtures.py describes give a dump.json equal byte for byte
// to what Python's json.dump(indent=1) wrote there (statistics and md5 by torch/zlib; float16 statistics of
// small exact values, so float64 sums and torch's agree).
TEST(DumpWriter, StatisticsDumpIsByteIdenticalToPythonJson) {
  TempDir dir;
  {
    DumpWriter w(opts(dir.path().string(), [&](DumpWriterOptions& o) {
      o.task = DumpTask::Statistics;
      o.md5 = true;
      o.rank = 0;
    }));
    const Tensor x = f16({0.5, -1.25, 2.0, 3.0, 0.0, -0.75}, {2, 3});
    const Tensor relu = f16({0.5, 0, 2.0, 3.0, 0.0, 0}, {2, 3});
    const std::string relu_key =
        w.api_forward("Functional.relu", {{x}, {{"inplace", Value(false)}}}, {Value(relu)});
    EXPECT_EQ(relu_key, "Functional.relu.0.forward");
    const Value index(std::vector<Value>{Value(Slice{std::nullopt, 1, std::nullopt}), Value(EllipsisValue{})},
                      true);
    w.api_forward("Tensor.__getitem__", {{x, index}, {}}, {Value(f16({0.5, -1.25, 2.0}, {1, 3}))});
    const Tensor idx = Tensor::from_values<std::int64_t>({2, 0}, {2});
    w.api_forward("Torch.index_select",
                  {{x, Value(1), idx},
                   {{"dtype", Value(DType::Float16)},
                    {"note", Value(std::string("caf\xc3\xa9 \"q\"\n"))},
                    {"scale", Value(1e-05)}}},
                  {Value(f16({2.0, 0.5, -0.75, 3.0}, {2, 2})), Value()});
    w.backward(relu_key, {Value(f16({1, 1, 1, 1, 1, 1}, {2, 3}))}, {Value(f16({1, 0, 1, 1, 0, 0}, {2, 3}))});
  }
  const std::string got = slurp(dir.path().string() + "/step0/rank0/dump.json");
  const std::string want = slurp(kData + "/golden_dump.json");
  EXPECT_EQ(got, want);
}

TEST(DumpWriter, PyTorchTensorModeRoundTripsThroughProbesReader) {
  TempDir dir;
  const Tensor bf = Tensor::from_values<double>({1.0, -2.5, 3.140625, 1e-3}, {2, 2}).to(DType::BFloat16);
  const Tensor half = f16({65504, -0.0, 6e-8, 1}, {4});
  const Tensor i32 = Tensor::from_values<std::int32_t>({-7, 0, 2147483647}, {3});
  Tensor flags = Tensor::zeros(DType::Bool, {2});
  flags.mutable_bytes()[1] = std::byte{1};
  const Tensor scalar = Tensor::scalar<std::int64_t>(423);
  const Tensor empty = Tensor::zeros(DType::Float32, {0, 3});
  std::string key;
  {
    DumpWriter w(opts(dir.path().string(), [&](DumpWriterOptions& o) {
      o.task = DumpTask::Tensor;
      o.md5 = true;
    }));
    key = w.api_forward("Torch.where", {{flags, bf, half}, {{"out", Value()}}},
                        {Value(std::vector<Value>{i32, scalar, empty})});
    EXPECT_EQ(w.rank_dir(), (fs::path(dir.path().string()) / "step0" / "rank").string());
  }
  const Dump d = Dump::open(dir.path().string() + "/step0/rank/dump.json");
  EXPECT_EQ(d.task(), "tensor");
  EXPECT_EQ(d.level(), "L1");
  EXPECT_EQ(d.framework(), Framework::PyTorch);
  ASSERT_TRUE(d.declares_tensor_data());
  EXPECT_EQ(fs::path(*d.dump_data_dir()),
            fs::absolute(fs::path(dir.path().string()) / "step0/rank/dump_tensor_data"));
  ASSERT_EQ(d.entries().size(), 1u);
  const DumpEntry& e = d.entries()[0];
  EXPECT_EQ(e.key, "Torch.where.0.forward");
  const auto tensors = e.tensors();
  const Tensor originals[] = {flags, bf, half, i32, scalar, empty};
  const char* names[] = {"Torch.where.0.forward.input.0.pt",    "Torch.where.0.forward.input.1.pt",
                         "Torch.where.0.forward.input.2.pt",    "Torch.where.0.forward.output.0.0.pt",
                         "Torch.where.0.forward.output.0.1.pt", ""};
  ASSERT_EQ(tensors.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    const TensorInfo& ti = *tensors[i];
    EXPECT_EQ(ti.data_name, names[i]) << i;
    EXPECT_EQ(ti.dtype, originals[i].dtype()) << i;
    EXPECT_EQ(ti.shape, originals[i].shape()) << i;
    EXPECT_EQ(ti.md5, dump_crc32(originals[i])) << i;
    EXPECT_EQ(ti.requires_grad, std::optional<bool>(false));
    if (!ti.has_file()) continue;
    const Tensor back = d.load_tensor(e, ti);
    ASSERT_EQ(back.dtype(), originals[i].dtype()) << i;  // bf16 stays bf16 in .pt files
    ASSERT_EQ(back.nbytes(), originals[i].nbytes());
    EXPECT_EQ(std::memcmp(back.bytes(), originals[i].bytes(), back.nbytes()), 0) << i;
  }
  // The empty tensor has statistics null and no file, as msprobe writes it.
  EXPECT_EQ(tensors[5]->max.kind, Statistic::Kind::Null);
  EXPECT_EQ(tensors[3]->max.kind, Statistic::Kind::Float);
  EXPECT_EQ(tensors[4]->max.kind, Statistic::Kind::Int);
  EXPECT_EQ(tensors[4]->max.i, 423);
  EXPECT_EQ(tensors[0]->max.kind, Statistic::Kind::Bool);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path().string() + "/step0/rank/dump_tensor_data"), {}),
            5);
  const DumpNode* out_kw = e.kwargs()->find("out");
  ASSERT_NE(out_kw, nullptr);
  EXPECT_TRUE(out_kw->is_null());
}

// requires_grad is written per tensor as the caller says, by the tensor's path (nested list items, kwargs,
// outputs, module parameters); every other tensor is false (PyTorch's default), and MindSpore has no field.
TEST(DumpWriter, RequiresGradIsWrittenPerTensorByPath) {
  TempDir dir;
  const Tensor a = f16({1, 2}, {2}), b = f16({3, 4}, {2}), c = f16({5, 6}, {2});
  {
    DumpWriter w(opts(dir.path().string(), [](DumpWriterOptions& o) { o.level = DumpLevel::Mix; }));
    DumpRecordContext ctx;
    ctx.requires_grad = {"input.1.0", "kwargs.weight", "output.0", "parameters.bias"};
    w.api_forward("Torch.cat", {{a, Value(std::vector<Value>{b, c})}, {{"weight", Value(a)}}}, {Value(b)},
                  ctx);
    w.module_forward("fc", "Linear", {{a}, {}}, {Value(b)}, {{"weight", a}, {"bias", c}}, ctx);
  }
  const Dump d = Dump::open(dir.path().string() + "/step0/rank/dump.json");
  std::map<std::string, bool> by_field;
  for (const DumpEntry& e : d.entries())
    for (const TensorInfo* t : e.tensors()) {
      ASSERT_TRUE(t->requires_grad.has_value()) << e.key << " " << t->field;
      by_field[e.key + ":" + t->field] = *t->requires_grad;
    }
  const std::map<std::string, bool> want = {
      {"Torch.cat.0.forward:input_args.0", false},
      {"Torch.cat.0.forward:input_args.1.0", true},
      {"Torch.cat.0.forward:input_args.1.1", false},
      {"Torch.cat.0.forward:input_kwargs.weight", true},
      {"Torch.cat.0.forward:output.0", true},
      {"Module.fc.Linear.forward.0:input_args.0", false},
      {"Module.fc.Linear.forward.0:output.0", true},
      {"Module.fc.Linear.forward.0:parameters.weight", false},
      {"Module.fc.Linear.forward.0:parameters.bias", true},
  };
  EXPECT_EQ(by_field, want);
}

TEST(DumpWriter, MindSporeLayoutWritesNpyWithBFloat16AsFloat32) {
  TempDir dir;
  const Tensor bf = Tensor::from_values<double>({1.0, -2.5, 3.140625}, {3}).to(DType::BFloat16);
  {
    DumpWriter w(opts(dir.path().string(), [&](DumpWriterOptions& o) {
      o.framework = Framework::MindSpore;
      o.task = DumpTask::Tensor;
      o.md5 = true;
      o.rank = 1;
    }));
    w.api_forward("Mint.abs", {{bf}, {{"dtype", Value(DType::BFloat16)}}}, {Value(bf)});
  }
  const std::string rank_dir = dir.path().string() + "/step0/rank1";
  const Dump d = Dump::open(rank_dir + "/dump.json");
  EXPECT_EQ(d.framework_field(), "mindspore");
  const DumpEntry& e = d.entries().at(0);
  const TensorInfo& ti = *e.tensors().at(0);
  EXPECT_EQ(ti.type, "mindspore.Tensor");
  EXPECT_EQ(ti.dtype_name, "BFloat16");
  EXPECT_FALSE(ti.requires_grad.has_value());  // MindSpore writes no requires_grad
  EXPECT_EQ(ti.data_name, "Mint.abs.0.forward.input.0.npy");
  // MindSpore hashes bf16 widened to float32 (§1.4.8).
  EXPECT_EQ(ti.md5, dump_crc32(bf.to(DType::Float32), Framework::PyTorch));
  const Tensor back = load_npy(rank_dir + "/dump_tensor_data/" + ti.data_name);
  ASSERT_EQ(back.dtype(), DType::Float32);
  EXPECT_EQ(back.to_doubles(), bf.to_doubles());
  const std::string json = slurp(rank_dir + "/dump.json");
  EXPECT_NE(json.find("\"type\": \"mindspore.dtype\",\n     \"value\": \"BFloat16\""), std::string::npos)
      << json;
}

TEST(DumpWriter, LevelsKeepTheirRecordsAndSideFilesDescribeThem) {
  TempDir dir;
  const Tensor x = f16({1, 2}, {2});
  const std::vector<std::string> stack = {"File /m.py, line 3, in forward, \n y = self.fc(x)",
                                          "File /t.py, line 9, in <module>, \n main()"};
  for (DumpLevel level : {DumpLevel::L0, DumpLevel::L1, DumpLevel::Mix}) {
    const std::string root = dir.path().string() + "/" + std::to_string(static_cast<int>(level));
    {
      DumpWriter w(opts(root, [&](DumpWriterOptions& o) {
        o.level = level;
        o.rank = 0;
      }));
      const std::string mod_key = "Module.fc.Linear.forward.0";
      w.api_forward("Functional.linear", {{x}, {}}, {Value(x)}, ctx(stack, mod_key));
      w.api_forward("Functional.relu", {{x}, {}}, {Value(x)}, ctx(stack, mod_key));
      EXPECT_EQ(w.module_forward("fc", "Linear", {{x}, {}}, {Value(x)}, {{"weight", x}}, ctx({"File other"})),
                mod_key);
      EXPECT_EQ(w.backward(mod_key, {Value(x)}, {Value(x)}), "Module.fc.Linear.backward.0");
      EXPECT_EQ(w.parameters_grad("fc", "Linear", {{"weight", x}}), "Module.fc.Linear.parameters_grad.0");
    }
    const Dump d = Dump::open(root + "/step0/rank0/dump.json");
    std::vector<std::string> keys;
    for (const auto& e : d.entries()) keys.push_back(e.key);
    const StackInfo st = StackInfo::open(root + "/step0/rank0/stack.json");
    const ConstructInfo con = ConstructInfo::open(root + "/step0/rank0/construct.json");
    if (level == DumpLevel::L1) {
      EXPECT_EQ(keys, (std::vector<std::string>{"Functional.linear.0.forward", "Functional.relu.0.forward"}));
      EXPECT_TRUE(con.nodes().empty());   // construct.json is {} for L1
      ASSERT_EQ(st.groups().size(), 1u);  // identical stacks share one group
      EXPECT_EQ(st.groups()[0].keys.size(), 2u);
      EXPECT_EQ(st.groups()[0].frames, stack);
    } else {
      std::vector<std::string> want = {"Module.fc.Linear.forward.0", "Module.fc.Linear.backward.0",
                                       "Module.fc.Linear.parameters_grad.0"};
      if (level == DumpLevel::Mix)
        want.insert(want.begin(), {"Functional.linear.0.forward", "Functional.relu.0.forward"});
      EXPECT_EQ(keys, want);
      ASSERT_NE(con.find("Module.fc.Linear.forward.0"), nullptr);
      EXPECT_FALSE(con.find("Module.fc.Linear.forward.0")->parent.has_value());
      EXPECT_EQ(con.find("Functional.relu.0.forward") != nullptr, level == DumpLevel::Mix);
      if (level == DumpLevel::Mix) {
        EXPECT_EQ(con.find("Functional.relu.0.forward")->parent,
                  std::optional<std::string>("Module.fc.Linear.forward.0"));
      }
      EXPECT_EQ(st.groups().size(), level == DumpLevel::Mix ? 2u : 1u);
      const DumpEntry* m = d.find("Module.fc.Linear.forward.0");
      ASSERT_NE(m, nullptr);
      ASSERT_NE(m->section("parameters"), nullptr);
      EXPECT_NE(m->section("parameters")->find("weight"), nullptr);
      const DumpEntry* g = d.find("Module.fc.Linear.parameters_grad.0");
      ASSERT_NE(g, nullptr);
      EXPECT_EQ(g->body.find("weight")->items().size(), 1u);
    }
  }
}

TEST(DumpWriter, StepsAndRanksFollowMsprobesDirectoryNames) {
  TempDir dir;
  const Tensor x = f16({1}, {1});
  {
    DumpWriter w(opts(dir.path().string(), [&](DumpWriterOptions& o) {
      o.rank = 3;
      o.step = 2;
    }));
    EXPECT_EQ(w.api_forward("Functional.relu", {{x}, {}}, {Value(x)}), "Functional.relu.0.forward");
    EXPECT_EQ(w.api_forward("Functional.relu", {{x}, {}}, {Value(x)}), "Functional.relu.1.forward");
    w.next_step();
    EXPECT_EQ(w.record_count(), 0u);
    EXPECT_EQ(w.api_forward("Functional.relu", {{x}, {}}, {Value(x)}), "Functional.relu.0.forward");
  }
  const DumpLayout layout = DumpLayout::discover(dir.path().string());
  ASSERT_EQ(layout.ranks.size(), 2u);
  EXPECT_EQ(layout.ranks[0].step, "step2");
  EXPECT_EQ(layout.ranks[1].step, "step3");
  EXPECT_EQ(layout.ranks[1].rank_index, std::optional<long long>(3));
  EXPECT_EQ(Dump::open(layout.ranks[0].dump_json).entries().size(), 2u);
  EXPECT_EQ(Dump::open(layout.ranks[1].dump_json).entries().size(), 1u);
  EXPECT_EQ(fs::status(layout.ranks[0].dir).permissions() & fs::perms::all,
            fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
}

TEST(DumpWriter, DumpJsonIsRewrittenOnlyAtFlushPoints) {
  TempDir dir;
  const Tensor x = f16({1}, {1});
  DumpWriter w(opts(dir.path().string(), [&](DumpWriterOptions& o) { o.flush_every = 2; }));
  const std::string path = w.dump_json_path();
  EXPECT_EQ(Dump::open(path).entries().size(), 0u);  // the skeleton exists from the start
  w.api_forward("Functional.relu", {{x}, {}}, {Value(x)});
  EXPECT_EQ(Dump::open(path).entries().size(), 0u);
  w.api_forward("Functional.relu", {{x}, {}}, {Value(x)});
  EXPECT_EQ(Dump::open(path).entries().size(), 2u);
  w.api_forward("Functional.relu", {{x}, {}}, {Value(x)});
  w.flush();
  EXPECT_EQ(Dump::open(path).entries().size(), 3u);
  w.close();
  EXPECT_THROW(w.api_forward("Functional.relu", {{x}, {}}, {Value(x)}), Error);
}

// A flush writes a new file and renames it over dump.json: a hard link to the previous dump.json keeps
// that version, whole and under its own inode, while dump.json becomes another inode with both records.
TEST(DumpWriter, AFlushReplacesDumpJsonByANewFile) {
  TempDir dir;
  const Tensor x = f16({1}, {1});
  DumpWriter w(opts(dir.path().string(), [&](DumpWriterOptions& o) { o.flush_every = 0; }));
  const std::string path = w.dump_json_path();
  w.api_forward("Functional.relu", {{x}, {}}, {Value(x)});
  w.flush();
  const std::string before = slurp(path);
  const std::string kept = dir.path().string() + "/dump.json.before";
  ASSERT_EQ(::link(path.c_str(), kept.c_str()), 0) << std::strerror(errno);
  struct stat old_inode {};
  ASSERT_EQ(::stat(kept.c_str(), &old_inode), 0);
  w.api_forward("Functional.relu", {{x}, {}}, {Value(x)});
  w.flush();
  struct stat now {
  }, kept_now{};
  ASSERT_EQ(::stat(path.c_str(), &now), 0);
  ASSERT_EQ(::stat(kept.c_str(), &kept_now), 0);
  EXPECT_NE(now.st_ino, old_inode.st_ino) << "dump.json was rewritten in place";
  EXPECT_EQ(kept_now.st_ino, old_inode.st_ino);
  EXPECT_EQ(kept_now.st_nlink, 1u) << "the name dump.json still points at the previous version";
  EXPECT_EQ(slurp(kept), before);
  EXPECT_EQ(Dump::open(kept).entries().size(), 1u);
  EXPECT_EQ(Dump::open(path).entries().size(), 2u);
}

namespace {

// In a child process: records one API, flushes, records 50 more, lowers the file-size limit to a little
// above the size of that dump.json and flushes again. Prints what the flush said and whether dump.json is
// still the first version, whole; the exit code is 0 only when the flush failed with an I/O error, the first
// version is intact and no temporary file is left behind.
int flush_past_the_file_size_limit() {
  TempDir dir;
  const Tensor x = f16({1}, {1});
  DumpWriter w(opts(dir.path().string(), [&](DumpWriterOptions& o) {
    o.flush_every = 0;
    o.side_files = false;
  }));
  const std::string path = w.dump_json_path();
  w.api_forward("Functional.relu", {{x}, {}}, {Value(x)});
  w.flush();
  const std::string before = slurp(path);
  for (int i = 0; i < 50; ++i) w.api_forward("Functional.relu", {{x}, {}}, {Value(x)});
  ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG instead of killing
  rlimit cap{};
  if (::getrlimit(RLIMIT_FSIZE, &cap) != 0) return 2;
  const rlimit unlimited = cap;
  cap.rlim_cur = before.size() + 64;
  if (::setrlimit(RLIMIT_FSIZE, &cap) != 0) return 2;
  int code = 0;
  try {
    w.flush();
    std::fprintf(stderr, "flushed without an error\n");
    code = 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "refused: %s in %s: %s\n", std::string(to_string(e.kind())).c_str(),
                 fs::path(e.file()).filename().string().c_str(), e.message().c_str());
    if (e.kind() != ErrorKind::Io) code = 1;
  }
  ::setrlimit(RLIMIT_FSIZE, &unlimited);
  const std::string after = slurp(path);
  if (after == before) {
    std::fprintf(stderr, "dump.json whole\n");
  } else {
    std::fprintf(stderr, "dump.json changed: %zu bytes, %zu before\n", after.size(), before.size());
    code = 1;
  }
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path()))
    if (entry.path().filename() != "dump.json") {
      std::fprintf(stderr, "left behind: %s\n", entry.path().filename().string().c_str());
      code = 1;
    }
  return code;
}

}  // namespace

// A flush whose write fails reports an I/O error naming dump.json and leaves the previous dump.json whole.
// The write fails for real: a re-executed child lowers its file-size limit (RLIMIT_FSIZE; write() then fails
// with EFBIG). A read-only directory would not do: as root (CI) the write goes through anyway.
TEST(DumpWriter, AFailingFlushReportsItAndKeepsThePreviousDumpJson) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(flush_past_the_file_size_limit()), ::testing::ExitedWithCode(0),
              "refused: I/O error in dump.json: cannot write: File too large\ndump.json whole\n");
}

TEST(DumpWriter, RejectsNamesMsprobeCouldNotWrite) {
  TempDir dir;
  DumpWriter w(opts(dir.path().string(), [&](DumpWriterOptions& o) { o.task = DumpTask::Tensor; }));
  const Tensor x = f16({1}, {1});
  for (const char* bad : {"relu", "Functional.re lu", "Functional..relu", "../x.relu", ""}) {
    try {
      w.api_forward(bad, {{x}, {}}, {Value(x)});
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << bad;
      EXPECT_EQ(e.api(), bad);
    }
  }
  EXPECT_THROW(w.backward("Functional.relu.0", {}, {}), Error);
  EXPECT_THROW(w.api_forward("Functional.relu", {{}, {{"bad key", Value(x)}}}, {}), Error);
  EXPECT_EQ(w.record_count(), 0u);  // a refused record leaves nothing behind
  EXPECT_THROW(DumpWriter(opts("")), Error);
  EXPECT_THROW(DumpWriter(opts("/proc/definitely/not/writable")), Error);
}

TEST(DumpWriter, ConcurrentRecordsAreAllKept) {
  TempDir dir;
  {
    DumpWriter w(opts(dir.path().string(), [&](DumpWriterOptions& o) {
      o.task = DumpTask::Tensor;
      o.flush_every = 7;
    }));
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&w, t] {
        const Tensor x = Tensor::from_values<float>({static_cast<float>(t)}, {1});
        for (int i = 0; i < 25; ++i) w.api_forward("Functional.relu", {{x}, {}}, {Value(x)});
      });
    for (auto& th : threads) th.join();
  }
  const Dump d = Dump::open(dir.path().string() + "/step0/rank/dump.json");
  ASSERT_EQ(d.entries().size(), 100u);
  for (int i = 0; i < 100; ++i)
    EXPECT_NE(d.find("Functional.relu." + std::to_string(i) + ".forward"), nullptr);
}

// kill -9 while records stream in: dump.json is always a complete earlier version (it parses, and every file
// it names exists), never a torn one.
TEST(DumpWriter, KilledProcessLeavesACompleteDumpJson) {
  TempDir dir;
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      DumpWriter w(opts(dir.path().string(), [&](DumpWriterOptions& o) {
        o.task = DumpTask::Tensor;
        o.flush_every = 1;
      }));
      const Tensor x = Tensor::zeros(DType::Float32, {64, 64});
      for (int i = 0; i < 1000000; ++i) w.api_forward("Functional.relu", {{x}, {}}, {Value(x)});
    } catch (...) {
    }
    ::_exit(0);
  }
  const std::string path = dir.path().string() + "/step0/rank/dump.json";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  // Wait until some records are in, so the kill lands mid-stream.
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (fs::exists(path) && Dump::open(path).entries().size() >= 5) break;
    } catch (const Error&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const Dump d = Dump::open(path);
  EXPECT_GE(d.entries().size(), 5u);
  for (const auto& e : d.entries())
    for (const TensorInfo* t : e.tensors()) EXPECT_TRUE(fs::exists(d.tensor_path(e, *t))) << t->data_name;
}

// The dump is what probe's own commands read: `probe info` sees every record, and `probe run_ut` judges a
// correctly rounded bf16 output as pass and a corrupted one as error.
TEST(DumpWriter, CliReadsTheWrittenDump) {
  TempDir dir;
  const Tensor x = Tensor::from_values<double>({-2.0, -0.5, 0.0, 0.25, 1.0, 3.0}, {2, 3}).to(DType::BFloat16);
  const Tensor relu = Tensor::from_values<double>({0, 0, 0, 0.25, 1.0, 3.0}, {2, 3}).to(DType::BFloat16);
  const Tensor wrong = Tensor::from_values<double>({0, 0, 0, 0.5, 2.0, 6.0}, {2, 3}).to(DType::BFloat16);
  {
    DumpWriter w(opts(dir.path().string(), [&](DumpWriterOptions& o) {
      o.task = DumpTask::Tensor;
      o.rank = 0;
    }));
    w.api_forward("Functional.relu", {{x}, {}}, {Value(relu)});
    w.api_forward("Functional.relu", {{x}, {}}, {Value(wrong)});
  }
  const std::string json = dir.path().string() + "/step0/rank0/dump.json";
  const std::string cli = PROBE_CLI_PATH;
  ASSERT_EQ(
      std::system((cli + " info '" + dir.path().string() + "' > '" + dir.path().string() + "/info.txt' 2>&1")
                      .c_str()),
      0);
  const std::string info = slurp(dir.path().string() + "/info.txt");
  EXPECT_NE(info.find("framework: pytorch   task: tensor   level: L1"), std::string::npos) << info;
  EXPECT_NE(info.find("tensor files: 4 referenced, 4 ok"), std::string::npos) << info;
  const std::string out = dir.path().string() + "/out";
  ASSERT_EQ(std::system((cli + " -f pytorch run_ut -api_info '" + json + "' -o '" + out + "' > '" +
                         dir.path().string() + "/run_ut.txt' 2>&1")
                            .c_str()),
            0)
      << slurp(dir.path().string() + "/run_ut.txt");
  std::string result;
  for (const auto& f : fs::directory_iterator(out))
    if (f.path().filename().string().starts_with("accuracy_checking_result_")) result = f.path().string();
  ASSERT_FALSE(result.empty());
  const auto rows = csv_read_file(result);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][0], "Functional.relu.0");
  EXPECT_EQ(rows[1][1], "pass");
  EXPECT_EQ(rows[2][0], "Functional.relu.1");
  EXPECT_EQ(rows[2][1], "error");
}

// Writes the dumps that tests/data/check_written_dump.py reads with Python (CTest
// dump_writer.python_torch_load sets PROBE_DUMP_WRITER_PYTHON_DIR); run alone, it writes them to a temporary
// directory and reads them back.
TEST(DumpWriterPython, WritesDumpForPython) {
  TempDir tmp;
  const char* env = std::getenv("PROBE_DUMP_WRITER_PYTHON_DIR");
  const std::string root = env && *env ? env : tmp.path().string();
  const Tensor bf =
      Tensor::from_values<double>({1.0, -2.5, 3.140625, 1e-3, 7, -8}, {2, 3}).to(DType::BFloat16);
  const Tensor half = f16({65504, -0.0, 6e-8, 1}, {2, 2});
  const Tensor f32 = Tensor::from_values<float>({0.1f, -3.5f, 1e30f}, {3});
  const Tensor f64 = Tensor::from_values<double>({0.1, -3.5}, {2});
  const Tensor i64 = Tensor::from_values<std::int64_t>({-7, 0, 1ll << 40}, {3});
  const Tensor u8 = Tensor::from_values<std::uint8_t>({0, 255, 7}, {3});
  Tensor flags = Tensor::zeros(DType::Bool, {3});
  flags.mutable_bytes()[2] = std::byte{1};
  const Tensor scalar = Tensor::scalar<std::int64_t>(423);
  const Tensor empty = Tensor::zeros(DType::Float16, {0});
  for (Framework fw : {Framework::PyTorch, Framework::MindSpore}) {
    const std::string sub = root + (fw == Framework::PyTorch ? "/pytorch" : "/mindspore");
    DumpWriter w(opts(sub, [&](DumpWriterOptions& o) {
      o.framework = fw;
      o.task = DumpTask::Tensor;
      o.level = DumpLevel::Mix;
      o.md5 = true;
      o.rank = 0;
    }));
    const std::string key = w.api_forward(
        fw == Framework::PyTorch ? "Torch.where" : "Mint.where", {{flags, bf, half}, {{"extra", Value(f64)}}},
        {Value(std::vector<Value>{f32, i64, u8, scalar, empty})}, ctx({"File /x.py, line 1, in f, \n g()"}));
    w.backward(key, {Value(f32)}, {Value(), Value(bf), Value(half)});
    w.module_forward("block", "Block", {{bf}, {}}, {Value(bf)}, {{"weight", half}});
    w.close();
    const Dump d = Dump::open(w.dump_json_path());
    EXPECT_EQ(d.entries().size(), 3u);
    for (const auto& e : d.entries())
      for (const TensorInfo* t : e.tensors()) {
        if (t->has_file()) {
          EXPECT_NO_THROW(d.load_tensor(e, *t)) << t->data_name;
        }
      }
  }
}
