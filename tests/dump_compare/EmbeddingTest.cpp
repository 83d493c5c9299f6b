// compare as a library call: thresholds the caller passes, progress, cancellation between dump entries, and
// enum options. Fixture: tests/data/dump_compare/stats (make_dump_compare_fixtures.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <stop_token>

#include "CompareTable.h"
#include "common/RunCli.h"
#include "common/ScratchDir.h"
#include "probe/csv.h"
#include "probe/dump_compare.h"
#include "probe/error.h"

namespace fs = std::filesystem;
using namespace probe;

namespace {

using probe::testing::CompareTable;
using probe::testing::run_cli;
using probe::testing::ScratchDir;

const std::string kStats = std::string(PROBE_TEST_DATA_DIR) + "/dump_compare/stats/";
const std::string kNpu = kStats + "npu/step0/rank0/dump.json";
const std::string kBench = kStats + "bench/step0/rank0/dump.json";

// Torch.add.0's NPU output statistics are 5x the bench's (dump.json: max 4.3688 vs 0.87375, min -7.2367 vs
// -1.4473, ...). |npu - bench| / (|max(npu, bench)| + 1e-10) is then 4b / 5b = 0.8 for the positive max and
// norm, and 4b / b = 4 for the negative min and mean (max() picks the bench there). msprobe's 0.5 gives
// Warning; a caller's 4.5 exceeds every ratio, so no statistic warns.
TEST(DumpCompareEmbedding, InjectedStatisticsThresholdChangesTheResult) {
  const DumpCompareOptions o;
  EXPECT_EQ(
      CompareTable{compare_dump_files(kNpu, kBench, "", o)}.cell("Torch.add.0.forward.output.0", "Result"),
      "Warning");
  DumpCompareThresholds lenient;
  lenient.statistics_warning = 4.5;
  const CompareTable t{compare_dump_files(kNpu, kBench, "", o, lenient)};
  EXPECT_EQ(t.cell("Torch.add.0.forward.output.0", "Result"), "");
  EXPECT_EQ(t.cell("Torch.add.0.forward.output.0", "Err_message"), "");
  lenient.statistics_warning = 3.9;  // below the min/mean ratio of 4
  EXPECT_EQ(CompareTable{compare_dump_files(kNpu, kBench, "", o, lenient)}.cell(
                "Torch.add.0.forward.output.0", "Result"),
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
  const ScratchDir scratch("dump_compare_embed_stop");
  DumpCompareOptions o;
  o.out_dir = scratch.file("out");
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
  const ScratchDir scratch("dump_compare_embed_cli");
  EXPECT_EQ(
      run_cli("compare -i " + kStats + "compare.json --framework mindtorch -o " + scratch.file("out")).code,
      2);
}

}  // namespace
