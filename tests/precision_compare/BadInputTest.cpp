// Inputs api_precision_compare must refuse with a clear probe::Error, leaving no output that looks finished.
#include <gtest/gtest.h>

#include <filesystem>

#include "TestUtil.h"
#include "probe/api_precision_compare.h"
#include "probe/error.h"

namespace probe {
namespace {

using testing::Cells;
using testing::ScratchDir;

Cells ok_row(const std::string& api) {
  return {{"API Name", api}, {"DEVICE Dtype", "torch.int64"}, {"Shape", "(2,)"}, {"二进制一致错误率", "0"}};
}

Error run_expecting_error(const ApiPrecisionCompareOptions& o) {
  try {
    run_api_precision_compare(o);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error(ErrorKind::Internal, "none");
}

std::size_t files_in(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir)) return 0;
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(PrecisionCompareBadInput, MissingFileAndWrongSuffix) {
  ScratchDir dir("missing");
  auto gpu = testing::write_details(dir.file("gpu.csv"), {ok_row("Torch.abs.0.forward.output.0")});
  auto e = run_expecting_error(testing::options_for(dir.file("nope.csv"), gpu, dir.file("out")));
  EXPECT_EQ(e.kind(), ErrorKind::Io);
  EXPECT_EQ(e.file(), dir.file("nope.csv"));
  e = run_expecting_error(testing::options_for(dir.file("npu.txt"), gpu, dir.file("out")));
  EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  EXPECT_EQ(files_in(dir.path() / "out"), 0u);
}

// The result CSV passed where the details CSV belongs (the one a user opens first): named as such, not as
// "row 1 has 3 cells but the header has 4 (a truncated or edited file)".
TEST(PrecisionCompareBadInput, ARunUtResultCsvIsNamedAsSuch) {
  ScratchDir dir("result_csv");
  const std::string result = std::string(PROBE_CONFORMANCE_DIR) +
                             "/msprobe_e2e/head/npu_accuracy_checking_result_20250101000000.csv";
  auto gpu = testing::write_details(dir.file("gpu.csv"), {ok_row("Torch.abs.0.forward.output.0")});
  auto e = run_expecting_error(testing::options_for(result, gpu, dir.file("out")));
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  EXPECT_EQ(e.file(), result);
  EXPECT_NE(
      e.message().find("a run_ut result CSV (accuracy_checking_result_*.csv); api_precision_compare reads "
                       "the details CSV written beside it (accuracy_checking_details_*.csv)"),
      std::string::npos)
      << e.what();
  EXPECT_EQ(files_in(dir.path() / "out"), 0u);
}

// A file that exists but cannot be reached (a symlink loop here; a directory without search permission
// alike) is not reported as missing: the reason is the system's.
TEST(PrecisionCompareBadInput, AnUnreachableFileSaysWhyNotNoSuchFile) {
  ScratchDir dir("unreachable");
  auto gpu = testing::write_details(dir.file("gpu.csv"), {ok_row("Torch.abs.0.forward.output.0")});
  std::filesystem::create_symlink(dir.file("b.csv"), dir.file("a.csv"));
  std::filesystem::create_symlink(dir.file("a.csv"), dir.file("b.csv"));
  auto e = run_expecting_error(testing::options_for(dir.file("a.csv"), gpu, dir.file("out")));
  EXPECT_EQ(e.kind(), ErrorKind::Io);
  EXPECT_EQ(e.file(), dir.file("a.csv"));
  EXPECT_EQ(e.message(), "cannot access: Too many levels of symbolic links") << e.what();
  EXPECT_EQ(run_expecting_error(testing::options_for(dir.file("none.csv"), gpu, dir.file("out"))).message(),
            "no such file");
}

TEST(PrecisionCompareBadInput, MissingColumnsAreListed) {
  ScratchDir dir("columns");
  CsvRow header = testing::run_ut_details_header();
  header.erase(header.begin() + 11);  // 均方根误差
  header.erase(header.begin() + 2);   // DEVICE Dtype
  auto npu = testing::write_details(dir.file("npu.csv"), {ok_row("Torch.abs.0.forward.output.0")}, header);
  auto gpu = testing::write_details(dir.file("gpu.csv"), {ok_row("Torch.abs.0.forward.output.0")});
  auto e = run_expecting_error(testing::options_for(npu, gpu, dir.file("out")));
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  EXPECT_EQ(e.file(), npu);
  EXPECT_NE(e.message().find("DEVICE Dtype,均方根误差"), std::string::npos) << e.what();
}

TEST(PrecisionCompareBadInput, ResultCsvInsteadOfDetailsGetsAHint) {
  ScratchDir dir("resultcsv");
  std::string path = dir.file("npu.csv");
  {
    CsvWriter w(path, {"API name", "Forward Test Success", "Backward Test Success", "Message"});
    w.write_row({"Torch.abs.0", "pass", " ", ""});
  }
  auto gpu = testing::write_details(dir.file("gpu.csv"), {ok_row("Torch.abs.0.forward.output.0")});
  auto e = run_expecting_error(testing::options_for(path, gpu, dir.file("out")));
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  EXPECT_NE(e.message().find("result CSV"), std::string::npos) << e.what();
}

TEST(PrecisionCompareBadInput, EmptyTruncatedAndOverlongFiles) {
  ScratchDir dir("truncated");
  auto gpu = testing::write_details(dir.file("gpu.csv"), {ok_row("Torch.abs.0.forward.output.0")});
  { std::ofstream(dir.file("empty.csv")); }
  EXPECT_EQ(run_expecting_error(testing::options_for(dir.file("empty.csv"), gpu, dir.file("out"))).kind(),
            ErrorKind::Format);
  // Cut inside a quoted Message: an unterminated quote.
  std::string text = testing::slurp(gpu);
  std::ofstream(dir.file("cut.csv"), std::ios::binary)
      << text.substr(0, text.size() - 2) << ",\"half a message";
  auto e = run_expecting_error(testing::options_for(dir.file("cut.csv"), gpu, dir.file("out")));
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  EXPECT_EQ(e.file(), dir.file("cut.csv"));
  std::ofstream(dir.file("long.csv"), std::ios::binary)
      << text << "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y\r\n";
  e = run_expecting_error(testing::options_for(dir.file("long.csv"), gpu, dir.file("out")));
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  EXPECT_NE(e.message().find("row 2"), std::string::npos) << e.what();
  EXPECT_EQ(files_in(dir.path() / "out"), 0u);
}

TEST(PrecisionCompareBadInput, DuplicateGpuRowsAbortAndLeaveNoOutput) {
  ScratchDir dir("dup");
  auto npu = testing::write_details(
      dir.file("npu.csv"), {ok_row("Torch.neg.0.forward.output.0"), ok_row("Torch.abs.0.forward.output.0")});
  auto gpu = testing::write_details(
      dir.file("gpu.csv"), {ok_row("Torch.neg.0.forward.output.0"), ok_row("Torch.abs.0.forward.output.0"),
                            ok_row("Torch.abs.0.forward.output.0")});
  auto e = run_expecting_error(testing::options_for(npu, gpu, dir.file("out")));
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  EXPECT_EQ(e.file(), gpu);
  EXPECT_EQ(e.api(), "Torch.abs.0.forward.output.0");
  EXPECT_NE(e.message().find("rows 2 and 3"), std::string::npos) << e.what();
  // The Torch.neg rows already written went to temporaries, which are gone.
  EXPECT_EQ(files_in(dir.path() / "out"), 0u);
}

// Issue 14 item 10: one policy for every writer, escape as compare does (this used to refuse the run).
TEST(PrecisionCompareBadInput, FormulaLikeApiNamesAreWrittenAsLiteralText) {
  for (const std::string name : {"=cmd.abs.0.forward.output.0", "Torch.abs.0;@x.forward.output.0",
                                 "\tTorch.abs.0.forward.output.0", "\rTorch.abs.0.forward.output.0",
                                 "\xEF\xBC\x8B"
                                 "Torch.abs.0.forward.output.0"}) {
    ScratchDir dir("inject");
    auto f = testing::write_details(dir.file("npu.csv"), {ok_row(name)});
    auto s = run_api_precision_compare(testing::options_for(f, f, dir.file("out")));
    bool found = false;
    for (const auto& path : {s.result_csv, s.details_csv})
      for (const auto& row : csv_read_file(path))
        for (const auto& cell : row) {
          // The apostrophe marks the whole cell as literal text (also the part after a ';').
          if (csv_formula_risk(cell)) {
            EXPECT_EQ(cell[0], '\'') << name << " in " << path << ": " << cell;
          }
          EXPECT_NE(cell, name) << path;
          found = found || cell == "'" + name;
        }
    EXPECT_TRUE(found) << name << " not written as literal text";
  }
}

TEST(PrecisionCompareBadInput, ExistingOutputIsNotOverwritten) {
  ScratchDir dir("exists");
  auto f = testing::write_details(dir.file("npu.csv"), {ok_row("Torch.abs.0.forward.output.0")});
  auto o = testing::options_for(f, f, dir.file("out"));
  auto first = run_api_precision_compare(o);
  std::string before = testing::slurp(first.result_csv);
  EXPECT_EQ(run_expecting_error(o).kind(), ErrorKind::InvalidArgument);
  EXPECT_EQ(testing::slurp(first.result_csv), before);
  EXPECT_EQ(files_in(dir.path() / "out"), 2u);
}

// Without --timestamp, runs in the same second into one directory (a script looping over pairs) each get
// their own files, as run_ut's and compare's do; only a given --timestamp that is taken is refused.
TEST(PrecisionCompareBadInput, RunsInTheSameSecondGetTheirOwnFiles) {
  ScratchDir dir("same_second");
  auto f = testing::write_details(dir.file("npu.csv"), {ok_row("Torch.abs.0.forward.output.0")});
  auto o = testing::options_for(f, f, dir.file("out"));
  o.timestamp.clear();
  auto first = run_api_precision_compare(o);
  auto second = run_api_precision_compare(o);
  auto third = run_api_precision_compare(o);
  EXPECT_NE(first.result_csv, second.result_csv);
  EXPECT_NE(second.result_csv, third.result_csv);
  EXPECT_NE(first.details_csv, second.details_csv);
  EXPECT_EQ(testing::slurp(first.result_csv), testing::slurp(third.result_csv));
  EXPECT_EQ(files_in(dir.path() / "out"), 6u);
}

TEST(PrecisionCompareBadInput, UnknownProfileBadTimestampAndBrokenThresholds) {
  ScratchDir dir("options");
  auto f = testing::write_details(dir.file("npu.csv"), {ok_row("Torch.abs.0.forward.output.0")});
  auto o = testing::options_for(f, f, dir.file("out"));
  // A profile the thresholds file does not define (the CLI refuses other spellings before this).
  std::ofstream(dir.file("msprobe_only.json")) << R"({"common": {}, "profiles": {"msprobe": {}}})";
  o.thresholds_file = dir.file("msprobe_only.json");
  o.profile = Profile::Probe;
  EXPECT_EQ(run_expecting_error(o).kind(), ErrorKind::InvalidArgument);
  o = testing::options_for(f, f, dir.file("out"));
  o.timestamp = "2025";
  EXPECT_EQ(run_expecting_error(o).kind(), ErrorKind::InvalidArgument);
  o = testing::options_for(f, f, dir.file("out"));
  std::ofstream(dir.file("t.json")) << R"({"common": {"zero_shape": 3}, "profiles": {"msprobe": {}}})";
  o.thresholds_file = dir.file("t.json");
  auto e = run_expecting_error(o);
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  EXPECT_EQ(e.file(), dir.file("t.json"));
}

// Issue 14 item 5: a row shorter than the header (10 cells under 23) used to be padded with NaN like pandas
// does and gave a column of errors with exit 0.
TEST(PrecisionCompareBadInput, RaggedRowIsAFormatErrorNamingFileAndRow) {
  ScratchDir dir("ragged");
  auto gpu = testing::write_details(
      dir.file("gpu.csv"), {ok_row("Torch.abs.0.forward.output.0"), ok_row("Torch.abs.1.forward.output.0")});
  const std::string npu = dir.file("npu.csv");
  {
    CsvWriter w(npu, testing::run_ut_details_header());
    CsvRow full(testing::run_ut_details_header().size(), " ");
    full[0] = "Torch.abs.0.forward.output.0";
    w.write_row(full);
    CsvRow shorter(full.begin(), full.begin() + 10);
    shorter[0] = "Torch.abs.1.forward.output.0";
    w.write_row(shorter);
  }
  auto e = run_expecting_error(testing::options_for(npu, gpu, dir.file("out")));
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  EXPECT_EQ(e.file(), npu);
  EXPECT_NE(e.message().find("row 2 has 10 cells but the header has 23"), std::string::npos) << e.what();
  EXPECT_EQ(files_in(dir.path() / "out"), 0u);
}

}  // namespace
}  // namespace probe
