// The run_ut engine without API checking: dump-order output under threads, resume after a kill
// at any point, file names and headers.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/csv.h"
#include "probe/error.h"
#include "run_ut/Engine.h"
#include "run_ut/OutputFiles.h"
#include "support/WorkerPool.h"

namespace probe::rut {
namespace {
namespace fs = std::filesystem;

using probe::testing::ScratchDir;
using probe::testing::slurp;

void append(const std::string& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::app);
  out << bytes;
}

std::vector<std::string> api_names(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back("Functional.op_" + std::to_string(i % 5) + "." + std::to_string(i));
  return v;
}

// Deterministic rows per API: 0..2 detail rows whose messages need CSV quoting, a SKIP row with
// a 4th result field every 4th API, varied statuses.
ApiRows fake_rows(const std::vector<std::string>& apis, std::size_t i) {
  ApiRows r;
  r.name = apis[i];
  static const Status kStatus[] = {Status::Pass, Status::Error, Status::Warning};
  if (i % 4 == 3) {
    CsvRow d(23, kSpace);
    d[0] = apis[i] + ".forward.output.0";
    d[21] = to_string(Status::Skip);
    d[22] = "API " + apis[i] + " not support, \"quoted\"\nSKIP.";
    r.details.push_back(d);
    r.result = ResultRow{apis[i], Status::Skip, Status::Skip, d[22]};
    return r;
  }
  for (std::size_t k = 0; k < 1 + i % 3; ++k) {  // an API with a status always has details rows
    CsvRow d(23, kSpace);
    d[0] = apis[i] + ".forward.output." + std::to_string(k);
    d[3] = "(2, 3)";
    d[21] = to_string(kStatus[(i + k) % 3]);
    d[22] = "\nMax abs error is less than 0.001, consider as pass, skip other check and set to SPACE.\n";
    r.details.push_back(d);
  }
  r.result = ResultRow{apis[i], kStatus[i % 3], i % 2 ? std::optional<Status>(Status::Pass) : std::nullopt,
                       std::nullopt};
  return r;
}

RunUtSummary run(const fs::path& dir, const std::vector<std::string>& apis, int threads, bool resume,
                 bool jitter = false) {
  EngineConfig cfg;
  cfg.paths = new_output_paths(dir.string(), "20260102030405");
  cfg.resume = resume;
  cfg.threads = threads;
  return run_engine(apis,
                    [&](std::size_t i) {
                      if (jitter)
                        std::this_thread::sleep_for(std::chrono::microseconds((i * 7919) % 13 * 100));
                      return fake_rows(apis, i);
                    },
                    cfg, {});
}

TEST(RunUtFiles, NamesAndHeadersLikeMsprobe) {
  ScratchDir t("names");
  auto p = new_output_paths(t.path().string(), "20240101120000");
  EXPECT_EQ(fs::path(p.result).filename(), "accuracy_checking_result_20240101120000.csv");
  EXPECT_EQ(fs::path(p.details).filename(), "accuracy_checking_details_20240101120000.csv");
  { OutputWriter w(p, run_ut_format(Framework::PyTorch)); }
  std::string res = slurp(p.result);
  EXPECT_EQ(res,
            "\xEF\xBB\xBF"
            "API name,Forward Test Success,Backward Test Success,Message\r\n");
  std::string det = slurp(p.details);
  EXPECT_EQ(det.substr(0, 3), "\xEF\xBB\xBF");
  auto rows = csv_parse(det);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].size(), 23u);
  EXPECT_EQ(rows[0][4], "余弦相似度");
  EXPECT_EQ(rows[0][20], "ULP误差大于阈值占比");
  EXPECT_EQ(run_ut_format(Framework::MindSpore).details_header().size(), 9u);
  EXPECT_EQ(run_ut_format(Framework::MindSpore).result_header()[0], "API Name");
  EXPECT_THROW(new_output_paths(t.path().string(), "2024"), Error);
}

