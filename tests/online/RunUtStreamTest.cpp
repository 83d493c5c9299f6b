// run_ut fed record by record (probe/run_ut_stream.h): the forward records of real dumps (written by torch,
// tests/data/run_ut/make_run_ut_fixtures.py and make_real_model_dumps.py), sent as precheck frames, give
// the same CSV bytes as offline run_ut of the dump; a stopped or interrupted stream resumes to the same
// files.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/error.h"
#include "probe/precheck_frame.h"
#include "probe/run_ut.h"
#include "probe/run_ut_stream.h"

namespace {

using probe::RunUtStream;
using probe::RunUtStreamOptions;
using probe::online::decode_frame;
using probe::online::DumpRecords;
using probe::testing::ScratchDir;

const std::string kRunUt = std::string(PROBE_TEST_DATA_DIR) + "/run_ut/";
constexpr const char* kTs = "20261127040000";

using probe::testing::slurp;

probe::RunUtSummary offline(const std::string& fixture, const std::string& out) {
  probe::RunUtOptions o;
  o.api_info = kRunUt + fixture + "/dump.json";
  o.out_dir = out;
  o.timestamp = kTs;
  o.threads = 2;
  return probe::run_ut(o);
}

RunUtStreamOptions stream_options(const std::string& out) {
  RunUtStreamOptions o;
  o.run_ut.out_dir = out;
  o.run_ut.timestamp = kTs;
  o.run_ut.threads = 3;
  o.capacity = 4;
  return o;
}

// Sends records [begin, end) of a dump through the stream as decoded frames.
void feed(RunUtStream& stream, const DumpRecords& records, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i)
    ASSERT_TRUE(stream.push(decode_frame(records.frame(i), {}, records.key(i)))) << records.key(i);
}

class StreamEqualsOffline : public ::testing::TestWithParam<const char*> {};

TEST_P(StreamEqualsOffline, SameRowsAsRunUtOfTheDump) {
  const std::string fixture = GetParam();
  ScratchDir dir("stream");
  const auto want = offline(fixture, dir.file("offline"));
  ASSERT_GT(want.apis, 3u);
  const DumpRecords records = DumpRecords::open(kRunUt + fixture + "/dump.json");
  ASSERT_EQ(records.size(), want.apis);

  RunUtStream stream(stream_options(dir.file("stream")));
  feed(stream, records, 0, records.size());
  const auto got = stream.finish();
  EXPECT_EQ(got.records, records.size());
  EXPECT_EQ(got.ignored, 0u);
  EXPECT_EQ(got.dropped, 0u);
  EXPECT_FALSE(got.run_ut.cancelled);
  EXPECT_EQ(got.run_ut.apis, want.apis);
  EXPECT_EQ(got.run_ut.pass, want.pass);
  EXPECT_EQ(got.run_ut.error, want.error);
  EXPECT_EQ(got.run_ut.skip, want.skip);
  EXPECT_EQ(got.run_ut.warning, want.warning);
  EXPECT_EQ(slurp(got.run_ut.result_csv), slurp(want.result_csv));
  EXPECT_EQ(slurp(got.run_ut.details_csv), slurp(want.details_csv));
}

// Forward-only tensor dumps written by torch: fp32 functional APIs, a mixed-dtype set, and real topk/sort
// ties of a model.
INSTANTIATE_TEST_SUITE_P(RealDumps, StreamEqualsOffline,
                         ::testing::Values("pt_fp32_fwd", "pt_mixed", "real_ties_fp32"));

TEST(RunUtStream, RankNamesTheFilesAndResumeSkipsWrittenApis) {
  ScratchDir dir("stream");
  const auto want = offline("pt_fp32_fwd", dir.file("offline"));
  const DumpRecords records = DumpRecords::open(kRunUt + "pt_fp32_fwd/dump.json");
  auto options = stream_options(dir.file("stream"));
  options.rank = 3;
  const std::size_t half = records.size() / 2;
  {
    RunUtStream first(options);
    feed(first, records, 0, half);
    const auto s = first.finish();
    EXPECT_EQ(s.run_ut.apis, half);
    EXPECT_EQ(s.run_ut.result_csv, dir.file("stream") + "/accuracy_checking_result_" + kTs + "_rank3.csv");
    EXPECT_EQ(s.run_ut.details_csv, dir.file("stream") + "/accuracy_checking_details_" + kTs + "_rank3.csv");
  }
  // Without resume the files of that stream are never reused.
  EXPECT_THROW(RunUtStream{options}, probe::Error);
  options.resume = true;
  RunUtStream second(options);
  feed(second, records, 0, records.size());  // the training side sends everything again
  const auto s = second.finish();
  EXPECT_EQ(s.repeated, half);
  EXPECT_EQ(s.run_ut.checked, records.size() - half);
  EXPECT_EQ(s.run_ut.apis, want.apis);
  EXPECT_EQ(slurp(s.run_ut.result_csv), slurp(want.result_csv));
  EXPECT_EQ(slurp(s.run_ut.details_csv), slurp(want.details_csv));
}

