// The report of the example dump rendered by headless Chromium (Debian's `chromium`, installed by
// tools/bootstrap.sh test): the page loads without console errors, its script ran, the flagged API is
// listed first and the plots exist. The screenshot is kept under the build tree (tests/report_browser/).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/RunCli.h"
#include "common/Slurp.h"

namespace {

namespace fs = std::filesystem;
using probe::testing::run_cli;
using probe::testing::slurp;

const fs::path kOut = fs::path(PROBE_BUILD_DIR) / "tests" / "report_browser";
constexpr const char* kChromium = "/usr/bin/chromium";

struct Rendered {
  int code = -1;
  std::string dom, console;  // the DOM after the scripts ran; Chromium's CONSOLE log lines
};

// `chromium --headless --dump-dom` of a local file, its console messages read from its log on stderr.
Rendered render(const fs::path& page, const std::string& tag) {
  const fs::path dom = kOut / (tag + ".dom.html"), log = kOut / (tag + ".log");
  const std::string cmd = std::string("timeout 120 ") + kChromium +
                          " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir='" +
                          (kOut / ("profile-" + tag)).string() +
                          "' --enable-logging=stderr --v=0 --virtual-time-budget=10000 --dump-dom 'file://" +
                          page.string() + "' > '" + dom.string() + "' 2> '" + log.string() + "'";
  Rendered r;
  r.code = std::system(cmd.c_str());
  r.dom = slurp(dom);
  std::istringstream lines(slurp(log));
  for (std::string l; std::getline(lines, l);)
    if (l.find(":CONSOLE") != std::string::npos) r.console += l + "\n";
  return r;
}

class Browser : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kChromium))
        << kChromium << " is missing: install Debian's chromium (bash tools/bootstrap.sh test)";
    fs::create_directories(kOut);
  }
};

// The check can fail: a page that logs an error and throws is caught by the same reading.
TEST_F(Browser, ConsoleErrorsAndScriptFailuresAreSeen) {
  const fs::path bad = kOut / "bad.html";
  std::ofstream(bad)
      << "<!DOCTYPE html><html><body><script>console.error('boom');"
         "window.addEventListener('error',function(e){document.body.setAttribute('data-jserror',"
         "e.message);});</script><script>undefinedFunction();</script></body></html>";
  const Rendered r = render(bad, "bad");
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.console.find("boom"), std::string::npos) << r.console;
  EXPECT_NE(r.dom.find("data-jserror=\""), std::string::npos) << r.dom;
}