TEST(RunUtFiles, ResumePathValidation) {
  ScratchDir t("resume_paths");
  auto bad = (t.path() / "result.csv").string();
  append(bad, "x");
  EXPECT_THROW(resume_output_paths(bad), Error);
  auto good = (t.path() / "accuracy_checking_result_20240101120000.csv").string();
  append(good, "API Name\r\n");
  try {
    resume_output_paths(good);
    FAIL() << "missing details file beside a non-empty result file must be rejected";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
  append((t.path() / "accuracy_checking_details_20240101120000.csv").string(), "");
  auto p = resume_output_paths(good);
  EXPECT_EQ(p.timestamp, "20240101120000");
  EXPECT_THROW(resume_output_paths((t.path() / "accuracy_checking_result_2024.csv").string()), Error);
  // An empty result file alone: a run killed before it created its details file.
  auto empty = (t.path() / "accuracy_checking_result_20240101120001.csv").string();
  append(empty, "");
  EXPECT_EQ(resume_output_paths(empty).details,
            (t.path() / "accuracy_checking_details_20240101120001.csv").string());
}

TEST(RunUtFiles, DetailsRowFullName) {
  EXPECT_EQ(full_name_of_details_row("Torch.linalg.vector_norm.0.forward.output.1"),
            "Torch.linalg.vector_norm.0");
  EXPECT_EQ(full_name_of_details_row("Functional.relu.0.backward.output.0"), "Functional.relu.0");
}

TEST(OrderedParallel, DeliversInIndexOrderAndBoundsTheWindow) {
  std::atomic<int> in_flight{0}, max_in_flight{0};
  std::vector<std::size_t> seen;
  std::mutex m;
  std::atomic<std::size_t> sunk{0};
  detail::ordered_parallel<std::size_t>(
      200, 4, 8,
      [&](std::size_t i) {
        int now = ++in_flight;
        int prev = max_in_flight.load();
        while (now > prev && !max_in_flight.compare_exchange_weak(prev, now)) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds((i * 31) % 7 * 50));
        // Work never runs further than `window` ahead of what has been delivered.
        EXPECT_LT(i, sunk.load() + 8 + 1);
        --in_flight;
        return i * i;
      },
      [&](std::size_t i, std::size_t&& v) {
        EXPECT_EQ(v, i * i);
        std::lock_guard l(m);
        seen.push_back(i);
        ++sunk;
      });
  ASSERT_EQ(seen.size(), 200u);
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i);
  EXPECT_LE(max_in_flight.load(), 4);
}

TEST(OrderedParallel, PropagatesAWorkerException) {
  auto f = [] {
    detail::ordered_parallel<int>(
        50, 3, 6,
        [](std::size_t i) -> int {
          if (i == 17) throw Error(ErrorKind::Io, "disk full");
          return 0;
        },
        [](std::size_t, int&&) {});
  };
  EXPECT_THROW(f(), Error);
}

TEST(RunUtEngine, SameFilesForOneAndManyThreads) {
  auto apis = api_names(60);
  ScratchDir a("t1"), b("t3");
  auto s1 = run(a.path(), apis, 1, false);
  auto s3 = run(b.path(), apis, 3, false, /*jitter=*/true);
  EXPECT_EQ(slurp(s1.result_csv), slurp(s3.result_csv));
  EXPECT_EQ(slurp(s1.details_csv), slurp(s3.details_csv));
  // 60 APIs: 15 SKIP rows (i%4==3); of the rest the forward status cycles pass/error/Warning by i%3.
  EXPECT_EQ(s1.apis, 60u);
  EXPECT_EQ(s1.skip, 15u);
  EXPECT_EQ(s1.pass + s1.error + s1.warning, 45u);
  EXPECT_EQ(s1.checked, 60u);
  auto rows = csv_read_file(s1.result_csv);
  ASSERT_EQ(rows.size(), 61u);
  EXPECT_EQ(rows[1].size(), 3u);  // normal rows have 3 fields
  EXPECT_EQ(rows[4].size(), 4u);  // SKIP rows carry the message
  EXPECT_EQ(rows[1][2], " ");
}

