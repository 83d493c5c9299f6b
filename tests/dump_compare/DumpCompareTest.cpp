// `compare` against msprobe-shaped dump pairs from tests/data/make_dump_compare_fixtures.py; expected metrics
// and statistics were computed there with numpy float64 (dump-and-compare §3.6-§3.8).
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <zip.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "CompareTable.h"
#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "dump_compare/DumpCompareInternal.h"
#include "probe/csv.h"
#include "probe/dump_compare.h"
#include "probe/error.h"

namespace fs = std::filesystem;
using namespace probe;

namespace {

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/dump_compare/";

std::string rank0(const std::string& c, const std::string& side) {
  return kData + c + "/" + side + "/step0/rank0/dump.json";
}

rapidjson::Document load_json(const std::string& path) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseNanAndInfFlag>(probe::testing::slurp(path).c_str());
  EXPECT_FALSE(d.HasParseError()) << path;
  return d;
}

using probe::testing::CompareTable;
using probe::testing::ScratchDir;

CompareTable compare(const std::string& c, DumpCompareOptions o = {}) {
  return CompareTable{compare_dump_files(rank0(c, "npu"), rank0(c, "bench"), "", o)};
}

void expect_metric(const rapidjson::Value& want, const std::string& got, const std::string& what) {
  if (want.IsString()) {
    EXPECT_EQ(got, want.GetString()) << what;
  } else {
    char* end = nullptr;
    const double g = std::strtod(got.c_str(), &end);
    ASSERT_TRUE(end && *end == 0 && !got.empty()) << what << ": '" << got << "'";
    // 12-decimal rounding in both; the last digit may differ by summation order.
    EXPECT_NEAR(g, want.GetDouble(), 2e-12 + 1e-12 * std::fabs(want.GetDouble())) << what;
  }
}

}  // namespace

