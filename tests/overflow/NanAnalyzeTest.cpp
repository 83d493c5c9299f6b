// nan_analyze on 2-rank steps written by torch (make_overflow_fixtures.py): rank 1's log makes NaN, which an
// all_reduce carries to rank 0. expected.json names the entry (derivation in each case's "why");
// expected_analyze.json is the whole file as Python's json.dump(indent=2) writes the reported entries.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/RunCli.h"
#include "common/ScratchDir.h"
#include "probe/error.h"
#include "probe/nan_analyze.h"

namespace fs = std::filesystem;

namespace {

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/nan_analyze/";

using probe::testing::run_cli;
using probe::testing::ScratchDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// {"rank_N": [op names]} of expected.json's "anomalies" (or its per-profile member).
std::vector<std::pair<long long, std::string>> expected_anomalies(const std::string& name,
                                                                  const char* profile) {
  rapidjson::Document d;
  d.Parse(slurp(kData + name + "/expected.json").c_str());
  EXPECT_FALSE(d.HasParseError());
  const rapidjson::Value* a = &d["anomalies"];
  if (a->HasMember(profile)) a = &(*a)[profile];
  std::vector<std::pair<long long, std::string>> out;
  for (const auto& m : a->GetObject())
    for (const auto& op : m.value.GetArray())
      out.emplace_back(std::stoll(std::string(m.name.GetString()).substr(5)), op.GetString());
  return out;
}

probe::NanAnalyzeResult analyze(const std::string& name, probe::Profile profile, const std::string& out) {
  probe::NanAnalyzeOptions o;
  o.input_path = kData + name + "/step0";
  o.output_path = out;
  o.profile = profile;
  return probe::nan_analyze(o);
}

void check_case(const std::string& name, const std::string& phase) {
  for (probe::Profile profile : {probe::Profile::MsProbe, probe::Profile::Probe}) {
    const char* pname = profile == probe::Profile::MsProbe ? "msprobe" : "probe";
    SCOPED_TRACE(name + " " + pname);
    const ScratchDir scratch("nan_analyze");
    const probe::NanAnalyzeResult r = analyze(name, profile, scratch.file("out"));
    EXPECT_EQ(r.phase, phase);
    std::vector<std::pair<long long, std::string>> got;
    for (const auto& a : r.anomalies) got.emplace_back(a.rank, a.op_name);
    EXPECT_EQ(got, expected_anomalies(name, pname));
    ASSERT_FALSE(r.file.empty());
    EXPECT_EQ(fs::path(r.file).parent_path(), fs::path(scratch.file("out")));
    EXPECT_TRUE(fs::path(r.file).filename().string().starts_with("anomaly_analyze_"));
    EXPECT_EQ(r.log.back(), "The analyze result is saved in: " + r.file);
    // expected_analyze.json holds msprobe's answer; the probe profile writes the same file where both agree.
    if (got == expected_anomalies(name, "msprobe")) {
      EXPECT_EQ(slurp(r.file), slurp(kData + name + "/expected_analyze.json"));
    }
  }
}

}  // namespace

TEST(NanAnalyze, FirstAnomalyBeforeCommunicationNamesRankOnesApi) {
  check_case("before_comm", "before_communication");
}

TEST(NanAnalyze, FollowsTheAllReduceBackToRankOne) { check_case("during_comm", "communication"); }

// Three ranks: rank 1's log is layer 1's earliest anomaly; ranks 0 and 2 receive its NaN through
// all_reduce.1.
TEST(NanAnalyze, ThreeRanksFollowTheAllReduceBackToRankOne) {
  check_case("during_comm_3ranks", "communication");
}

TEST(NanAnalyze, AfterTheLastCommunicationOp) { check_case("after_comm", "after_communication"); }

// DECISIONS D19: rank 0 runs no compute op between the all_reduces, so msprobe's (layer, sub_layer) order
// names rank 0's all_reduce.1, whose NaN arrived through rank 1's input; the probe profile names rank 1's
// log.
TEST(NanAnalyze, AsymmetricLayerNamesTheComputeOpInTheProbeProfile) {
  check_case("during_comm_asymmetric", "communication");
}

// Rank 0's linear outputs NaN, but its input (the batch) already held NaN: not where NaN appeared.
TEST(NanAnalyze, AnEntryWhoseInputHeldNanIsNotTheOrigin) { check_case("data_nan", "before_communication"); }