TEST(RunUtStream, StopLeavesResumableFiles) {
  ScratchDir dir("stream");
  const auto want = offline("pt_mixed", dir.file("offline"));
  const DumpRecords records = DumpRecords::open(kRunUt + "pt_mixed/dump.json");
  auto options = stream_options(dir.file("stream"));
  {
    std::stop_source stop;
    RunUtStream first(options, stop.get_token());
    feed(first, records, 0, 5);
    stop.request_stop();
    EXPECT_FALSE(first.push(decode_frame(records.frame(5))));  // refused once stopped
    const auto s = first.finish();
    EXPECT_TRUE(s.run_ut.cancelled);
    EXPECT_EQ(s.records, 5u);
    EXPECT_EQ(s.run_ut.apis + s.dropped, 5u);
  }
  options.resume = true;
  RunUtStream second(options);
  feed(second, records, 0, records.size());
  const auto s = second.finish();
  EXPECT_EQ(slurp(s.run_ut.result_csv), slurp(want.result_csv));
  EXPECT_EQ(slurp(s.run_ut.details_csv), slurp(want.details_csv));
}

TEST(RunUtStream, RecordsRunUtDoesNotCheckAloneAreIgnoredAndRepeatsNotWrittenTwice) {
  ScratchDir dir("stream");
  const DumpRecords records = DumpRecords::open(kRunUt + "pt_fp32_fwd/dump.json");
  RunUtStream stream(stream_options(dir.file("stream")));
  // A backward record and a module record: offline run_ut checks neither on its own.
  const std::string header_bwd =
      R"({"task":"tensor","level":"L1","framework":"pytorch","data":{"Functional.relu.0.backward":{"input":[],"output":[]}}})";
  const std::string header_module =
      R"({"task":"tensor","level":"L1","framework":"pytorch","data":{"Module.fc.Linear.forward.0":{"input_args":[],"input_kwargs":{},"output":[]}}})";
  ASSERT_TRUE(stream.push(decode_frame(probe::online::encode_frame(header_bwd, {}))));
  ASSERT_TRUE(stream.push(decode_frame(probe::online::encode_frame(header_module, {}))));
  feed(stream, records, 0, 2);
  feed(stream, records, 0, 1);
  const auto s = stream.finish();
  EXPECT_EQ(s.records, 5u);
  EXPECT_EQ(s.ignored, 2u);
  EXPECT_EQ(s.repeated, 1u);
  EXPECT_EQ(s.run_ut.apis, 2u);
  EXPECT_FALSE(stream.push(decode_frame(records.frame(3))));  // finished
}

TEST(RunUtStream, TryPushRefusesWhenFullAndKeepsTheRecord) {
  ScratchDir dir("stream");
  const DumpRecords records = DumpRecords::open(kRunUt + "pt_fp32_fwd/dump.json");
  auto options = stream_options(dir.file("stream"));
  options.capacity = 1;
  options.run_ut.threads = 1;
  RunUtStream stream(options);
  std::size_t refused = 0, sent = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    auto frame = decode_frame(records.frame(i));
    while (!stream.try_push(frame)) {
      ++refused;
      ASSERT_EQ(frame.entry().key, records.key(i));  // untouched, to be sent again
      std::this_thread::yield();
    }
    ++sent;
  }
  const auto s = stream.finish();
  EXPECT_EQ(s.run_ut.apis, sent);
  RecordProperty("refused", static_cast<int>(refused));
}

TEST(RunUtStream, RefusesBadOptions) {
  ScratchDir dir("stream");
  auto options = stream_options(dir.file("stream"));
  options.capacity = 0;
  EXPECT_THROW(RunUtStream{options}, probe::Error);
  options.capacity = 1;
  options.run_ut.framework = probe::Framework::MindTorch;
  EXPECT_THROW(RunUtStream{options}, probe::Error);
}

}  // namespace

namespace {

// Outstanding records are bounded by their tensor bytes as well as their count: records of a real dump
// held to the bytes of three of the largest, and one record above the bound alone still taken.
TEST(RunUtStream, OutstandingRecordsAreBoundedByTheirBytes) {
  ScratchDir dir("stream");
  const auto want = offline("pt_mixed", dir.file("offline"));
  const DumpRecords records = DumpRecords::open(kRunUt + "pt_mixed/dump.json");
  std::uint64_t largest = 0, total = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::uint64_t n = 0;
    for (const auto& t : decode_frame(records.frame(i)).tensors) n += t.nbytes();
    largest = std::max(largest, n);
    total += n;
  }
  ASSERT_GT(total, 3 * largest);  // otherwise the bound could not be reached
  auto options = stream_options(dir.file("stream"));
  options.capacity = 1000;
  options.run_ut.threads = 1;
  options.max_outstanding_bytes = 3 * largest;
  {
    RunUtStream stream(options);
    feed(stream, records, 0, records.size());
    const auto s = stream.finish();
    EXPECT_LE(s.peak_outstanding_bytes, 3 * largest);
    EXPECT_GE(s.peak_outstanding_bytes, largest);
    EXPECT_EQ(slurp(s.run_ut.result_csv), slurp(want.result_csv));
  }
  options.run_ut.out_dir = dir.file("alone");
  options.max_outstanding_bytes = 1;
  RunUtStream stream(options);
  feed(stream, records, 0, records.size());
  const auto s = stream.finish();
  EXPECT_EQ(s.run_ut.apis, want.apis);
  EXPECT_EQ(s.peak_outstanding_bytes, largest);
}

}  // namespace