TEST(DumpCompareRealData, MetricsMatchNumpyFloat64) {
  const CompareTable t = compare("real");
  ASSERT_EQ(t.t.mode, DumpCompareMode::RealData);
  const auto expected = load_json(kData + "real/expected.json");
  const char* cols[] = {"Cosine",
                        "EucDist",
                        "MaxAbsErr",
                        "MaxRelativeErr",
                        "One Thousandth Err Ratio",
                        "Five Thousandths Err Ratio"};
  int checked = 0;
  for (auto& m : expected.GetObject()) {
    const std::string name = m.name.GetString();
    if (!m.value.HasMember("metrics")) continue;
    for (int k = 0; k < 6; ++k)
      expect_metric(m.value["metrics"][k], t.cell(name, cols[k]), name + " " + cols[k]);
    EXPECT_EQ(t.cell(name, "Accuracy Reached or Not"), m.value["accuracy"].GetString()) << name;
    const std::string err = t.cell(name, "Err_message");
    const std::string msg = m.value["message"].GetString();
    if (name.rfind("Torch.exp", 0) == 0)
      EXPECT_EQ(err, "Requires_grad inconsistent. " + msg) << name;
    else
      EXPECT_EQ(err, msg) << name;
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST(DumpCompareRealData, RowOrderUnmatchedAndNoFileRows) {
  const CompareTable t = compare("real");
  ASSERT_EQ(t.t.rows.size(), 28u);
  EXPECT_EQ(t.t.rows.front()[0], "Functional.linear.0.forward.input.0");
  EXPECT_EQ(t.t.rows.back()[0], "Torch.tanh.0.forward.output.0");
  const std::vector<std::string> header = {"NPU Name",
                                           "Bench Name",
                                           "NPU Dtype",
                                           "Bench Dtype",
                                           "NPU Tensor Shape",
                                           "Bench Tensor Shape",
                                           "NPU Requires_grad",
                                           "Bench Requires_grad",
                                           "Cosine",
                                           "EucDist",
                                           "MaxAbsErr",
                                           "MaxRelativeErr",
                                           "One Thousandth Err Ratio",
                                           "Five Thousandths Err Ratio",
                                           "NPU max",
                                           "NPU min",
                                           "NPU mean",
                                           "NPU l2norm",
                                           "Bench max",
                                           "Bench min",
                                           "Bench mean",
                                           "Bench l2norm",
                                           "Requires_grad Consistent",
                                           "Accuracy Reached or Not",
                                           "Err_message",
                                           "NPU_Stack_Info",
                                           "Data_name"};
  EXPECT_EQ(t.t.header, header);
  // NPU-only API: bench cells N/A, requires_grad False vs N/A is inconsistent and overwrites the message.
  const std::string m = "Torch.matmul.0.forward.output.0";
  EXPECT_EQ(t.cell(m, "Bench Name"), "N/A");
  EXPECT_EQ(t.cell(m, "Bench max"), "N/A");
  EXPECT_EQ(t.cell(m, "Cosine"), "unsupported");
  EXPECT_EQ(t.cell(m, "Accuracy Reached or Not"), "None");
  EXPECT_EQ(t.cell(m, "Err_message"), "Requires_grad inconsistent. Bench api/module unmatched.");
  EXPECT_EQ(t.cell(m, "Data_name"), "['Torch.matmul.0.forward.output.0.pt', 'N/A']");
  // Empty tensors have no file; int leaves neither.
  EXPECT_EQ(t.cell("Torch.cat.0.forward.output.0", "Err_message"), "NPU does not have data file.");
  EXPECT_EQ(t.cell("Torch.cat.0.forward.output.0", "NPU max"), "None");
  EXPECT_EQ(t.cell("Tensor.__add__.0.forward.input.1", "NPU Dtype"), "<class 'int'>");
  EXPECT_EQ(t.cell("Tensor.__add__.0.forward.input.1", "NPU max"), "1");
  EXPECT_EQ(t.cell("Tensor.__add__.0.forward.input.1", "Data_name"), "['-1', '-1']");
  // Stack on the first row of the entry only, as a Python list repr.
  EXPECT_EQ(t.cell("Functional.linear.0.forward.input.0", "NPU_Stack_Info"),
            "['File /work/model.py, line 12, in forward, \\n y = F.linear(x, w)', "
            "'File /work/train.py, line 3, in <module>, \\n main()']");
  EXPECT_EQ(t.cell("Functional.linear.0.forward.input.1", "NPU_Stack_Info"), "N/A");
  EXPECT_EQ(t.cell("Torch.exp.0.forward.input.0", "Requires_grad Consistent"), "False");
  EXPECT_EQ(t.cell("Torch.exp.0.forward.input.0", "NPU Requires_grad"), "True");
  EXPECT_EQ(t.cell("Torch.mul.0.forward.output.0", "NPU max"), "inf");
  EXPECT_EQ(t.cell("Functional.relu.0.forward.output.0", "NPU max"), "Nan");
  EXPECT_EQ(t.t.first_suspect, 11u);  // Torch.mul output: inf positions differ -> "No"
}

TEST(DumpCompareRealData, ProfilesDifferOnlyInTheZeroDimMessage) {
  DumpCompareOptions o;
  o.profile = Profile::MsProbe;
  const CompareTable ms = compare("real", o);
  const CompareTable pr = compare("real");
  const std::string one =
      "This is type of 0-d tensor, can not calculate 'Cosine', 'EucDist', 'One Thousandth Err Ratio' and "
      "'Five "
      "Thousandths Err Ratio'. ";
  std::string sixteen;
  for (int i = 0; i < 16; ++i) sixteen += one;
  // DECISIONS (compare, 0-d message): probe writes it once, msprobe HEAD 16 times.
  EXPECT_EQ(pr.cell("Torch.sum.0.forward.output.0", "Err_message"), one);
  EXPECT_EQ(ms.cell("Torch.sum.0.forward.output.0", "Err_message"), sixteen);
  ASSERT_EQ(ms.t.rows.size(), pr.t.rows.size());
  for (std::size_t i = 0; i < ms.t.rows.size(); ++i) {
    if (ms.t.rows[i][0] != "Torch.sum.0.forward.output.0") {
      EXPECT_EQ(ms.t.rows[i], pr.t.rows[i]);
    }
  }
}

TEST(DumpCompareRealData, HighlightRules) {
  DumpCompareOptions o;
  o.highlight = true;
  const CompareTable t = compare("real", o);
  auto colour = [&](const std::string& name) {
    for (std::size_t i = 0; i < t.t.rows.size(); ++i)
      if (t.t.rows[i][0] == name) return t.t.colours[i];
    return RowColour::None;
  };
  // inf in NPU max -> red.
  EXPECT_EQ(colour("Torch.mul.0.forward.output.0"), RowColour::Red);
  EXPECT_EQ(t.cell("Torch.mul.0.forward.output.0", "Err_message"),
            "The position of inf or nan in NPU and bench Tensor do not match.\nmaximum or minimum is nan, "
            "-inf, or inf");
  // Inputs identical (ratio 1.0), output ratio 0 -> red one-thousandth rule.
  EXPECT_EQ(colour("Torch.tanh.0.forward.output.0"), RowColour::Red);
  EXPECT_EQ(t.cell("Torch.tanh.0.forward.output.0", "Err_message"),
            "The input/parameter's one thousandth err ratio exceeds 0.9, while the output's is below 0.6");
  // linear output 0.6875 vs inputs 1.0: yellow, once per input (msprobe repeats per pair).
  EXPECT_EQ(colour("Functional.linear.0.forward.output.0"), RowColour::Yellow);
  const std::string y =
      "The output's one thousandth err ratio decreases by more than 0.1 compared to the input/parameter's";
  EXPECT_EQ(t.cell("Functional.linear.0.forward.output.0", "Err_message"), y + "\n" + y);
  // requires_grad inconsistent -> yellow on every such row.
  EXPECT_EQ(colour("Torch.exp.0.forward.input.0"), RowColour::Yellow);
  EXPECT_EQ(t.cell("Torch.exp.0.forward.input.0", "Err_message"),
            "Requires_grad inconsistent. \nrequires_grad is inconsistent");
  EXPECT_EQ(colour("Torch.argsort.0.forward.output.0"), RowColour::None);
  EXPECT_EQ(colour("Functional.linear.0.forward.input.0"), RowColour::None);
}

TEST(DumpCompareStatistics, DiffsRelativeTextAndWarnings) {
  const CompareTable t = compare("stats");
  ASSERT_EQ(t.t.mode, DumpCompareMode::Statistics);
  EXPECT_EQ(t.t.header.size(), 27u);
  EXPECT_EQ(t.t.header[8], "Max diff");
  EXPECT_EQ(t.t.header[26], "Err_message");
  const auto expected = load_json(kData + "stats/expected.json");
  const char* diff_cols[] = {"Max diff", "Min diff", "Mean diff", "L2norm diff"};
  const char* rel_cols[] = {"MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr"};
  int checked = 0;
  for (auto& m : expected.GetObject()) {
    const std::string name = m.name.GetString();
    if (!m.value.HasMember("stats")) continue;
    for (int k = 0; k < 4; ++k) {
      const auto& s = m.value["stats"][k];
      if (s.IsNull()) {
        EXPECT_EQ(t.cell(name, diff_cols[k]), "N/A") << name;
        continue;
      }
      std::string diff = t.cell(name, diff_cols[k]);
      if (!diff.empty() && diff.back() == '\t') diff.pop_back();  // inf/nan text + TAB (§3.6)
      if (s[0].IsString())
        EXPECT_EQ(diff, s[0].GetString()) << name;
      else if (std::isinf(s[0].GetDouble()))
        EXPECT_EQ(diff, s[0].GetDouble() > 0 ? "inf" : "-inf") << name;
      else
        EXPECT_EQ(std::strtod(diff.c_str(), nullptr), s[0].GetDouble()) << name << " " << diff_cols[k];
      EXPECT_EQ(t.cell(name, rel_cols[k]), s[1].GetString()) << name << " " << rel_cols[k];
    }
    EXPECT_EQ(t.cell(name, "Result"), m.value["result"].GetString()) << name;
    EXPECT_EQ(t.cell(name, "Err_message"), std::string(m.value["result"].GetString()) == "Warning"
                                               ? "Need double check api accuracy. "
                                               : "")
        << name;
    ++checked;
  }
  EXPECT_GE(checked, 8);
  EXPECT_EQ(t.cell("Torch.add.0.forward.output.0", "Result"), "Warning");
  EXPECT_EQ(t.cell("Torch.log.0.forward.output.0", "NPU max"), "inf\t");
  EXPECT_EQ(t.cell("Torch.matmul.0.forward.input.0", "Result"), "N/A");
  EXPECT_EQ(t.cell("Torch.matmul.0.forward.input.0", "Max diff"), "N/A");
  EXPECT_EQ(t.cell("Torch.matmul.0.forward.input.0", "Err_message"),
            "No bench data matched.Requires_grad inconsistent. ");
  EXPECT_EQ(t.cell("Functional.linear.0.forward.input.1", "Max diff"), "0");  // int leaf 3 - 3
  EXPECT_EQ(t.cell("Functional.linear.0.forward.input.1", "MaxRelativeErr"), "0.0%");
  EXPECT_EQ(t.t.first_suspect, 4u);
}

TEST(DumpCompareMd5, CrcPassDifferentAndUnmatched) {
  const CompareTable t = compare("md5");
  ASSERT_EQ(t.t.mode, DumpCompareMode::Md5);
  const std::vector<std::string> tail(t.t.header.begin() + 8, t.t.header.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"NPU MD5", "BENCH MD5", "Requires_grad Consistent", "Result"}));
  const auto expected = load_json(kData + "md5/expected.json");
  for (auto& m : expected.GetObject()) {
    const std::string name = m.name.GetString();
    if (m.value.HasMember("bench_missing")) {
      EXPECT_EQ(t.cell(name, "Result"), "N/A");
      continue;
    }
    if (m.value.HasMember("leaf")) {
      EXPECT_EQ(t.cell(name, "NPU MD5"), m.value["md5"].GetString()) << name;
      continue;
    }
    const std::string n = m.value["md5"][0].GetString(), b = m.value["md5"][1].GetString();
    EXPECT_EQ(t.cell(name, "NPU MD5"), n);
    EXPECT_EQ(t.cell(name, "BENCH MD5"), b);
    EXPECT_EQ(t.cell(name, "Result"), n == b ? "pass" : "Different") << name;
  }
  EXPECT_EQ(t.cell("Torch.add.0.forward.output.0", "Result"), "Different");
  EXPECT_EQ(t.cell("Tensor.mul.0.forward.output.0", "Result"), "pass");
}

