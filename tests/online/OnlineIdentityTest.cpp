// Who sent a record (loopback only, every wait bounded): the first record of a name no longer wins
// silently. The same name sent again with other content is an error, an identical resend is dropped, a
// record of another run than the one a rank's files belong to is refused, and `--resume` keeps the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/ScratchDir.h"
#include "online/OnlineTestSupport.h"
#include "probe/error.h"
#include "probe/online_client.h"
#include "probe/online_server.h"
#include "probe/precheck_frame.h"
#include "run_ut/RecordBook.h"

namespace {

using namespace std::chrono_literals;
using probe::online::Client;
using probe::online::DumpRecords;
using probe::testing::ScratchDir;
using namespace probe::online_test;

// Functional.gelu on four float32 values: the device output torch gives (exact erf form, rounded to
// float32), or a broken one (all zeros) that run_ut judges an error.
struct Gelu {
  probe::ApiCall call;
  std::vector<probe::Value> healthy, broken;
  Gelu() {
    const std::vector<float> x = {-1.5f, -0.25f, 0.5f, 2.0f};
    std::vector<float> y;
    for (float v : x) y.push_back(static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)))));
    call.args.emplace_back(probe::Tensor::from_values<float>(x, probe::Shape{4}));
    healthy.emplace_back(probe::Tensor::from_values<float>(y, probe::Shape{4}));
    broken.emplace_back(probe::Tensor::from_values<float>({0.0f, 0.0f, 0.0f, 0.0f}, probe::Shape{4}));
  }
};

ClientOptions with_run(std::uint16_t port, const std::string& run_id) {
  ClientOptions o = client_options(port);
  o.run_id = run_id;
  return o;
}

TEST(OnlineIdentity, FramesCarryTheRunIdAndTheirDigest) {
  const Gelu g;
  const auto a = probe::online::encode_api_frame("Functional.gelu.0", g.call, g.healthy,
                                                 probe::Framework::PyTorch, {}, "job-7.a:1");
  const auto f = probe::online::decode_frame(a);
  EXPECT_EQ(f.run_id(), "job-7.a:1");
  EXPECT_EQ(f.digest, probe::online::decode_frame(a).digest);
  const auto old = probe::online::encode_api_frame("Functional.gelu.0", g.call, g.healthy);
  EXPECT_EQ(probe::online::decode_frame(old).run_id(), "");  // an old sender's frame
  const auto broken = probe::online::encode_api_frame("Functional.gelu.0", g.call, g.broken,
                                                      probe::Framework::PyTorch, {}, "job-7.a:1");
  EXPECT_NE(probe::online::decode_frame(broken).digest, f.digest);
  EXPECT_THROW(probe::online::encode_api_frame("Functional.gelu.0", g.call, g.healthy,
                                               probe::Framework::PyTorch, {}, "a\"b"),
               probe::Error);
  const std::string header =
      R"({"run_id":"a b","task":"tensor","level":"L1","framework":"pytorch","data":{"Functional.relu.0.backward":{"input":[],"output":[]}}})";
  try {
    probe::online::encode_frame(header, {});
    ADD_FAILURE() << "a run id with a space was accepted";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.field(), "run_id");
  }
  ClientOptions bad;
  bad.run_id = std::string(129, 'a');
  EXPECT_THROW(Client{bad}, probe::Error);
  EXPECT_EQ(probe::online::process_run_id().size(), 32u);
}

// The first sender of a name used to win: a healthy gelu.0 from anyone made the trainer's broken one a
// silent repeat (pass 1 error 0, exit 0).
TEST(OnlineIdentity, ANameSentAgainWithOtherContentIsAConflictAndAnIdenticalResendIsDropped) {
  ScratchDir dir("identity");
  const Gelu g;
  Running server(server_options(dir.file("online"), 2));
  {
    Client first(with_run(server.port(), "job-7"));
    first.send("Functional.gelu.0", g.call, g.healthy, 0, 0);
    first.send("Functional.gelu.0", g.call, g.healthy, 0, 0);  // a resend: same bytes, dropped silently
    first.close(30s);
  }
  {
    Client second(with_run(server.port(), "job-7"));
    second.send("Functional.gelu.0", g.call, g.broken, 0, 0);
    second.close(30s);
  }
  const ServerSummary s = server.finish();
  ASSERT_EQ(s.ranks.count(0), 1u) << server.joined_log();
  const auto& r = s.ranks.at(0);
  EXPECT_EQ(r.run_ut.apis, 1u);
  EXPECT_EQ(r.repeated, 1u);
  EXPECT_EQ(r.conflicts, 1u);
  EXPECT_EQ(r.other_runs, 0u);
  EXPECT_EQ(r.run_id, "job-7");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("Functional.gelu.0.forward was already received with other content"),
            std::string::npos)
      << r.problems[0];
  EXPECT_TRUE(server.wait_for_log("rank 0: " + r.problems[0], 1s)) << server.joined_log();
}