TEST_F(Browser, ExampleDumpReportRendersWithTheFlaggedApiFirstAndItsPlots) {
  const fs::path run = kOut / "run";
  fs::remove_all(run);
  const auto cli = run_cli("run_ut -api_info '" + std::string(PROBE_SOURCE_DIR) +
                           "/examples/dump/dump.json' -o '" + run.string() + "' -q --report");
  ASSERT_EQ(cli.code, 0) << cli.out;
  const auto at = cli.out.find("report: ");
  ASSERT_NE(at, std::string::npos) << cli.out;
  // The summary line stays the last line before the paths; the report's path comes with them.
  EXPECT_NE(cli.out.find("apis 18 pass 17 warning 0 error 1 skip 0"), std::string::npos) << cli.out;
  EXPECT_LT(cli.out.find("worst flagged outputs"), cli.out.find("apis 18")) << cli.out;
  const fs::path page = fs::absolute(cli.out.substr(at + 8, cli.out.find('\n', at) - at - 8));
  ASSERT_TRUE(fs::exists(page)) << page;

  const Rendered r = render(page, "example");
  ASSERT_EQ(r.code, 0) << "chromium failed; see " << (kOut / "example.log");
  EXPECT_TRUE(r.console.empty()) << r.console;
  EXPECT_NE(r.dom.find("data-ready=\"1\""), std::string::npos) << "the page's script did not finish";
  EXPECT_EQ(r.dom.find("data-jserror=\""), std::string::npos);
  // Only Functional.gelu.0's forward output is error in the example dump: it is the first flagged row.
  const auto first = r.dom.find("class=\"flagged-row\"");
  ASSERT_NE(first, std::string::npos) << "no flagged row";
  const std::string row = r.dom.substr(first, r.dom.find("</tr>", first) - first);
  EXPECT_NE(row.find("<td>Functional.gelu.0</td>"), std::string::npos) << row;
  EXPECT_NE(row.find(">error<"), std::string::npos) << row;
  // Both plots, with the error output drawn in the error colour; the table holds a page of rows.
  for (const char* id : {"id=\"plot-ratio\"", "id=\"plot-maxrel\""}) {
    const auto p = r.dom.find(id);
    ASSERT_NE(p, std::string::npos) << id;
    EXPECT_NE(r.dom.substr(p, r.dom.find("</svg>", p) - p).find("class=\"pt err\""), std::string::npos) << id;
  }
  const auto table = r.dom.find("id=\"all-table\"");
  ASSERT_NE(table, std::string::npos);
  const std::string rows = r.dom.substr(table, r.dom.find("</table>", table) - table);
  std::size_t n = 0;
  for (auto p = rows.find("<tr"); p != std::string::npos; p = rows.find("<tr", p + 1)) ++n;
  EXPECT_GT(n, 30u) << "the table of every output is not filled";
  // --report asked run_ut for the flagged output's element errors: one histogram, bars beyond the bound red.
  const auto hist = r.dom.find("id=\"hist-0\"");
  ASSERT_NE(hist, std::string::npos) << "no histogram of the flagged output";
  EXPECT_NE(r.dom.substr(hist, r.dom.find("</svg>", hist) - hist).find("class=\"bar beyond\""),
            std::string::npos);
  EXPECT_EQ(r.dom.find("id=\"hist-1\""), std::string::npos);

  const fs::path png = kOut / "report.png";
  fs::remove(png);
  const std::string shot =
      std::string("timeout 120 ") + kChromium +
      " --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --user-data-dir='" +
      (kOut / "profile-shot-example").string() + "' --window-size=1280,2000 --screenshot='" + png.string() +
      "' 'file://" + page.string() + "' > /dev/null 2>&1";
  ASSERT_EQ(std::system(shot.c_str()), 0);
  const std::string bytes = slurp(png);
  EXPECT_GT(bytes.size(), 10000u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_F(Browser, ComparePageMarksTheFirstDifferentEntryAndShowsItsStack) {
  const fs::path out = kOut / "compare";
  fs::remove_all(out);
  const auto cli =
      run_cli("report --compare '" + std::string(PROBE_TEST_DATA_DIR) +
              "/report/compare_real/compare_result_20260101000000.csv' -o '" + out.string() + "'");
  ASSERT_EQ(cli.code, 0) << cli.out;
  const auto at = cli.out.find("report: ");
  ASSERT_NE(at, std::string::npos) << cli.out;
  const fs::path page = fs::absolute(cli.out.substr(at + 8, cli.out.find('\n', at) - at - 8));
  EXPECT_TRUE(page.filename().string().starts_with("report_compare_")) << page;
  const Rendered r = render(page, "compare");
  ASSERT_EQ(r.code, 0) << "chromium failed; see " << (kOut / "compare.log");
  EXPECT_TRUE(r.console.empty()) << r.console;
  EXPECT_NE(r.dom.find("data-ready=\"1\""), std::string::npos) << "the page's script did not finish";
  EXPECT_EQ(r.dom.find("data-jserror=\""), std::string::npos);
  // The inputs far off come first but never make an entry different: Torch.mul.0's output does.
  EXPECT_NE(r.dom.find("id=\"first-diff-name\">Torch.mul.0.forward.output.0<"), std::string::npos);
  // The first different row is selected: its statistics and the stack its entry recorded.
  const auto sel = r.dom.find("id=\"selected\"");
  ASSERT_NE(sel, std::string::npos);
  EXPECT_NE(r.dom.find("File model.py, line 1", sel), std::string::npos);
  for (const char* id : {"id=\"plot-cosine\"", "id=\"plot-maxabs\"", "id=\"plot-maxrel\"", "class=\"mark\""})
    EXPECT_NE(r.dom.find(id), std::string::npos) << id;
}

// A grad_compare output directory (tests/data/report/make_grad_report_fixtures.py): rank 0's first suspicious
// step is 10 (fc2.weight drops by 0.05), rank 2's its first step (below 0.97).
TEST_F(Browser, GradPageMarksTheFirstSuspiciousStep) {
  const fs::path out = kOut / "grad";
  fs::remove_all(out);
  const auto cli =
      run_cli("report '" + std::string(PROBE_TEST_DATA_DIR) + "/report/grad_out' -o '" + out.string() + "'");
  ASSERT_EQ(cli.code, 0) << cli.out;
  const auto at = cli.out.find("report: ");
  ASSERT_NE(at, std::string::npos) << cli.out;
  const fs::path page = fs::absolute(cli.out.substr(at + 8, cli.out.find('\n', at) - at - 8));
  EXPECT_TRUE(page.filename().string().starts_with("report_grad_")) << page;
  const Rendered r = render(page, "grad");
  ASSERT_EQ(r.code, 0) << "chromium failed; see " << (kOut / "grad.log");
  EXPECT_TRUE(r.console.empty()) << r.console;
  EXPECT_NE(r.dom.find("data-ready=\"1\""), std::string::npos) << "the page's script did not finish";
  EXPECT_EQ(r.dom.find("data-jserror=\""), std::string::npos);
  EXPECT_NE(r.dom.find("id=\"grad-first-0\">first suspicious step: <b>10</b>"), std::string::npos);
  EXPECT_NE(r.dom.find("id=\"grad-first-1\">first suspicious step: <b>1</b>"), std::string::npos);
  for (const char* id :
       {"id=\"grad-plot-0\"", "id=\"grad-mark-0\"", "id=\"grad-plot-1\"", "id=\"grad-mark-1\""})
    EXPECT_NE(r.dom.find(id), std::string::npos) << id;
  // Both ranks' tables are filled by the script: 5 and 2 rows under their step headers.
  const auto table = r.dom.find("id=\"grad-table-0\"");
  ASSERT_NE(table, std::string::npos);
  const std::string t0 = r.dom.substr(table, r.dom.find("</table>", table) - table);
  std::size_t n = 0;
  for (auto p = t0.find("<tr"); p != std::string::npos; p = t0.find("<tr", p + 1)) ++n;
  EXPECT_EQ(n, 6u) << t0;
  EXPECT_NE(t0.find("s-error"), std::string::npos) << "the drop is not highlighted";

  const fs::path png = kOut / "grad.png";
  fs::remove(png);
  const std::string shot =
      std::string("timeout 120 ") + kChromium +
      " --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --user-data-dir='" +
      (kOut / "profile-shot-grad").string() + "' --window-size=1280,1400 --screenshot='" + png.string() +
      "' 'file://" + page.string() + "' > /dev/null 2>&1";
  ASSERT_EQ(std::system(shot.c_str()), 0);
  const std::string bytes = slurp(png);
  EXPECT_GT(bytes.size(), 10000u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

// msprobe's own api_precision_compare CSVs: the page of a directory holding them.
TEST_F(Browser, PrecisionPageListsTheWorstErrorFirst) {
  const fs::path out = kOut / "precision";
  fs::remove_all(out);
  const auto cli = run_cli("report '" + std::string(PROBE_CONFORMANCE_DIR) + "/msprobe_e2e/head' -o '" +
                           out.string() + "'");
  ASSERT_EQ(cli.code, 0) << cli.out;
  const auto at = cli.out.find("report: ");
  ASSERT_NE(at, std::string::npos) << cli.out;
  const fs::path page = fs::absolute(cli.out.substr(at + 8, cli.out.find('\n', at) - at - 8));
  EXPECT_TRUE(page.filename().string().starts_with("report_precision_")) << page;
  const Rendered r = render(page, "precision");
  ASSERT_EQ(r.code, 0) << "chromium failed; see " << (kOut / "precision.log");
  EXPECT_TRUE(r.console.empty()) << r.console;
  EXPECT_NE(r.dom.find("data-ready=\"1\""), std::string::npos) << "the page's script did not finish";
  EXPECT_EQ(r.dom.find("data-jserror=\""), std::string::npos);
  // Functional.silu.0's mean relative error ratio (2.099) is the largest of the errors.
  const auto first = r.dom.find("class=\"flagged-row\"");
  ASSERT_NE(first, std::string::npos) << "no flagged row";
  EXPECT_NE(r.dom.substr(first, r.dom.find("</tr>", first) - first)
                .find("<td>Functional.silu.0.forward.output.0</td>"),
            std::string::npos);
  EXPECT_NE(r.dom.find("id=\"plot-ratio\""), std::string::npos);
}

}  // namespace