TEST(DumpCompareMatching, FuzzyMatchIgnoresCallCounters) {
  const CompareTable exact = compare("fuzzy");
  EXPECT_EQ(exact.cell("Functional.conv2d.1.forward.input.0", "Bench Name"), "N/A");
  EXPECT_EQ(exact.cell("Torch.relu.0.forward.output.0", "Bench Name"), "Torch.relu.0.forward.output.0");
  DumpCompareOptions o;
  o.fuzzy_match = true;
  const CompareTable fuzzy = compare("fuzzy", o);
  EXPECT_EQ(fuzzy.cell("Functional.conv2d.1.forward.input.0", "Bench Name"),
            "Functional.conv2d.0.forward.input.0");
  EXPECT_EQ(fuzzy.cell("Functional.conv2d.1.forward.output.0", "Bench Name"),
            "Functional.conv2d.0.forward.output.0");
  EXPECT_EQ(fuzzy.cell("Functional.conv2d.1.forward.output.0", "Result"), "");
  EXPECT_EQ(fuzzy.cell("Torch.relu.0.forward.output.0", "Bench Name"), "Torch.relu.0.forward.output.0");
}

TEST(DumpCompareMatching, DataMappingYaml) {
  DumpCompareOptions o;
  o.data_mapping = kData + "fuzzy/map.yaml";
  const CompareTable t = compare("fuzzy", o);
  EXPECT_EQ(t.cell("Functional.conv2d.1.forward.input.0", "Bench Name"),
            "Functional.conv2d.0.forward.input.0");
  EXPECT_EQ(t.cell("Functional.conv2d.1.forward.output.0", "Bench Name"),
            "Functional.conv2d.0.forward.output.0");
  EXPECT_EQ(t.cell("Torch.relu.0.forward.input.0", "Bench Name"), "Torch.relu.0.forward.input.0");
  o.data_mapping = kData + "fuzzy/bad_map.yaml";
  try {
    compare("fuzzy", o);
    FAIL() << "nested YAML accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format);
    EXPECT_NE(std::string(e.what()).find("line 1"), std::string::npos) << e.what();
  }
  o.data_mapping = kData + "fuzzy/no_such_map.yaml";
  EXPECT_THROW(
      try { compare("fuzzy", o); } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Io);
        throw;
      },
      Error);
}

