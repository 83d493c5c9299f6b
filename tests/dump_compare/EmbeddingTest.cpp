// compare as a library call: thresholds the caller passes, progress, cancellation between dump entries, and
// enum options. Fixture: tests/data/dump_compare/stats (make_dump_compare_fixtures.py).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <stop_token>

#include "probe/csv.h"
#include "probe/dump_compare.h"
#include "probe/error.h"

namespace fs = std::filesystem;
using namespace probe;

namespace {

const std::string kStats = std::string(PROBE_TEST_DATA_DIR) + "/dump_compare/stats/";
const std::string kNpu = kStats + "npu/step0/rank0/dump.json";
const std::string kBench = kStats + "bench/step0/rank0/dump.json";

std::string cell(const DumpCompareTable& t, const std::string& row, const std::string& column) {
  std::size_t c = 0;
  while (c < t.header.size() && t.header[c] != column) ++c;
  for (const auto& r : t.rows)
    if (r[0] == row && c < r.size()) return r[c];
  ADD_FAILURE() << "no cell " << row << " / " << column;
  return {};
}

std::string fresh_dir(const std::string& name) {
  const fs::path p =
      fs::temp_directory_path() / ("probe_dc_embed_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p.string();
}

// Torch.add.0's NPU output statistics are 5x the bench's (dump.json: max 4.3688 vs 0.87375, min -7.2367 vs
// -1.4473, ...). |npu - bench| / (|max(npu, bench)| + 1e-10) is then 4b / 5b = 0.8 for the positive max and
// norm, and 4b / b = 4 for the negative min and mean (max() picks the bench there). msprobe's 0.5 gives
// Warning; a caller's 4.5 exceeds every ratio, so no statistic warns.
TEST(DumpCompareEmbedding, InjectedStatisticsThresholdChangesTheResult) {
  const DumpCompareOptions o;
  EXPECT_EQ(cell(compare_dump_files(kNpu, kBench, "", o), "Torch.add.0.forward.output.0", "Result"),
            "Warning");
  DumpCompareThresholds lenient;
  lenient.statistics_warning = 4.5;
  const DumpCompareTable t = compare_dump_files(kNpu, kBench, "", o, lenient);
  EXPECT_EQ(cell(t, "Torch.add.0.forward.output.0", "Result"), "");
  EXPECT_EQ(cell(t, "Torch.add.0.forward.output.0", "Err_message"), "");
  lenient.statistics_warning = 3.9;  // below the min/mean ratio of 4
  EXPECT_EQ(cell(compare_dump_files(kNpu, kBench, "", o, lenient), "Torch.add.0.forward.output.0", "Result"),
            "Warning");
}

TEST(DumpCompareEmbedding, StopAfterTheFirstEntryKeepsItsRowsWhole) {
  const DumpCompareOptions o;
  const DumpCompareTable full = compare_dump_files(kNpu, kBench, "", o);
  // The first entry, Functional.linear.0.forward, owns the leading rows named after it.
  std::size_t first_entry_rows = 0;
  while (first_entry_rows < full.rows.size() &&
         full.rows[first_entry_rows][0].rfind("Functional.linear.0.forward.", 0) == 0)
    ++first_entry_rows;
  ASSERT_GT(first_entry_rows, 1u);
  ASSERT_LT(first_entry_rows, full.rows.size());

  std::stop_source stop;
  std::vector<DumpCompareProgress> seen;
  const DumpCompareTable t = compare_dump_files(
      kNpu, kBench, "", o, DumpCompareThresholds{},
      [&](const DumpCompareProgress& p) {
        seen.push_back(p);
        stop.request_stop();
      },
      stop.get_token());
  EXPECT_TRUE(t.cancelled);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].npu_json, kNpu);
  EXPECT_EQ(seen[0].rows_done, first_entry_rows);
  EXPECT_EQ(seen[0].rows, full.rows.size());
  ASSERT_EQ(t.rows.size(), first_entry_rows);
  for (std::size_t i = 0; i < first_entry_rows; ++i) EXPECT_EQ(t.rows[i], full.rows[i]) << i;
  EXPECT_FALSE(full.cancelled);
}

TEST(DumpCompareEmbedding, StoppedRunWritesTheRowsComparedAndSaysCancelled) {
  CompareInput in;
  in.npu_path = kNpu;
  in.bench_path = kBench;
  DumpCompareOptions o;
  o.out_dir = fresh_dir("stop");
  o.timestamp = "20260101000000";
  o.write_xlsx = false;
  std::stop_source stop;
  const DumpCompareSummary s = run_dump_compare(
      in, o, [&](const DumpCompareProgress&) { stop.request_stop(); }, stop.get_token());
  EXPECT_TRUE(s.cancelled);
  ASSERT_EQ(s.outputs.size(), 1u);
  EXPECT_TRUE(s.outputs[0].cancelled);
  const auto rows = csv_read_file(s.outputs[0].csv);
  ASSERT_GT(rows.size(), 2u);
  EXPECT_EQ(rows.size() - 1, s.outputs[0].rows);
  for (std::size_t i = 1; i < rows.size(); ++i)
    EXPECT_EQ(rows[i][0].rfind("Functional.linear.0.forward.", 0), 0u) << rows[i][0];
  fs::remove_all(o.out_dir);
}

// The CLI accepts pytorch/pt and mindspore/ms only; a library caller passing another Framework is refused
// the same way, naming the option.
TEST(DumpCompareEmbedding, AFrameworkTheCliRefusesIsRefused) {
  for (Framework f : {Framework::MindTorch, Framework::Unknown}) {
    DumpCompareOptions o;
    o.framework = f;
    try {
      compare_dump_files(kNpu, kBench, "", o);
      ADD_FAILURE() << "accepted " << to_string(f);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_EQ(e.field(), "framework");
    }
  }
  const std::string cmd = std::string(PROBE_CLI_PATH) + " compare -i " + kStats +
                          "compare.json --framework mindtorch -o " + fresh_dir("cli") + " >/dev/null 2>&1";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
}

}  // namespace
