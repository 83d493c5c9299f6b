// `compare -da` (find first diff, dump-and-compare §3.12) on the multi-rank cases of
// tests/data/make_diff_analyze_fixtures.py; each case's expected.json says which entry differs first (by
// construction) and the relative errors Python computed for the different rows.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/dump_compare.h"
#include "probe/error.h"

namespace fs = std::filesystem;
using namespace probe;

namespace {

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/diff_analyze/";

rapidjson::Document load_json(const std::string& path) {
  rapidjson::Document d;
  d.Parse(probe::testing::slurp(path).c_str());
  EXPECT_FALSE(d.HasParseError()) << path;
  return d;
}

CompareInput input_of(const std::string& c) {
  return {kData + c + "/npu/step0", kData + c + "/bench/step0", "", true};
}

// {"rank_N": entry key} of the result, to compare with expected.json's first_diff.
std::map<std::string, std::string> first_diffs(const DiffAnalyzeResult& r) {
  std::map<std::string, std::string> m;
  for (const auto& n : r.first_diff)
    m["rank_" + std::to_string(r.ranks[n.rank_index].rank)] =
        r.ranks[n.rank_index].entries[n.entry_index].key;
  return m;
}

void expect_case(const std::string& c) {
  const rapidjson::Document exp = load_json(kData + c + "/expected.json");
  const DiffAnalyzeResult r = analyze_first_diff(input_of(c), {});
  EXPECT_EQ(r.phase, exp["phase"].GetString()) << c;
  std::map<std::string, std::string> want;
  for (const auto& m : exp["first_diff"].GetObject()) want[m.name.GetString()] = m.value.GetString();
  EXPECT_EQ(first_diffs(r), want) << c;
}

const std::vector<std::string>& row_of(const DiffAnalyzeRank& r, const std::string& name) {
  for (const auto& row : r.table.rows)
    if (row[0] == name) return row;
  throw std::runtime_error("no row " + name);
}

std::string cell(const DiffAnalyzeRank& r, const std::string& name, const std::string& column) {
  const auto& h = r.table.header;
  const auto it = std::find(h.begin(), h.end(), column);
  if (it == h.end()) throw std::runtime_error("no column " + column);
  return row_of(r, name)[static_cast<std::size_t>(it - h.begin())];
}

const DiffAnalyzeRank::Entry& entry_of(const DiffAnalyzeRank& r, const std::string& key) {
  for (const auto& e : r.entries)
    if (e.key == key) return e;
  throw std::runtime_error("no entry " + key);
}

}  // namespace

TEST(DiffAnalyze, FirstDiffBeforeCommunication) {
  expect_case("before_comm");
  const DiffAnalyzeResult r = analyze_first_diff(input_of("before_comm"), {});
  ASSERT_EQ(r.ranks.size(), 2u);
  const DiffAnalyzeRank& r0 = r.ranks[0];
  EXPECT_EQ(r0.table.mode, DumpCompareMode::Statistics);
  // The relative errors Python computed for the different output.
  const rapidjson::Document exp = load_json(kData + "before_comm/expected.json");
  for (const auto& m : exp["relative_errors"]["rank0"]["Torch.matmul.0.forward.output.0"].GetObject())
    EXPECT_EQ(cell(r0, "Torch.matmul.0.forward.output.0", m.name.GetString()), m.value.GetString());
  // An input-only difference does not make an entry different; the ignored Torch.empty still is different
  // in the per-rank result but is skipped by the search.
  EXPECT_TRUE(entry_of(r0, "Torch.relu.0.forward").is_same);
  EXPECT_FALSE(entry_of(r0, "Torch.empty.0.forward").is_same);
  EXPECT_FALSE(entry_of(r0, "Torch.matmul.0.forward").is_same);
  // npu_fusion_attention outputs 4 and 5 differ 7x, and are ignored.
  EXPECT_TRUE(entry_of(r.ranks[1], "NPU.npu_fusion_attention.0.forward").is_same);
  EXPECT_NE(cell(r.ranks[1], "NPU.npu_fusion_attention.0.forward.output.4", "MaxRelativeErr"), "0.0%");
  // The extra columns.
  EXPECT_EQ(cell(r0, "Torch.matmul.0.forward.output.0", "state"), "output");
  EXPECT_EQ(cell(r0, "Torch.matmul.0.forward.input.1", "api_origin_name"), "Torch.matmul.0.forward");
  EXPECT_EQ(cell(r0, "Torch.matmul.0.forward.input.1", "NPU P2POp peer"), "None");
  ASSERT_EQ(r.first_diff.size(), 1u);
  EXPECT_EQ(r.first_diff[0].layer, -1);
  std::vector<std::string> frames;
  for (const auto& f : exp["stack"]["rank_0"].GetArray()) frames.push_back(f.GetString());
  EXPECT_EQ(r0.entries[r.first_diff[0].entry_index].stack, frames);
}