TEST(DumpCompareMatching, MindSporeAgainstPyTorchWithApiMapping) {
  DumpCompareOptions o;
  o.framework = Framework::MindSpore;
  const CompareTable plain = compare("cross", o);
  EXPECT_EQ(plain.cell("Mint.add.0.forward.output.0", "Bench Name"), "N/A");
  o.api_mapping = true;
  const CompareTable t = compare("cross", o);
  const std::string r = "Mint.add.0.forward.output.0";
  EXPECT_EQ(t.cell(r, "Bench Name"), "Torch.add.0.forward.output.0");
  EXPECT_EQ(t.cell(r, "NPU Dtype"), "Float32");
  EXPECT_EQ(t.cell(r, "Bench Dtype"), "torch.float32");
  // MindSpore has no requires_grad: N/A vs False is inconsistent (msprobe quirk §3.13).
  EXPECT_EQ(t.cell(r, "NPU Requires_grad"), "N/A");
  EXPECT_EQ(t.cell(r, "Requires_grad Consistent"), "False");
  const auto expected = load_json(kData + "cross/expected.json");
  const auto& m = expected[r.c_str()];
  const char* cols[] = {"Cosine",
                        "EucDist",
                        "MaxAbsErr",
                        "MaxRelativeErr",
                        "One Thousandth Err Ratio",
                        "Five Thousandths Err Ratio"};
  for (int k = 0; k < 6; ++k) expect_metric(m["metrics"][k], t.cell(r, cols[k]), cols[k]);
  EXPECT_EQ(t.cell(r, "Accuracy Reached or Not"), m["accuracy"].GetString());
  // A PyTorch NPU dump cannot be compared with a MindSpore bench, and -f must agree with the dump.
  o.framework = Framework::PyTorch;
  EXPECT_THROW(compare("cross", o), Error);
}

TEST(DumpCompareRun, MultiRankDirectoriesWriteOneResultPerRank) {
  const ScratchDir scratch("dump_compare_multi");
  const std::string out = scratch.path().string();
  CompareInput in;
  in.npu_path = kData + "multi/npu/step0";
  in.bench_path = kData + "multi/bench/step0";
  DumpCompareOptions o;
  o.out_dir = out;
  o.timestamp = "20250101120000";
  const DumpCompareSummary s = run_dump_compare(in, o);
  ASSERT_EQ(s.outputs.size(), 2u);
  EXPECT_EQ(s.outputs[0].rank_suffix, "_rank0");
  EXPECT_EQ(s.outputs[1].rank_suffix, "_rank1");
  EXPECT_EQ(fs::path(s.outputs[1].csv).filename(), "compare_result_rank1_20250101120000.csv");
  EXPECT_EQ(s.outputs[0].suspects, 0u);
  EXPECT_EQ(s.outputs[1].suspects, 1u);  // rank1's NPU output is twice the bench's
  const auto rows = csv_read_file(s.outputs[1].csv);
  ASSERT_EQ(rows.size(), 5u);  // header, input.0, input.group (None), output.0, output.1 (None)
  EXPECT_EQ(rows[1][0], "Distributed.all_reduce.0.forward.input.0");
  EXPECT_EQ(rows[2][0], "Distributed.all_reduce.0.forward.input.group");
  EXPECT_EQ(rows[2][2], "None");
  std::ifstream x(s.outputs[0].xlsx, std::ios::binary);
  char pk[2] = {};
  x.read(pk, 2);
  EXPECT_EQ(std::string(pk, 2), "PK");
  std::ifstream adv(s.outputs[1].advisor);
  std::string line;
  std::getline(adv, line);
  EXPECT_EQ(line, "Line: 2");
}