TEST(OnlineIdentity, RecordsOfAnotherRunAreRefused) {
  ScratchDir dir("identity");
  const Gelu g;
  Running server(server_options(dir.file("online"), 2));
  {
    Client squatter(with_run(server.port(), "squatter"));
    squatter.send("Functional.gelu.0", g.call, g.healthy, 0, 0);
    squatter.close(30s);
  }
  {
    Client trainer(with_run(server.port(), "trainer"));
    trainer.send("Functional.gelu.0", g.call, g.broken, 0, 0);
    trainer.send("Functional.gelu.1", g.call, g.broken, 0, 0);
    trainer.close(30s);
  }
  const ServerSummary s = server.finish();
  ASSERT_EQ(s.ranks.count(0), 1u) << server.joined_log();
  const auto& r = s.ranks.at(0);
  EXPECT_EQ(r.run_ut.apis, 1u);
  EXPECT_EQ(r.other_runs, 2u);
  EXPECT_EQ(r.repeated, 0u);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_NE(r.problems[0].find("belongs to run trainer, not to run squatter"), std::string::npos)
      << r.problems[0];
}

TEST(OnlineIdentity, RunUtExitsNonZeroOnAConflict) {
  ScratchDir dir("identity");
  const Gelu g;
  Process server({PROBE_CLI_PATH, "run_ut", "--online", "--port", "0", "-o", dir.file("online"),
                  "--timestamp", kTs, "--producers", "2", "-n", "1"});
  const std::uint16_t port = server.listening_port();
  ASSERT_NE(port, 0) << server.text;
  {
    Client first(client_options(port));  // both clients of this process share its run id
    first.send("Functional.gelu.0", g.call, g.healthy, 0, 0);
    first.close(30s);
  }
  {
    Client second(client_options(port));
    second.send("Functional.gelu.0", g.call, g.broken, 0, 0);
    second.close(30s);
  }
  EXPECT_EQ(server.wait_exit(60s), probe::exit_code(probe::ErrorKind::Format)) << server.text;
  EXPECT_NE(server.text.find("conflicts 1"), std::string::npos) << server.text;
  EXPECT_NE(server.text.find("Functional.gelu.0.forward was already received with other content"),
            std::string::npos)
      << server.text;
}

// A second job resuming the files of the first used to have its first N records dropped as repeats.
TEST(OnlineIdentity, ResumeRefusesAnotherRunAndContinuesTheSameRun) {
  ScratchDir dir("identity");
  const std::string dump = kRunUt + "pt_fp32_fwd/dump.json";
  const auto want = offline(dump, dir.file("offline"));
  const DumpRecords records = DumpRecords::open(dump);
  ASSERT_GE(records.size(), 3u);
  const std::string base = dir.file("online") + "/accuracy_checking_";
  const std::string result = base + "result_" + kTs + "_rank0.csv";
  {
    Running server(server_options(dir.file("online"), 1));
    Client client(with_run(server.port(), "run-a"));
    for (std::size_t i = 0; i < 2; ++i) client.send_frame(records.frame(i, {}, client.run_id()), 0, 0);
    client.close(30s);
    EXPECT_EQ(server.finish().ranks.at(0).run_ut.apis, 2u);
  }
  EXPECT_EQ(slurp(base + "result_" + kTs + "_rank0.run_id"), "run-a\n");
  const std::string two_rows = slurp(result);
  auto resume = server_options(dir.file("online"), 1);
  resume.stream.resume = true;
  {
    Running server(resume);
    Process replay({PROBE_CLI_PATH, "replay", "-api_info", dump, "--port", std::to_string(server.port()),
                    "--run_id", "run-b", "-q"});
    EXPECT_EQ(replay.wait_exit(60s), 0) << replay.text;
    const ServerSummary s = server.finish();
    const auto& r = s.ranks.at(0);
    EXPECT_EQ(r.other_runs, records.size());
    EXPECT_EQ(r.repeated, 0u);
    EXPECT_EQ(r.run_ut.checked, 0u);
    EXPECT_EQ(r.run_id, "run-a");
  }
  EXPECT_EQ(slurp(result), two_rows);
  {
    Running server(resume);
    Process replay({PROBE_CLI_PATH, "replay", "-api_info", dump, "--port", std::to_string(server.port()),
                    "--run_id", "run-a", "-q"});
    EXPECT_EQ(replay.wait_exit(60s), 0) << replay.text;
    const ServerSummary s = server.finish();
    const auto& r = s.ranks.at(0);
    EXPECT_EQ(r.other_runs, 0u);
    EXPECT_EQ(r.repeated, 2u);
    EXPECT_EQ(r.conflicts, 0u);
  }
  EXPECT_EQ(slurp(result), slurp(want.result_csv));
  EXPECT_EQ(slurp(base + "details_" + kTs + "_rank0.csv"), slurp(want.details_csv));
}