// Kill points: cleanly after API m; after API m's details rows but before its result row; in the
// middle of a details row; in the middle of the result row. Resuming must give the same bytes.
TEST(RunUtEngine, ResumeAfterAKillAnywhereGivesIdenticalFiles) {
  auto apis = api_names(23);
  ScratchDir full_dir("full");
  auto full = run(full_dir.path(), apis, 2, false);
  const std::string want_res = slurp(full.result_csv), want_det = slurp(full.details_csv);
  for (std::size_t m : {0u, 1u, 2u, 7u, 11u, 22u}) {
    for (int tear = 0; tear < 4; ++tear) {
      ScratchDir t("cut");
      std::vector<std::string> head(apis.begin(), apis.begin() + static_cast<std::ptrdiff_t>(m));
      auto part = run(t.path(), head, 2, false);
      ApiRows next = fake_rows(apis, m);
      std::string det_bytes,
          res_bytes = csv_encode_row(run_ut_format(Framework::PyTorch).result_cells(*next.result)) + "\r\n";
      for (const auto& r : next.details) det_bytes += csv_encode_row(r) + "\r\n";
      if (tear == 1) append(part.details_csv, det_bytes);
      if (tear == 2) append(part.details_csv, det_bytes.substr(0, det_bytes.size() / 2 + 1));
      if (tear == 3) {
        append(part.details_csv, det_bytes);
        append(part.result_csv, res_bytes.substr(0, res_bytes.size() - 3));
      }
      auto resumed = run(t.path(), apis, 2, true);
      EXPECT_EQ(slurp(resumed.result_csv), want_res) << "m=" << m << " tear=" << tear;
      EXPECT_EQ(slurp(resumed.details_csv), want_det) << "m=" << m << " tear=" << tear;
      EXPECT_EQ(resumed.apis, apis.size());
      EXPECT_EQ(resumed.checked, apis.size() - m);
    }
  }
}

// A quote opened mid-file (a hand edit) pairs with a later quote and joins the rows
// between into one record of many cells; a resume used to keep that record and continue. Only a torn last
// row may be repaired. Both a quote that a later row closes and one that nothing closes are refused.
TEST(RunUtEngine, ResumeRefusesAnUnbalancedQuoteMidFile) {
  auto apis = api_names(9);
  std::vector<std::string> head(apis.begin(), apis.begin() + 6);
  for (bool closed_later : {true, false}) {
    SCOPED_TRACE(closed_later ? "closed by a later quote" : "never closed");
    ScratchDir t("midquote");
    auto part = run(t.path(), head, 1, false);
    std::string det = slurp(part.details_csv);
    if (!closed_later) {                 // no other quote anywhere: every message cell loses its quotes
      det.resize(det.find("\r\n") + 2);  // the header, then the first two APIs' rows without quotes
      for (std::size_t api = 0; api < 2; ++api)
        for (CsvRow row : fake_rows(apis, api).details) {
          row[3] = "2x3";
          row[22] = "plain";
          det += csv_encode_row(row) + "\r\n";
        }
      ASSERT_EQ(det.find('"'), std::string::npos);
    }
    const std::size_t row3 = det.find("\r\n", det.find("\r\n") + 2) + 2;  // after the header and row 2
    ASSERT_LT(row3, det.size());
    det.insert(det.find(',', row3) + 1, "\"");
    std::ofstream(part.details_csv, std::ios::binary | std::ios::trunc) << det;
    try {
      run(t.path(), apis, 1, true);
      ADD_FAILURE() << "resumed a details file with an unbalanced quote";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("row 3"), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(part.details_csv), det);
  }
}

TEST(RunUtEngine, ResumeRejectsAForeignFile) {
  ScratchDir t("foreign");
  auto p = new_output_paths(t.path().string(), "20260102030405");
  append(p.result, "a,b,c\r\n");
  append(p.details, "");
  EngineConfig cfg;
  cfg.paths = p;
  cfg.resume = true;
  EXPECT_THROW(run_engine({"Functional.relu.0"}, [](std::size_t) { return ApiRows{}; }, cfg, {}), Error);
}

TEST(RunUtEngine, SummaryRollUp) {
  EXPECT_EQ(run_ut_api_outcome(Status::Pass, std::nullopt), Status::Pass);
  EXPECT_EQ(run_ut_api_outcome(Status::Pass, Status::Error), Status::Error);
  EXPECT_EQ(run_ut_api_outcome(Status::Warning, Status::Pass), Status::Warning);
  EXPECT_EQ(run_ut_api_outcome(Status::Error, Status::Warning), Status::Error);
  EXPECT_EQ(run_ut_api_outcome(Status::Skip, Status::Skip), Status::Skip);
  EXPECT_EQ(run_ut_api_outcome(Status::Pass, Status::Skip), Status::Pass);
  EXPECT_EQ(run_ut_api_outcome(std::nullopt, Status::Skip), Status::Skip);
  EXPECT_EQ(run_ut_api_outcome(std::nullopt, std::nullopt), Status::Skip);
}

}  // namespace
}  // namespace probe::rut