TEST(DumpCompareRun, BadInputsGiveClearErrors) {
  auto kind_of = [](const std::string& compare_json) {
    try {
      const fs::path cwd = fs::current_path();
      fs::current_path(kData + "bad");
      CompareInput in;
      try {
        in = read_compare_json(compare_json);
        DumpCompareOptions o;
        const ScratchDir scratch("dump_compare_bad");
        o.out_dir = scratch.path().string();
        run_dump_compare(in, o);
      } catch (...) {
        fs::current_path(cwd);
        throw;
      }
      fs::current_path(cwd);
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of("missing_bench.json"), ErrorKind::Format);
  EXPECT_EQ(kind_of("not_json.json"), ErrorKind::Format);
  EXPECT_EQ(kind_of("missing_file.json"), ErrorKind::Io);
  EXPECT_EQ(kind_of("task_mismatch.json"), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of("md5_one_side.json"), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of("file_and_dir.json"), ErrorKind::InvalidArgument);
  EXPECT_EQ(kind_of("no_such_compare.json"), ErrorKind::Io);
}

TEST(DumpCompareRows, FuzzyKeyAndReprs) {
  using namespace probe::dump_compare_detail;
  EXPECT_EQ(fuzzy_key("Functional.conv2d.3.forward.input.0"),
            fuzzy_key("Functional.conv2d.0.forward.input.0"));
  EXPECT_NE(fuzzy_key("Functional.conv2d.3.forward.input.0"),
            fuzzy_key("Functional.conv2d.3.backward.input.0"));
  EXPECT_NE(fuzzy_key("Functional.conv2d.3.forward.input.0"),
            fuzzy_key("Functional.conv2d.3.forward.input.1"));
  EXPECT_EQ(python_str_repr("it's"), "\"it's\"");
  EXPECT_EQ(python_str_repr("a\nb"), "'a\\nb'");
  EXPECT_EQ(python_list_repr({"x.pt", "N/A"}), "['x.pt', 'N/A']");
  EXPECT_EQ(crc32_hex(""), "00000000");
  EXPECT_EQ(crc32_hex("3"), "6dd28e9b");  // zlib.crc32(b"3")
}

TEST(DumpCompareRows, FlatMappingParser) {
  using namespace probe::dump_compare_detail;
  const ScratchDir scratch("dump_compare_map");
  const std::string dir = scratch.path().string();
  const std::string json = dir + "/m.json";
  std::ofstream(json) << R"({"A.0.forward.input.0": "B.0.forward.input.0"})";
  auto m = read_flat_mapping(json);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].second, "B.0.forward.input.0");
  const std::string bad = dir + "/bad.json";
  std::ofstream(bad) << R"({"a": 1})";
  EXPECT_THROW(read_flat_mapping(bad), Error);
  const std::string yaml = dir + "/m.yaml";
  std::ofstream(yaml) << "a.input.0: b.input.0  # comment\n\n'c: d': \"e\"\n";
  m = read_flat_mapping(yaml);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].second, "b.input.0");
  EXPECT_EQ(m[1].first, "c: d");
  EXPECT_EQ(m[1].second, "e");
}

namespace {

std::vector<probe::dump_compare_detail::OpItem> flatten_text(const std::string& json) {
  static std::vector<Dump> keep;  // rows point into their dump
  keep.push_back(Dump::parse(json, "/nonexistent/dump.json"));
  return probe::dump_compare_detail::flatten_dump(keep.back(), nullptr);
}

}  // namespace

