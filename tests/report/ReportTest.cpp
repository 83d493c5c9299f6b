// The report's embedded data against what Python's csv module reads from the same CSVs
// (tests/data/report/make_report_fixtures.py), its size at 10k APIs, the terminal table and `probe report`.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "common/RunCli.h"
#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/csv.h"
#include "probe/error.h"
#include "probe/report.h"
#include "report/ReportJson.h"

namespace {

using probe::testing::run_cli;
using probe::testing::ScratchDir;
using probe::testing::slurp;

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/report/";
const std::string kConf = std::string(PROBE_CONFORMANCE_DIR) + "/msprobe_e2e/head/";

rapidjson::Document parse(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  EXPECT_FALSE(d.HasParseError()) << "offset " << d.GetErrorOffset();
  return d;
}

// Columns of one embedded output row, by the name the page's "columns" gives them.
int col(const rapidjson::Value& doc, const char* name) {
  const auto& cols = doc["columns"].GetArray();
  for (rapidjson::SizeType i = 0; i < cols.Size(); ++i)
    if (std::string(cols[i].GetString()) == name) return static_cast<int>(i);
  ADD_FAILURE() << "no column " << name;
  return 0;
}

void expect_number(const rapidjson::Value& expected, const rapidjson::Value& actual,
                   const std::string& what) {
  if (expected.IsNull()) {
    EXPECT_TRUE(actual.IsNull()) << what;
    return;
  }
  ASSERT_TRUE(actual.IsNumber()) << what;
  const double e = expected.GetDouble(), a = actual.GetDouble();
  EXPECT_NEAR(a, e, 1e-12 * std::abs(e)) << what;
}

std::string text(const rapidjson::Value& v) { return v.IsString() ? v.GetString() : "<not a string>"; }

void expect_counts(const rapidjson::Value& e, const rapidjson::Value& a, const std::string& what) {
  for (const char* s : {"pass", "Warning", "error", "SKIP"})
    EXPECT_EQ(a[s].GetInt(), e[s].GetInt()) << what << " " << s;
}

// Compares the page's data with the generator's: summary, every output's cells and parsed criterion,
// the flagged order and the SKIP groups.
void expect_matches(const std::string& result, const std::string& details, const std::string& expected_file) {
  const auto exp = parse(slurp(expected_file));
  const std::string json = probe::run_ut_report_json(probe::read_run_ut_report(result, details));
  auto got = parse(json);
  // Decode the interned cells as the page's script does.
  for (const auto& c : got["interned"].GetArray()) {
    const int k = col(got, c.GetString());
    for (auto& row : got["outputs"].GetArray()) {
      const auto& s = got["strings"][row[k].GetUint()];
      row[k].SetString(s.GetString(), s.GetStringLength(), got.GetAllocator());
    }
  }
  const auto &es = exp["summary"], &gs = got["summary"];
  EXPECT_EQ(gs["apis"].GetInt(), es["apis"].GetInt());
  for (const char* part : {"status", "forward", "backward"}) expect_counts(es[part], gs[part], part);
  ASSERT_EQ(gs["dtypes"].Size(), es["dtypes"].Size());
  for (rapidjson::SizeType i = 0; i < es["dtypes"].Size(); ++i) {
    EXPECT_EQ(text(gs["dtypes"][i][0]), text(es["dtypes"][i][0]));
    expect_counts(es["dtypes"][i][1], gs["dtypes"][i][1], text(es["dtypes"][i][0]));
  }
  const auto& eo = exp["outputs"];
  const auto& go = got["outputs"];
  ASSERT_EQ(go.Size(), eo.Size());
  for (rapidjson::SizeType i = 0; i < eo.Size(); ++i) {
    const auto& e = eo[i];
    const auto& g = go[i];
    const std::string name = text(e["name"]);
    for (const char* c : {"name", "api", "direction", "dtype", "status"})
      EXPECT_EQ(text(g[col(got, c)]), text(e[c])) << name << " " << c;
    for (const char* c : {"cosine", "max_abs", "max_rel"})
      expect_number(e[c], g[col(got, c)], name + " " + c);
    for (const char* c : {"ratio", "value", "threshold"}) {
      if (e.HasMember(c)) {
        expect_number(e[c], g[col(got, c)], name + " " + c);
      }
    }
    for (const char* c : {"worst_index", "worst_bench", "worst_device"}) {
      if (e.HasMember(c)) {
        EXPECT_EQ(text(g[col(got, c)]), text(e[c])) << name << " " << c;
      }
    }
    // Passed rows leave their Message out (size); the others carry it whole.
    EXPECT_EQ(text(g[col(got, "message")]), text(e["status"]) == "pass" ? "" : text(e["message"])) << name;
  }
  ASSERT_EQ(got["flagged"].Size(), exp["flagged"].Size());
  for (rapidjson::SizeType i = 0; i < exp["flagged"].Size(); ++i)
    EXPECT_EQ(got["flagged"][i].GetInt(), exp["flagged"][i].GetInt()) << "flagged position " << i;
  ASSERT_EQ(got["skips"].Size(), exp["skips"].Size());
  for (rapidjson::SizeType i = 0; i < exp["skips"].Size(); ++i) {
    EXPECT_EQ(text(got["skips"][i]["reason"]), text(exp["skips"][i]["reason"]));
    EXPECT_EQ(got["skips"][i]["count"].GetInt(), exp["skips"][i]["count"].GetInt());
    ASSERT_EQ(got["skips"][i]["apis"].Size(), exp["skips"][i]["apis"].Size());
    for (rapidjson::SizeType k = 0; k < exp["skips"][i]["apis"].Size(); ++k)
      EXPECT_EQ(text(got["skips"][i]["apis"][k]), text(exp["skips"][i]["apis"][k]));
  }
}

TEST(ReportData, SyntheticRunUtCsvsMatchPythonsReading) {
  expect_matches(kData + "accuracy_checking_result_20260101000000.csv",
                 kData + "accuracy_checking_details_20260101000000.csv", kData + "expected_synthetic.json");
}

TEST(ReportData, MsprobesOwnRunUtCsvsMatchPythonsReading) {
  expect_matches(kConf + "npu_accuracy_checking_result_20250101000000.csv",
                 kConf + "npu_accuracy_checking_details_20250101000000.csv",
                 kData + "expected_msprobe_head.json");
}

TEST(ReportData, MissingColumnNamesFileAndColumn) {
  ScratchDir dir("report-bad");
  probe::CsvWriter(dir.file("r.csv"), {"API name", "Forward Test Success", "Message"})
      .write_row({"A.b.0", "pass", ""});
  try {
    probe::read_run_ut_report(dir.file("r.csv"), kData + "accuracy_checking_details_20260101000000.csv");
    FAIL() << "expected probe::Error";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::Format);
    EXPECT_NE(std::string(e.what()).find("Backward Test Success"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("r.csv"), std::string::npos) << e.what();
  }
}

TEST(ReportHtml, TextFromTheCsvCannotCloseItsScript) {
  ScratchDir dir("report-esc");
  const std::string evil = "Functional.x</script><script>alert(1)</script>.0";
  probe::CsvWriter(dir.file("r.csv"),
                   {"API name", "Forward Test Success", "Backward Test Success", "Message"})
      .write_row({evil, "error", " ", "</script>&"});
  probe::CsvWriter d(dir.file("d.csv"), {"API Name", "Bench Dtype", "DEVICE Dtype", "Shape", "余弦相似度",
                                         "最大绝对误差", "相对误差最大值", "Status", "Message"});
  d.write_row(
      {evil + ".forward.output.0", "torch.float64", "torch.float16", "(1,)", "1", "2", "3", "error", "<b>"});
  const std::string html =
      probe::run_ut_report_html(probe::read_run_ut_report(dir.file("r.csv"), dir.file("d.csv")));
  // Exactly the page's own three script elements close; the name reaches the page only escaped.
  std::size_t closes = 0;
  for (auto p = html.find("</script>"); p != std::string::npos; p = html.find("</script>", p + 1)) ++closes;
  EXPECT_EQ(closes, 3u);
  EXPECT_EQ(html.find("<script><script>"), std::string::npos);
  EXPECT_EQ(probe::report::json_string("</"), "\"\\u003c/\"");
}

// 10k APIs, each with a forward and a backward output whose Messages are as long as run_ut's error-bound
// messages; the page must stay under 5 MB.
TEST(ReportHtml, TenThousandApisStayUnderFiveMegabytes) {
  ScratchDir dir("report-size");
  {
    probe::CsvWriter r(dir.file("r.csv"),
                       {"API name", "Forward Test Success", "Backward Test Success", "Message"});
    probe::CsvWriter d(dir.file("d.csv"), {"API Name", "Bench Dtype", "DEVICE Dtype", "Shape", "余弦相似度",
                                           "最大绝对误差", "相对误差最大值", "Status", "Message"});
    for (int i = 0; i < 10000; ++i) {
      const std::string api = "Functional.linear." + std::to_string(i);
      const bool bad = i % 50 == 7;
      r.write_row({api, bad ? "error" : "pass", "pass", ""});
      for (const char* dir_name : {"forward", "backward"}) {
        const std::string msg =
            bad && std::string(dir_name) == "forward"
                ? "error bound (D14, gemm family, K=4096, bfloat16): 12 of 65536 elements beyond their "
                  "bound; "
                  "worst at [3, 17, 250]: device 0.251953125, bench 0.00217423984, error 0.25 > bound "
                  "8.5e-06 "
                  "(2.94e+04x)"
                : "error bound (D14, gemm family, K=4096, bfloat16): largest error/bound 0." +
                      std::to_string(i % 997);
        d.write_row({api + "." + dir_name + ".output.0", "torch.float64", "torch.bfloat16", "(4, 128, 4096)",
                     "0.99999873955372", "0.0076429844", "0.003609384",
                     bad && std::string(dir_name) == "forward" ? "error" : "pass", msg});
      }
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::string html =
      probe::run_ut_report_html(probe::read_run_ut_report(dir.file("r.csv"), dir.file("d.csv")));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("report of 10000 APIs (20000 outputs): %zu bytes, %.3f s\n", html.size(), seconds);
  EXPECT_LT(html.size(), 5u * 1000 * 1000);
  EXPECT_GT(html.size(), 20000u * 50);  // every output is in it
}

TEST(WorstTable, FitsTheWidthAndListsTheWorstFirst) {
  const auto r = probe::read_run_ut_report(kData + "accuracy_checking_result_20260101000000.csv",
                                           kData + "accuracy_checking_details_20260101000000.csv");
  for (int width : {40, 60, 80, 200}) {
    const std::string t = probe::worst_outputs_table(r, 2, width);
    std::istringstream lines(t);
    std::vector<std::string> l;
    for (std::string s; std::getline(lines, s);) {
      EXPECT_LE(s.size(), static_cast<std::size_t>(width)) << s;
      l.push_back(s);
    }
    ASSERT_EQ(l.size(), 4u) << t;  // title, header, two rows
    EXPECT_EQ(l[0], "worst flagged outputs (2 of 3):");
    EXPECT_EQ(l[2].substr(0, 8), "Function") << t;
    if (width >= 80) {
      EXPECT_EQ(l[2].rfind("Functional.linear.0 ", 0), 0u) << t;
      EXPECT_EQ(l[3].rfind("Functional.gelu.0 ", 0), 0u) << t;
    }
  }
}

// The headers name the numbers: the worst element's error against its bound where a bound rule judged every
// row shown, the criterion's value against its threshold where run_ut's rule did, both marked per row when
// the table mixes them. The fixture's first two flagged outputs are D14's (gelu, linear), the third
// (Torch.matmul.0) run_ut's rule.
TEST(WorstTable, HeadersSayWhatTheNumbersAre) {
  const auto r = probe::read_run_ut_report(kData + "accuracy_checking_result_20260101000000.csv",
                                           kData + "accuracy_checking_details_20260101000000.csv");
  const auto lines_of = [](const std::string& t) {
    std::istringstream in(t);
    std::vector<std::string> l;
    for (std::string s; std::getline(in, s);) l.push_back(s);
    return l;
  };
  const auto bound = lines_of(probe::worst_outputs_table(r, 2, 200));
  ASSERT_EQ(bound.size(), 4u);
  EXPECT_TRUE(bound[1].ends_with(" worst err bound")) << bound[1];
  EXPECT_EQ(bound[1].find("threshold"), std::string::npos) << bound[1];
  const auto mixed = lines_of(probe::worst_outputs_table(r, 3, 200));
  ASSERT_EQ(mixed.size(), 5u);
  EXPECT_TRUE(mixed[1].ends_with(" value     bound|thr")) << mixed[1];
  EXPECT_NE(mixed[2].find(" b "), std::string::npos) << mixed[2];
  EXPECT_EQ(mixed[4].rfind("Torch.matmul.0 ", 0), 0u) << mixed[4];
  EXPECT_NE(mixed[4].find(" t "), std::string::npos) << mixed[4];
  for (int width : {40, 60, 80})
    for (const std::string& l : lines_of(probe::worst_outputs_table(r, 3, width)))
      EXPECT_LE(l.size(), static_cast<std::size_t>(width)) << l;
  // msprobe's own run_ut CSVs: run_ut's rule throughout.
  const auto m = probe::read_run_ut_report(kConf + "npu_accuracy_checking_result_20250101000000.csv",
                                           kConf + "npu_accuracy_checking_details_20250101000000.csv");
  const auto old = lines_of(probe::worst_outputs_table(m, 5, 200));
  ASSERT_GE(old.size(), 3u);
  EXPECT_TRUE(old[1].ends_with(" value     threshold")) << old[1];
}

TEST(ReportCli, WritesOnePageForADirectoryAndRefusesAnEmptyOne) {
  ScratchDir out("report-cli");
  const auto ok = run_cli("report '" + kData + "' -o '" + out.path().string() + "'");
  ASSERT_EQ(ok.code, 0) << ok.out;
  const auto p = ok.out.find("report: ");
  ASSERT_NE(p, std::string::npos) << ok.out;
  const std::string path = ok.out.substr(p + 8, ok.out.find('\n', p) - p - 8);
  EXPECT_TRUE(path.ends_with(".html")) << path;
  const std::string html = slurp(path);
  EXPECT_NE(html.find("Functional.linear.0.forward.output.0"), std::string::npos);
  // Self-contained: nothing is fetched from anywhere.
  for (const char* ref : {"src=\"http", "href=\"http", "src=\"//", "@import", "url("})
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
  const auto empty = run_cli("report '" + out.path().string() + "/none'");
  EXPECT_EQ(empty.code, 3) << empty.out;
  const auto help = run_cli("report --help");
  EXPECT_EQ(help.code, 0);
  for (const char* flag : {"--result", "--details", "--out_path", "DIR"})
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
}

}  // namespace

namespace {

// The compare page's data against the generator's numpy values: every row's metrics, the statistics'
// largest relative error, which rows differ by compare -da's rule and the first of them.
void expect_compare(const std::string& csv, const std::string& expected_file) {
  const auto exp = parse(slurp(expected_file));
  const probe::CompareReport r = probe::read_compare_report(csv);
  ASSERT_EQ(r.rows.size(), exp["rows"].Size());
  EXPECT_EQ(r.first_diff, exp["first_diff"].GetInt64());
  const auto num = [](const rapidjson::Value& v) {
    return v.IsNull() ? std::numeric_limits<double>::quiet_NaN() : v.GetDouble();
  };
  for (rapidjson::SizeType i = 0; i < exp["rows"].Size(); ++i) {
    const auto& e = exp["rows"][i];
    const probe::CompareReportRow& g = r.rows[i];
    EXPECT_EQ(g.name, text(e["name"]));
    EXPECT_EQ(g.differs, e["differs"].GetBool()) << g.name;
    const std::pair<const char*, double> fields[] = {
        {"cosine", g.cosine}, {"max_abs", g.max_abs}, {"max_rel", g.max_rel}, {"stat_rel", g.stat_rel}};
    for (const auto& [field, got] : fields) {
      const double want = num(e[field]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << g.name << " " << field;
      } else {
        EXPECT_NEAR(got, want, 1e-12 * std::abs(want)) << g.name << " " << field;
      }
    }
  }
}

TEST(CompareReport, RealDataRowsAndFirstDifferentEntryMatchNumpy) {
  expect_compare(kData + "compare_real/compare_result_20260101000000.csv",
                 kData + "expected_compare_real.json");
}

TEST(CompareReport, StatisticsRowsAndFirstDifferentEntryMatchNumpy) {
  expect_compare(kData + "compare_stats/compare_result_20260101000000.csv",
                 kData + "expected_compare_stats.json");
}

TEST(CompareReport, PageEmbedsTheRowsAndMarksTheFirstDifferentEntry) {
  const auto r = probe::read_compare_report(kData + "compare_real/compare_result_20260101000000.csv");
  const std::string html = probe::compare_report_html(r);
  EXPECT_NE(html.find("\"first_diff\":3"), std::string::npos);
  for (const char* id : {"id=\"plot-cosine\"", "id=\"plot-maxabs\"", "id=\"plot-maxrel\"", "class=\"mark\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
}

}  // namespace

namespace {

// MindSpore's layout (API Name, Tested Dtype, Cosine, MaxAbsErr, MaxRelativeErr) and its absolute rule:
// run_ut prints the worst outputs with the value against the message's threshold and writes the page.
TEST(ReportCli, MindSporeRunUtPrintsItsWorstOutputsAndWritesThePage) {
  ScratchDir out("report-ms");
  const auto r = run_cli("-f mindspore run_ut -api_info '" + std::string(PROBE_TEST_DATA_DIR) +
                         "/run_ut/ms_fp16_stats/dump.json' -o '" + out.path().string() + "' -q --report");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("no table"), std::string::npos) << r.out;
  const auto table = r.out.find("worst flagged outputs");
  ASSERT_NE(table, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0.0001\n", table), std::string::npos) << r.out;  // the threshold of the message
  EXPECT_NE(r.out.find("report: "), std::string::npos) << r.out;
}

}  // namespace

namespace {

// The generator's rows: the far-off input (1.5) and Torch.mul.0's output (1.5) before Tensor.add.0's (0.8).
TEST(WorstTable, CompareRowsFitTheWidthLargestRelativeErrorFirst) {
  const auto r = probe::read_compare_report(kData + "compare_real/compare_result_20260101000000.csv");
  for (int width : {40, 80, 120}) {
    const std::string t = probe::worst_compare_table(r, 5, width);
    std::istringstream lines(t);
    std::vector<std::string> l;
    for (std::string s; std::getline(lines, s);) {
      EXPECT_LE(s.size(), static_cast<std::size_t>(width)) << s;
      l.push_back(s);
    }
    ASSERT_EQ(l.size(), 5u) << t;
    EXPECT_EQ(l[0], "worst rows (3 of 3 flagged):");
    if (width >= 80) {
      EXPECT_EQ(l[2].rfind("Functional.linear.0.forward.input.0 ", 0), 0u) << t;
      EXPECT_EQ(l[3].rfind("Torch.mul.0.forward.output.0 ", 0), 0u) << t;
      EXPECT_NE(l[3].find(" differs "), std::string::npos) << t;
      EXPECT_EQ(l[4].rfind("Tensor.add.0.forward.output.0 ", 0), 0u) << t;
    }
  }
}

}  // namespace

namespace {

TEST(PrecisionReport, MsprobesOwnCsvsMatchPythonsReading) {
  const auto exp = parse(slurp(kData + "expected_precision_head.json"));
  const auto got = parse(probe::precision_report_json(
      probe::read_precision_report(kConf + "api_precision_compare_result_20250101000000.csv",
                                   kConf + "api_precision_compare_details_20250101000000.csv")));
  EXPECT_EQ(got["summary"]["apis"].GetInt(), exp["apis"].GetInt());
  expect_counts(exp["forward"], got["summary"]["forward"], "forward");
  expect_counts(exp["backward"], got["summary"]["backward"], "backward");
  const auto& rows = got["rows"];
  ASSERT_EQ(rows.Size(), exp["rows"].Size());
  for (rapidjson::SizeType i = 0; i < rows.Size(); ++i) {
    const auto& e = exp["rows"][i];
    const std::string name = text(e["name"]);
    EXPECT_EQ(text(rows[i][col(got, "name")]), name);
    EXPECT_EQ(text(rows[i][col(got, "result")]), text(e["result"])) << name;
    EXPECT_EQ(text(rows[i][col(got, "worst_metric")]), text(e["worst_metric"])) << name;
    expect_number(e["worst_ratio"], rows[i][col(got, "worst_ratio")], name);
  }
  ASSERT_EQ(got["flagged"].Size(), exp["flagged"].Size());
  for (rapidjson::SizeType i = 0; i < exp["flagged"].Size(); ++i)
    EXPECT_EQ(got["flagged"][i].GetInt(), exp["flagged"][i].GetInt()) << "flagged position " << i;
}

}  // namespace

namespace {

// run_ut's progress bar on a terminal (a pseudo-terminal from util-linux's `script`, whose size is unset, so
// $COLUMNS gives the width): every redraw fits the width; a wide terminal gets the bar, a narrow one only
// text.
TEST(ProgressBar, EveryRedrawFitsTheTerminalWidth) {
  for (int width : {40, 60, 100}) {
    ScratchDir out("report-pty");
    const std::string cmd = "COLUMNS=" + std::to_string(width) + " script -qec \"'" +
                            std::string(PROBE_CLI_PATH) + "' run_ut -api_info '" +
                            std::string(PROBE_SOURCE_DIR) + "/examples/dump/dump.json' -o '" +
                            out.path().string() + "'\" /dev/null 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string text;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
    ASSERT_EQ(::pclose(p), 0) << text;
    std::size_t redraws = 0;
    bool bar = false;
    for (std::size_t b = 0; b < text.size();) {
      const auto e = text.find_first_of("\r\n", b);
      std::string seg = text.substr(b, e == std::string::npos ? std::string::npos : e - b);
      b = e == std::string::npos ? text.size() : e + 1;
      if (seg.find(" APIs ") == std::string::npos || seg.find("API/s") == std::string::npos) continue;
      if (const auto k = seg.find("\x1b[K"); k != std::string::npos) seg.erase(k);
      ++redraws;
      EXPECT_LT(seg.size(), static_cast<std::size_t>(width)) << width << ": " << seg;
      bar = bar || seg.starts_with("[");
    }
    EXPECT_GT(redraws, 0u) << text;
    EXPECT_EQ(bar, width > 40) << width << ": " << text;
  }
}

}  // namespace

namespace {

// The online server's directory: one result/details pair per rank with the run's stamp, and an older run.
TEST(ReportCli, OnePagePerRankOfTheNewestRun) {
  ScratchDir dir("report-ranks");
  const auto copy = [&](const std::string& kind, const std::string& to) {
    std::filesystem::copy_file(kData + "accuracy_checking_" + kind + "_20260101000000.csv", dir.file(to));
  };
  for (const char* rank : {"_rank0", "_rank1"}) {
    copy("result", std::string("accuracy_checking_result_20260102000000") + rank + ".csv");
    copy("details", std::string("accuracy_checking_details_20260102000000") + rank + ".csv");
  }
  copy("result", "accuracy_checking_result_20260101000000_rank2.csv");
  copy("details", "accuracy_checking_details_20260101000000_rank2.csv");
  const auto pages = probe::write_report(dir.path().string());
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_TRUE(std::filesystem::path(pages[0]).filename().string().starts_with("report_rank0_")) << pages[0];
  EXPECT_TRUE(std::filesystem::path(pages[1]).filename().string().starts_with("report_rank1_")) << pages[1];
  EXPECT_NE(slurp(pages[1]).find("accuracy_checking_result_20260102000000_rank1.csv"), std::string::npos);
}

}  // namespace