TEST(DiffAnalyze, CommunicationGraphDecidesBetweenRanks) {
  expect_case("graph");
  const DiffAnalyzeResult r = analyze_first_diff(input_of("graph"), {});
  EXPECT_EQ(r.ranks[0].table.mode, DumpCompareMode::Md5);
  ASSERT_EQ(r.first_diff.size(), 1u);
  const rapidjson::Document exp = load_json(kData + "graph/expected.json");
  EXPECT_EQ(r.first_diff[0].layer, exp["layer"].GetInt64());
  // rank0's Torch.sub differs too, but later in the graph (before the all_reduce, layer 3).
  EXPECT_FALSE(entry_of(r.ranks[0], "Torch.sub.0.forward").is_same);
}

TEST(DiffAnalyze, RealDataDumpsAreComparedByStatistics) {
  expect_case("real");
  const DiffAnalyzeResult r = analyze_first_diff(input_of("real"), {});
  const DiffAnalyzeRank& r1 = r.ranks[1];
  EXPECT_EQ(r1.table.mode, DumpCompareMode::Statistics);
  const rapidjson::Document exp = load_json(kData + "real/expected.json");
  for (const auto& m : exp["relative_errors"]["rank1"]["Functional.gelu.0.forward.output.0"].GetObject())
    EXPECT_EQ(cell(r1, "Functional.gelu.0.forward.output.0", m.name.GetString()), m.value.GetString());
}

TEST(DiffAnalyze, DifferenceAfterTheLastCommunicationOp) { expect_case("after_comm"); }

// DECISIONS (compare -da, ignore list): "Tensor.to." skips the differing cast but not Tensor.topk, which
// msprobe's bare "Tensor.to" would also hide (then nothing would differ at all).
TEST(DiffAnalyze, IgnoredCastDoesNotHideTopk) { expect_case("ignore_prefix"); }

TEST(DiffAnalyze, NothingDifferentWritesOnlyRankFiles) {
  const DiffAnalyzeResult r = analyze_first_diff(input_of("same"), {});
  EXPECT_EQ(r.phase, "");
  EXPECT_TRUE(r.first_diff.empty());
  const probe::testing::ScratchDir scratch("da_same");
  DumpCompareOptions o;
  o.out_dir = scratch.file("out");
  o.timestamp = "20250101000000";
  const auto files = write_diff_analyze(r, o);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(fs::path(files[1]).filename(), "compare_result_rank1_20250101000000.json");
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(o.out_dir)) {
    ++n;
    EXPECT_EQ(e.path().extension(), ".json");  // no temporary left behind
  }
  EXPECT_EQ(n, 2u);
}

TEST(DiffAnalyze, WrittenFilesHaveMsprobesShape) {
  const DiffAnalyzeResult r = analyze_first_diff(input_of("before_comm"), {});
  const probe::testing::ScratchDir scratch("da_shape");
  DumpCompareOptions o;
  o.out_dir = scratch.file("out");
  o.timestamp = "20250101000000";
  const auto files = write_diff_analyze(r, o);
  ASSERT_EQ(files.size(), 3u);
  const rapidjson::Document rank0 = load_json(files[0]);
  ASSERT_TRUE(rank0.IsObject());
  const auto& mm = rank0["Torch.matmul.0.forward"];
  EXPECT_FALSE(mm["is_same"].GetBool());
  const auto& items = mm["op_items"].GetArray();
  ASSERT_EQ(items.Size(), 3u);
  EXPECT_STREQ(items[2]["NPU Name"].GetString(), "Torch.matmul.0.forward.output.0");
  EXPECT_STREQ(items[2]["state"].GetString(), "output");
  EXPECT_TRUE(items[2]["NPU max"].IsNumber());
  EXPECT_TRUE(items[0]["NPU_Stack_Info"].IsArray());
  EXPECT_STREQ(items[1]["NPU_Stack_Info"].GetString(), "N/A");
  for (const char* col : {"Bench P2POp op", "NPU P2POp peer", "Bench P2POp peer", "api_origin_name"})
    EXPECT_TRUE(items[0].HasMember(col)) << col;
  EXPECT_TRUE(rank0["Functional.linear.0.forward"]["is_same"].GetBool());

  const std::string da = files[2];
  EXPECT_EQ(fs::path(da).filename().string().rfind("diff_analyze_", 0), 0u);
  const rapidjson::Document d = load_json(da);
  ASSERT_TRUE(d.HasMember("rank_0"));
  EXPECT_FALSE(d.HasMember("rank_1"));
  const auto& node = d["rank_0"][0];
  EXPECT_STREQ(node["op_name"].GetString(), "Torch.matmul.0.forward");
  EXPECT_TRUE(node["data_info"]["input"].HasMember("Torch.matmul.0.forward.input.1"));
  const auto& out = node["data_info"]["output"]["Torch.matmul.0.forward.output.0"];
  for (const char* k : {"NPU max", "NPU min", "NPU mean", "NPU l2norm", "NPU P2POp peer"})
    EXPECT_TRUE(out.HasMember(k)) << k;
  ASSERT_TRUE(node["stack_info"].IsArray());
  EXPECT_EQ(node["stack_info"].Size(), 2u);
}