TEST(DumpCompareRows, FlatteningFollowsSection3_3) {
  using probe::dump_compare_detail::RowState;
  const auto rows = flatten_text(R"({"task": "statistics", "level": "mix", "framework": "pytorch", "data": {
 "Module.fc.Linear.forward.0": {
  "input_args": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3], "Max": 1.5, "Min": -1, "Mean": 0.25,
                  "Norm": 2.0, "requires_grad": true}],
  "input_kwargs": {"scale": {"type": "float", "value": 0.5}, "shape": {"type": "torch.Size", "value": [2, 3]},
                   "idx": {"type": "slice", "value": [1, null, 2]}, "flag": {"type": "bool", "value": true},
                   "none": null, "nested": [[{"type": "int", "value": 7}], {"k": {"type": "str", "value": "sum"}}],
                   "dst": {"type": "int", "value": 3}, "group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1],
                   "group_id": "abc"}, "dtype": {"type": "torch.dtype", "value": "torch.bfloat16"}},
  "output": [{"type": "torch.Tensor", "dtype": "torch.bool", "shape": [], "Max": true, "Min": false, "Mean": null,
              "Norm": null, "requires_grad": false}],
  "parameters": {"weight": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "Max": 1.0, "Min": 0.0,
                 "Mean": 0.5, "Norm": 1.0, "requires_grad": true}}
 },
 "Module.fc.Linear.parameters_grad.0": {"weight": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3],
   "Max": NaN, "Min": -Infinity, "Mean": 0.5, "Norm": 1.0, "requires_grad": false}]}
}})");
  std::vector<std::string> names;
  for (const auto& r : rows) names.push_back(r.name);
  const std::string m = "Module.fc.Linear.forward.0";
  EXPECT_EQ(names, (std::vector<std::string>{
                       m + ".input.0", m + ".input.scale", m + ".input.shape", m + ".input.idx",
                       m + ".input.flag", m + ".input.none", m + ".input.nested.0.0", m + ".input.nested.1.k",
                       m + ".input.dst", m + ".input.group", m + ".input.dtype", m + ".parameters.weight",
                       m + ".output.0", "Module.fc.Linear.parameters_grad.0.weight"}));
  EXPECT_EQ(rows[0].shape, "[2, 3]");
  EXPECT_EQ(rows[0].stats[1].text, "-1");  // JSON int stays an int
  EXPECT_EQ(rows[0].requires_grad, "True");
  EXPECT_EQ(rows[0].md5, "00000000");  // tensors without md5: CRC of ""
  EXPECT_TRUE(rows[0].first_of_entry);
  EXPECT_FALSE(rows[1].first_of_entry);
  EXPECT_EQ(rows[1].dtype, "<class 'float'>");
  EXPECT_EQ(rows[1].stats[0].text, "0.5");
  EXPECT_TRUE(rows[1].stats[0].numeric);
  EXPECT_EQ(rows[1].requires_grad, "N/A");
  EXPECT_EQ(rows[2].dtype, "torch.Size");
  EXPECT_EQ(rows[2].shape, "[2, 3]");
  EXPECT_EQ(rows[2].stats[0].text, "None");
  EXPECT_EQ(rows[3].dtype, "slice");
  EXPECT_EQ(rows[3].shape, "(3,)");
  EXPECT_EQ(rows[3].md5, probe::dump_compare_detail::crc32_hex("[1, None, 2]"));
  EXPECT_EQ(rows[4].dtype, "<class 'bool'>");
  EXPECT_EQ(rows[4].stats[0].text, "True");
  EXPECT_FALSE(rows[4].stats[0].numeric);
  EXPECT_EQ(rows[5].dtype, "None");
  EXPECT_EQ(rows[5].shape, "None");
  EXPECT_EQ(rows[5].md5, "N/A");
  EXPECT_EQ(rows[7].dtype, "<class 'str'>");
  EXPECT_EQ(rows[7].stats[0].text, "sum");
  EXPECT_EQ(rows[8].dtype, "int");  // src/dst keep their type string and use the value text as md5
  EXPECT_EQ(rows[8].md5, "3");
  EXPECT_EQ(rows[9].dtype, "torch.ProcessGroup");
  EXPECT_EQ(rows[9].stats[0].text, "[0, 1]");
  EXPECT_EQ(rows[10].stats[0].text, "torch.bfloat16");
  EXPECT_EQ(rows[11].state, RowState::Parameters);
  EXPECT_EQ(rows[12].state, RowState::Output);
  EXPECT_EQ(rows[12].stats[0].text, "True");
  EXPECT_EQ(rows[12].stats[2].text, "None");
  EXPECT_EQ(rows[13].state, RowState::ParametersGrad);
  EXPECT_EQ(rows[13].stats[0].text, "Nan");
  EXPECT_TRUE(rows[13].stats[0].numeric);
  EXPECT_EQ(rows[13].stats[1].text, "-inf");
  EXPECT_TRUE(rows[13].first_of_entry);
}

TEST(DumpCompareRows, TensorFileNamesOverrideRowNames) {
  // In tensor mode kwargs rows are named after their files (".kwargs."), not ".input.".
  const auto rows = flatten_text(R"({"task": "tensor", "level": "L1", "framework": "pytorch", "data": {
 "Functional.cross_entropy.0.forward": {"input_args": [], "input_kwargs": {"target": {"type": "torch.Tensor",
   "dtype": "torch.int64", "shape": [4], "Max": 3, "Min": 0, "Mean": 1.5, "Norm": 3.7, "requires_grad": false,
   "data_name": "Functional.cross_entropy.0.forward.kwargs.target.pt"}}, "output": []}}})");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "Functional.cross_entropy.0.forward.kwargs.target");
  EXPECT_EQ(rows[0].data_name, "Functional.cross_entropy.0.forward.kwargs.target.pt");
}

TEST(DumpCompareRun, StackPathNeedsStackModeAndDebugJsonPairs) {
  const ScratchDir out_scratch("dump_compare_stack");
  const std::string out = out_scratch.path().string();
  CompareInput in;
  in.npu_path = rank0("real", "npu");
  in.bench_path = rank0("real", "bench");
  in.stack_path = kData + "real/npu/step0/rank0/stack.json";
  DumpCompareOptions o;
  o.out_dir = out;
  o.timestamp = "20250101000001";
  o.write_xlsx = false;
  auto header = [&] { return csv_read_file(run_dump_compare(in, o).outputs.at(0).csv).at(0); };
  auto has = [](const std::vector<std::string>& h, const char* c) {
    return std::find(h.begin(), h.end(), c) != h.end();
  };
  EXPECT_FALSE(has(header(), "NPU_Stack_Info"));  // stack_path given: only with -s
  o.stack_mode = true;
  o.timestamp = "20250101000002";  // outputs are never overwritten: each run names its own files
  EXPECT_TRUE(has(header(), "NPU_Stack_Info"));

  // debug.json pairs: debug_compare_result_*, rows named after the saved variables.
  const ScratchDir scratch("dump_compare_debug");
  const std::string dir = scratch.path().string();
  for (const char* side : {"npu", "bench"}) {
    fs::create_directories(dir + "/" + side);
    std::ofstream(dir + "/" + side + "/debug.json")
        << R"({"task": "statistics", "level": "debug", "framework": "pytorch", "dump_data_dir": null, "data": {
 "x.0.debug": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": )"
        << (std::string(side) == "npu" ? "4.0" : "1.0")
        << R"(, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false}}})";
  }
  in = CompareInput{dir + "/npu/debug.json", dir + "/bench/debug.json", "", true};
  o.stack_mode = false;
  o.timestamp = "20250101000003";
  const auto s = run_dump_compare(in, o);
  EXPECT_EQ(fs::path(s.outputs.at(0).csv).filename(), "debug_compare_result_20250101000003.csv");
  const auto rows = csv_read_file(s.outputs[0].csv);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], "x.0.debug");
  EXPECT_EQ(rows[1][8], "3.0");  // Max diff
  EXPECT_EQ(rows[1][12], "300.0%");
  // dump.json against debug.json is refused.
  in.bench_path = rank0("stats", "bench");
  EXPECT_THROW(run_dump_compare(in, o), Error);
}