// The digests are kept beside the files too: after a resume, the same name with other content is still a
// conflict, not a repeat.
TEST(OnlineIdentity, AConflictIsFoundAcrossAResume) {
  ScratchDir dir("identity");
  const Gelu g;
  {
    Running server(server_options(dir.file("online"), 1));
    Client client(with_run(server.port(), "run-a"));
    client.send("Functional.gelu.0", g.call, g.healthy, 0, 0);
    client.close(30s);
    EXPECT_EQ(server.finish().ranks.at(0).run_ut.apis, 1u);
  }
  auto resume = server_options(dir.file("online"), 1);
  resume.stream.resume = true;
  Running server(resume);
  {
    Client client(with_run(server.port(), "run-a"));
    client.send("Functional.gelu.0", g.call, g.healthy, 0, 0);
    client.send("Functional.gelu.0", g.call, g.broken, 0, 0);
    client.close(30s);
  }
  const ServerSummary s = server.finish();
  const auto& r = s.ranks.at(0);
  EXPECT_EQ(r.repeated, 1u);
  EXPECT_EQ(r.conflicts, 1u);
  EXPECT_EQ(r.run_ut.checked, 0u);
}

// A killed server can leave half a digest line; the resumed server cuts it before appending, so that the
// next record's digest is still a line of its own at the resume after that.
TEST(OnlineIdentity, ATornDigestLineDoesNotSwallowTheNextRecordsDigest) {
  ScratchDir dir("identity");
  const Gelu g;
  const std::string digests = dir.file("online") + "/accuracy_checking_result_" + kTs + "_rank0.digests";
  auto resume = server_options(dir.file("online"), 1);
  resume.stream.resume = true;
  {
    Running server(server_options(dir.file("online"), 1));
    Client client(with_run(server.port(), "run-a"));
    client.send("Functional.gelu.0", g.call, g.healthy, 0, 0);
    client.close(30s);
    EXPECT_EQ(server.finish().ranks.at(0).run_ut.apis, 1u);
  }
  {
    std::ofstream(digests, std::ios::app) << "Functional.gelu.7\t0123";  // no line break: torn
  }
  {
    Running server(resume);
    Client client(with_run(server.port(), "run-a"));
    client.send("Functional.gelu.1", g.call, g.healthy, 0, 0);
    client.close(30s);
    EXPECT_EQ(server.finish().ranks.at(0).run_ut.checked, 1u);
  }
  EXPECT_EQ(slurp(digests).find("0123"), std::string::npos) << slurp(digests);
  Running server(resume);
  {
    Client client(with_run(server.port(), "run-a"));
    client.send("Functional.gelu.1", g.call, g.broken, 0, 0);
    client.close(30s);
  }
  const ServerSummary s = server.finish();
  const auto& r = s.ranks.at(0);
  EXPECT_EQ(r.conflicts, 1u);
  EXPECT_EQ(r.repeated, 0u);
}

// Names are written escaped into the digests file: a key holding a tab or a line break (a JSON string may)
// keeps its digest through a resume.
TEST(OnlineIdentity, DigestLinesKeepAnyNameThroughAResume) {
  probe::rut::RecordDigest a{}, b{};
  a[0] = 1;
  b[0] = 2;
  const std::string odd = "Functional.x\t\n%0A%.0";
  const std::string file = probe::rut::RecordBook::digest_line(odd, a) +
                           probe::rut::RecordBook::digest_line("Functional.relu.0", a);
  EXPECT_EQ(std::count(file.begin(), file.end(), '\n'), 2);
  probe::rut::RecordBook book;
  EXPECT_EQ(book.resume(std::string("r"), {odd, "Functional.relu.0"}, file + "Functional.y.0\t01"),
            file.size());
  EXPECT_EQ(book.admit("r", odd, a), probe::rut::Admission::Repeat);
  EXPECT_EQ(book.admit("r", odd, b), probe::rut::Admission::Conflict);
  EXPECT_EQ(book.admit("r", std::string("Functional.relu.0"), b), probe::rut::Admission::Conflict);
  EXPECT_EQ(book.admit("r", std::string("Functional.y.0"), b), probe::rut::Admission::Check);
  EXPECT_EQ(book.admit("q", std::string("Functional.z.0"), b), probe::rut::Admission::OtherRun);
  EXPECT_EQ(book.admit("r", std::nullopt, b), probe::rut::Admission::Ignored);
}

}  // namespace