TEST(DiffAnalyze, ThresholdsComeFromTheDataFile) {
  // With a 300% threshold the matmul (200%) is no longer different: the search moves on to rank1's
  // all_reduce, whose output is 3x (200% too) -> nothing differs at all.
  const probe::testing::ScratchDir scratch("da_thresholds");
  const fs::path& dir = scratch.path();
  {
    std::string text = probe::testing::slurp(std::string(PROBE_SOURCE_DIR) + "/data/diff_analyze.json");
    for (std::size_t p; (p = text.find("\": 0.5")) != std::string::npos;) text.replace(p, 6, "\": 3.0");
    std::ofstream(dir / "diff_analyze.json") << text;
  }
  ::setenv("PROBE_DATA_DIR", dir.c_str(), 1);
  DiffAnalyzeResult r;
  EXPECT_NO_THROW(r = analyze_first_diff(input_of("before_comm"), {}));
  ::unsetenv("PROBE_DATA_DIR");
  EXPECT_TRUE(r.first_diff.empty());
  EXPECT_TRUE(entry_of(r.ranks[0], "Torch.matmul.0.forward").is_same);
  // A malformed data file is a Format error naming it.
  std::ofstream(dir / "diff_analyze.json") << "{\"relative_error_thresholds\": [";
  ::setenv("PROBE_DATA_DIR", dir.c_str(), 1);
  try {
    analyze_first_diff(input_of("before_comm"), {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format);
    EXPECT_NE(e.file().find("diff_analyze.json"), std::string::npos);
  }
  ::unsetenv("PROBE_DATA_DIR");
}

TEST(DiffAnalyze, BadInputsAreClearErrors) {
  const std::string bad = kData + "bad/";
  auto kind_of = [&](const CompareInput& in) {
    try {
      analyze_first_diff(in, {});
    } catch (const Error& e) {
      return std::make_pair(e.kind(), std::string(e.what()));
    }
    return std::make_pair(ErrorKind::Internal, std::string("no error"));
  };
  auto [k1, m1] = kind_of(
      {bad + "rank_sets/npu/step0/rank0/dump.json", bad + "rank_sets/bench/step0/rank0/dump.json", "", true});
  EXPECT_EQ(k1, ErrorKind::InvalidArgument);
  EXPECT_NE(m1.find("step directories"), std::string::npos) << m1;
  auto [k2, m2] = kind_of({bad + "missing_rank/npu/step0", bad + "missing_rank/bench/step0", "", true});
  EXPECT_EQ(k2, ErrorKind::Io);
  EXPECT_NE(m2.find("rank1"), std::string::npos) << m2;
  auto [k3, m3] = kind_of({bad + "rank_sets/npu/step0", bad + "rank_sets/bench/step0", "", true});
  EXPECT_EQ(k3, ErrorKind::InvalidArgument);
  EXPECT_NE(m3.find("rank0, rank2"), std::string::npos) << m3;
  auto [k4, m4] = kind_of({bad + "rank_sets/npu/step0", bad + "one_rank/step0", "", true});
  EXPECT_EQ(k4, ErrorKind::InvalidArgument);
  auto [k5, m5] = kind_of({bad + "nowhere", bad + "one_rank/step0", "", true});
  EXPECT_EQ(k5, ErrorKind::Io);
}