namespace {

std::string zip_member(const std::string& zip_path, const char* member) {
  int err = 0;
  zip_t* z = zip_open(zip_path.c_str(), ZIP_RDONLY, &err);
  if (!z) return {};
  std::string text;
  zip_stat_t st;
  if (zip_stat(z, member, 0, &st) == 0) {
    zip_file_t* f = zip_fopen(z, member, 0);
    text.resize(st.size);
    if (f) {
      zip_fread(f, text.data(), st.size);
      zip_fclose(f);
    }
  }
  zip_close(z);
  return text;
}

}  // namespace

TEST(DumpCompareRun, HighlightedXlsxHasRedAndYellowRowsOnSheet) {
  const ScratchDir scratch("dump_compare_xlsx");
  const std::string out = scratch.path().string();
  CompareInput in{rank0("real", "npu"), rank0("real", "bench"), "", true};
  DumpCompareOptions o;
  o.out_dir = out;
  o.timestamp = "20250101000002";
  o.highlight = true;
  const auto s = run_dump_compare(in, o);
  const std::string x = s.outputs.at(0).xlsx;
  EXPECT_NE(zip_member(x, "xl/workbook.xml").find("name=\"Sheet\""), std::string::npos);
  const std::string styles = zip_member(x, "xl/styles.xml");
  EXPECT_NE(styles.find("FFFF0000"), std::string::npos) << styles;
  EXPECT_NE(styles.find("FFFFFF00"), std::string::npos);
  const std::string sheet = zip_member(x, "xl/worksheets/sheet1.xml");
  // 28 data rows + header; filled rows carry a row style (customFormat).
  EXPECT_NE(sheet.find("<row r=\"29\""), std::string::npos);
  EXPECT_NE(sheet.find("customFormat=\"1\""), std::string::npos);
  o.highlight = false;
  o.timestamp = "20250101000003";
  const std::string plain = run_dump_compare(in, o).outputs.at(0).xlsx;
  EXPECT_NE(zip_member(plain, "xl/workbook.xml").find("name=\"Sheet1\""), std::string::npos);
  EXPECT_EQ(zip_member(plain, "xl/worksheets/sheet1.xml").find("customFormat=\"1\""), std::string::npos);
}

TEST(DumpCompareRows, FormulaTextIsWrittenAsLiteralText) {
  // DECISIONS (compare, CSV injection): msprobe aborts on such strings; probe prefixes an apostrophe.
  const ScratchDir scratch("dump_compare_inject");
  const std::string dir = scratch.path().string();
  for (const char* side : {"npu", "bench"}) {
    fs::create_directories(dir + "/" + side);
    std::ofstream(dir + "/" + side + "/dump.json")
        << R"J({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {
 "Torch.einsum.0.forward": {"input_args": [{"type": "str", "value": "=HYPERLINK(\"x\")"},
   {"type": "str", "value": "-1"}, {"type": "str", "value": "a;@b"}], "input_kwargs": {}, "output": []}}})J";
  }
  const auto t = compare_dump_files(dir + "/npu/dump.json", dir + "/bench/dump.json", "", {});
  ASSERT_EQ(t.rows.size(), 3u);
  const std::size_t npu_max = 16;
  ASSERT_EQ(t.header[npu_max], "NPU max");
  EXPECT_EQ(t.rows[0][npu_max], "'=HYPERLINK(\"x\")");
  EXPECT_EQ(t.rows[1][npu_max], "-1");  // Python's float() accepts it: not a formula for msprobe either
  EXPECT_EQ(t.rows[2][npu_max], "'a;@b");
  EXPECT_EQ(t.rows[0][8], "N/A");  // str statistics are not numbers
}