// DECISIONS D19 on a pipeline send/recv: rank 1 (src) sends a NaN its log made to rank 0 (dst), which ran no
// compute op since the all_reduce; msprobe names rank 0's recv, the probe profile rank 1's log.
TEST(NanAnalyze, SendRecvFollowsTheDirectedLinkToTheSender) { check_case("p2p", "communication"); }

TEST(NanAnalyze, CleanStepWritesNothing) {
  const ScratchDir scratch("nan_clean");
  const probe::NanAnalyzeResult r = analyze("clean", probe::Profile::Probe, scratch.file("out"));
  EXPECT_TRUE(r.anomalies.empty());
  EXPECT_TRUE(r.file.empty());
  EXPECT_EQ(r.phase, "");
  ASSERT_EQ(r.log.size(), 4u);
  EXPECT_EQ(r.log[0], "Start searching anomaly node before communication.");
  EXPECT_EQ(r.log[3], "Cannot find any anomaly node, no need to generate analyze file.");
  EXPECT_FALSE(fs::exists(scratch.file("out")));
}

TEST(NanAnalyze, ErrorsNameTheDirectoryFileOrEntry) {
  const ScratchDir scratch("nan_errors");
  auto expect_error = [](const std::string& in, probe::ErrorKind kind, const std::string& needle) {
    probe::NanAnalyzeOptions o;
    o.input_path = in;
    try {
      probe::nan_analyze(o);
      ADD_FAILURE() << "expected an error for " << in;
    } catch (const probe::Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(scratch.file("missing"), probe::ErrorKind::Io, "missing");
  // A path that exists but cannot be reached (a symlink loop) says why, not "no such directory".
  fs::create_symlink(scratch.file("loop_b"), scratch.file("loop_a"));
  fs::create_symlink(scratch.file("loop_a"), scratch.file("loop_b"));
  expect_error(scratch.file("loop_a"), probe::ErrorKind::Io,
               "-i: cannot access: Too many levels of symbolic links");
  expect_error(scratch.path().string(), probe::ErrorKind::InvalidArgument, "no rank* directory");
  // A rank without stack.json.
  const fs::path rank = scratch.path() / "step" / "rank0";
  fs::create_directories(rank);
  fs::copy_file(kData + "during_comm/step0/rank0/dump.json", rank / "dump.json");
  fs::copy_file(kData + "during_comm/step0/rank0/construct.json", rank / "construct.json");
  expect_error((scratch.path() / "step").string(), probe::ErrorKind::Io, "stack.json");
  // A communication entry whose name lacks its call counter.
  std::ofstream(rank / "stack.json") << "{}";
  std::ofstream(rank / "dump.json")
      << R"({"task": "statistics", "data": {"Distributed.all_reduce.forward": {"input_args": [], "output": []}}})";
  expect_error((scratch.path() / "step").string(), probe::ErrorKind::Format,
               "Distributed.all_reduce.forward");
  std::ofstream(rank / "dump.json") << R"({"data": {)";
  expect_error((scratch.path() / "step").string(), probe::ErrorKind::Format, "dump.json");
}

TEST(NanAnalyzeCli, CommandLineAndExitCodes) {
  const ScratchDir scratch("nan_cli");
  const auto r =
      run_cli("-f pytorch nan_analyze -i '" + kData + "during_comm/step0' -o '" + scratch.file("o") + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(
      r.out.find("Start searching anomaly node during communication.\nThe analyze result is saved in: " +
                 scratch.file("o") + "/anomaly_analyze_"),
      std::string::npos)
      << r.out;
  const auto c = run_cli("nan_analyze --input_path '" + kData + "clean/step0' --output_path '" +
                         scratch.file("c") + "'");
  EXPECT_EQ(c.code, 0);
  EXPECT_NE(c.out.find("Cannot find any anomaly node, no need to generate analyze file.\n"),
            std::string::npos);
  EXPECT_EQ(run_cli("nan_analyze").code, 2);
  EXPECT_EQ(run_cli("nan_analyze -i /nonexistent/step0").code, 3);
  EXPECT_EQ(run_cli("nan_analyze -i '" + kData + "clean/step0' --profile other").code, 2);
  const auto h = run_cli("nan_analyze --help");
  EXPECT_EQ(h.code, 0);
  for (const char* flag : {"--input_path", "--output_path", "--profile"})
    EXPECT_NE(h.out.find(flag), std::string::npos) << flag;
}