TEST(DumpCompareMatching, CellMappingAndDtypeClasses) {
  using namespace probe::dump_compare_detail;
  auto item = [](std::string name, std::string entry, std::string dtype, std::string shape = "[2]") {
    OpItem o;
    o.name = std::move(name);
    o.entry_key = std::move(entry);
    o.dtype = std::move(dtype);
    o.shape = std::move(shape);
    return o;
  };
  const std::vector<OpItem> npu = {
      item("Cell.net.fc1.Dense.forward.0.input.0", "Cell.net.fc1.Dense.forward.0", "Float32"),
      item("Cell.net.fc1.Dense.forward.0.output.0", "Cell.net.fc1.Dense.forward.0", "BFloat16"),
      item("Cell.net.fc2.Dense.forward.0.output.0", "Cell.net.fc2.Dense.forward.0", "Int32"),
      item("Mint.add.0.forward.output.0", "Mint.add.0.forward", "Int64")};
  const std::vector<OpItem> bench = {
      item("Module.model.fc1.Linear.forward.0.input.0", "Module.model.fc1.Linear.forward.0", "torch.float32"),
      item("Module.model.fc1.Linear.forward.0.output.0", "Module.model.fc1.Linear.forward.0",
           "torch.float16"),
      item("Module.net.fc2.Dense.forward.0.output.0", "Module.net.fc2.Dense.forward.0", "torch.int64"),
      item("Torch.add.0.forward.output.0", "Torch.add.0.forward", "torch.float32")};
  MatchConfig cfg;
  cfg.cross_framework = true;
  cfg.cell_mapping = true;
  cfg.api_mapping = true;
  auto r = match_rows(npu, bench, cfg);
  EXPECT_FALSE(r.bench[0]);   // path differs without a mapping file
  EXPECT_EQ(r.bench[2], 2u);  // Cell -> Module; Int32 vs torch.int64 are both "int" across frameworks
  EXPECT_FALSE(r.bench[3]);   // Int64 vs torch.float32: different classes -> unmatched
  cfg.cell_map["net.fc1.Dense"] = "model.fc1.Linear";
  r = match_rows(npu, bench, cfg);
  EXPECT_EQ(r.bench[0], 0u);
  EXPECT_EQ(r.bench[1], 1u);  // BFloat16 vs torch.float16: both floats
  // Same framework: int32 vs int64 is a mismatch, fp16/fp32/bf16 are compatible.
  const std::vector<OpItem> a = {item("T.x.0.forward.output.0", "T.x.0.forward", "torch.int32"),
                                 item("T.y.0.forward.output.0", "T.y.0.forward", "torch.bfloat16")};
  const std::vector<OpItem> b = {item("T.x.0.forward.output.0", "T.x.0.forward", "torch.int64"),
                                 item("T.y.0.forward.output.0", "T.y.0.forward", "torch.float32")};
  r = match_rows(a, b, MatchConfig{});
  EXPECT_FALSE(r.bench[0]);
  EXPECT_EQ(r.bench[1], 1u);
  // Shapes must agree for an exact match, not for a data-mapped one.
  const std::vector<OpItem> c = {item("T.y.0.forward.output.0", "T.y.0.forward", "torch.float32", "[3]")};
  EXPECT_FALSE(match_rows(c, b, MatchConfig{}).bench[0]);
  MatchConfig dm;
  dm.data_mapping = true;
  EXPECT_EQ(match_rows(c, b, dm).bench[0], 1u);
}

TEST(DumpCompareRun, MindSporeGraphAndPynativeLayout) {
  const ScratchDir scratch("dump_compare_mix");
  const std::string root = scratch.path().string(), out = root + "/out";
  for (const char* side : {"npu", "bench"})
    for (const char* mode : {"graph", "pynative"})
      for (const char* rank : {"rank0", "rank1"}) {
        const fs::path dst = fs::path(root) / side / mode / "step0" / rank;
        fs::create_directories(dst);
        fs::copy_file(kData + "multi/" + side + "/step0/" + rank + "/dump.json", dst / "dump.json");
      }
  CompareInput in{root + "/npu", root + "/bench", "", true};
  DumpCompareOptions o;
  o.out_dir = out;
  o.timestamp = "20250101000004";
  o.write_xlsx = false;
  const auto s = run_dump_compare(in, o);
  ASSERT_EQ(s.outputs.size(), 4u);
  EXPECT_EQ(fs::path(s.outputs[0].csv),
            fs::path(out) / "graph" / "step0" / "compare_result_rank0_20250101000004.csv");
  EXPECT_EQ(fs::path(s.outputs[3].csv),
            fs::path(out) / "pynative" / "step0" / "compare_result_rank1_20250101000004.csv");
  EXPECT_EQ(s.outputs[3].suspects, 1u);
}

TEST(DumpCompareMatching, FuzzyRealDataPairsCarryTheFuzzyMessage) {
  const ScratchDir scratch("dump_compare_fuzzyreal");
  const std::string root = scratch.path().string();
  const fs::path npu = fs::path(root) / "npu";
  fs::copy(kData + "real/npu/step0/rank0", npu, fs::copy_options::recursive);
  std::string text = probe::testing::slurp(npu / "dump.json");
  for (std::size_t p = text.find("Torch.tanh.0."); p != std::string::npos; p = text.find("Torch.tanh.0.", p))
    text.replace(p, 13, "Torch.tanh.1.");
  std::ofstream(npu / "dump.json", std::ios::trunc) << text;
  for (const char* f : {"input.0", "output.0"})
    fs::rename(npu / "dump_tensor_data" / (std::string("Torch.tanh.0.forward.") + f + ".pt"),
               npu / "dump_tensor_data" / (std::string("Torch.tanh.1.forward.") + f + ".pt"));
  DumpCompareOptions o;
  o.fuzzy_match = true;
  const CompareTable t{compare_dump_files((npu / "dump.json").string(), rank0("real", "bench"), "", o)};
  const std::string r = "Torch.tanh.1.forward.output.0";
  EXPECT_EQ(t.cell(r, "Bench Name"), "Torch.tanh.0.forward.output.0");
  EXPECT_EQ(t.cell(r, "Err_message"), " Fuzzy matching data, the comparison accuracy may be affected.");
  EXPECT_EQ(t.cell(r, "Accuracy Reached or Not"), "No");
  EXPECT_EQ(t.cell("Torch.exp.0.forward.output.0", "Err_message"), "Requires_grad inconsistent. ");
}
