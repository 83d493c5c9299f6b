// The grad_compare page's embedded data against what Python's csv module reads from the same similarities.csv
// files and msprobe's documented first-suspicious-step rule (tests/data/report/make_grad_report_fixtures.py),
// `probe grad_compare --report` and `probe report` on grad_compare's output.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/RunCli.h"
#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/error.h"
#include "probe/report.h"

namespace {

namespace fs = std::filesystem;
using probe::testing::run_cli;
using probe::testing::ScratchDir;
using probe::testing::slurp;

const std::string kData = std::string(PROBE_TEST_DATA_DIR) + "/report/";

rapidjson::Document parse(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  EXPECT_FALSE(d.HasParseError()) << "offset " << d.GetErrorOffset();
  return d;
}

TEST(GradReport, EmbeddedDataMatchesPythonsReading) {
  const rapidjson::Document expected = parse(slurp(kData + "expected_grad.json"));
  const probe::GradReport g = probe::read_grad_report(kData + "grad_out");
  const rapidjson::Document j = parse(probe::grad_report_json(g));
  EXPECT_EQ(std::string(j["kind"].GetString()), "grad_compare");
  const auto& ranks = j["ranks"];
  ASSERT_EQ(ranks.Size(), expected.MemberCount());
  for (rapidjson::SizeType k = 0; k < ranks.Size(); ++k) {
    const auto& r = ranks[k];
    const std::string rank = std::to_string(r["rank"].GetInt64());
    ASSERT_TRUE(expected.HasMember(rank.c_str())) << rank;
    const auto& e = expected[rank.c_str()];
    if (e["first_suspicious"].IsNull())
      EXPECT_TRUE(r["first_suspicious"].IsNull()) << rank;
    else
      EXPECT_EQ(r["first_suspicious"].GetInt64(), e["first_suspicious"].GetInt64()) << rank;
    ASSERT_EQ(r["steps"].Size(), e["steps"].Size()) << rank;
    for (rapidjson::SizeType i = 0; i < r["steps"].Size(); ++i)
      EXPECT_EQ(r["steps"][i].GetInt64(), e["steps"][i].GetInt64()) << rank;
    ASSERT_EQ(r["rows"].Size(), e["rows"].Size()) << rank;
    for (rapidjson::SizeType i = 0; i < r["rows"].Size(); ++i) {
      const auto &a = r["rows"][i], &b = e["rows"][i];
      EXPECT_EQ(std::string(a["name"].GetString()), std::string(b["name"].GetString()));
      ASSERT_EQ(a["values"].Size(), b["values"].Size());
      for (rapidjson::SizeType s = 0; s < a["values"].Size(); ++s)
        EXPECT_EQ(a["values"][s].GetDouble(), b["values"][s].GetDouble())
            << rank << " " << b["name"].GetString();
    }
  }
  // The page: one plot and one marker per rank, the data embedded.
  const std::string html = probe::grad_report_html(g);
  for (const char* id :
       {"<svg id=\"grad-plot-0\"", "<svg id=\"grad-plot-1\"", "id=\"grad-mark-0\"", "id=\"grad-mark-1\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  EXPECT_NE(html.find(probe::grad_report_json(g)), std::string::npos);
}

// grad_compare's own output on the tests' two grad_probe dumps (tests/data/make_grad_fixtures.py: rank 0's
// gradients flip direction from step 3, rank 1's never): the page embeds the similarities and the first
// suspicious step the generator derived with torch.
TEST(GradReport, GradCompareReportFlagWritesThePage) {
  ScratchDir out("probe-grad-report");
  const std::string g = std::string(PROBE_TEST_DATA_DIR) + "/grad_probe/";
  const rapidjson::Document expected = parse(slurp(g + "expected/expected.json"));
  const auto cli =
      run_cli("grad_compare '" + g + "a' '" + g + "b' -o '" + out.path().string() + "' --report");
  ASSERT_EQ(cli.code, 0) << cli.out;
  const auto at = cli.out.find("report: ");
  ASSERT_NE(at, std::string::npos) << cli.out;
  const std::string page = cli.out.substr(at + 8, cli.out.find('\n', at) - at - 8);
  EXPECT_TRUE(fs::path(page).filename().string().starts_with("report_grad_")) << page;
  const std::string html = slurp(page);
  const std::string open = "id=\"report-data\">";
  const auto from = html.find(open) + open.size();
  const rapidjson::Document j = parse(html.substr(from, html.find("</script>", from) - from));
  ASSERT_EQ(j["ranks"].Size(), 2u);
  for (const auto& r : j["ranks"].GetArray()) {
    const std::string rank = "rank" + std::to_string(r["rank"].GetInt64());
    ASSERT_TRUE(expected.HasMember(rank.c_str())) << rank;
    const auto& e = expected[rank.c_str()];
    if (e["first_suspicious_step"].IsNull())
      EXPECT_TRUE(r["first_suspicious"].IsNull()) << rank;
    else
      EXPECT_EQ(r["first_suspicious"].GetInt64(), e["first_suspicious_step"].GetInt64()) << rank;
    const auto& sims = e["similarities"];
    ASSERT_EQ(r["rows"].Size(), sims.MemberCount()) << rank;
    for (const auto& row : r["rows"].GetArray()) {
      const char* name = row["name"].GetString();
      ASSERT_TRUE(sims.HasMember(name)) << rank << " " << name;
      ASSERT_EQ(row["values"].Size(), sims[name].Size());
      for (rapidjson::SizeType s = 0; s < row["values"].Size(); ++s)
        EXPECT_NEAR(row["values"][s].GetDouble(), sims[name][s].GetDouble(), 1e-12) << rank << " " << name;
    }
  }
  EXPECT_NE(html.find("id=\"grad-mark-0\""), std::string::npos) << "rank 0's step 3 is marked";
  EXPECT_EQ(html.find("id=\"grad-mark-1\""), std::string::npos) << "rank 1 has no suspicious step";
  // probe report DIR finds the same output.
  const auto pages = probe::write_report(out.path().string(), out.file("again"));
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_TRUE(fs::path(pages[0]).filename().string().starts_with("report_grad_"));
}

TEST(GradReport, MalformedCellNamesFileRowAndStep) {
  ScratchDir dir("probe-grad-report");
  fs::create_directories(dir.path() / "rank3");
  std::ofstream(dir.file("rank3/similarities.csv")) << "step,0,1\nfc.weight,1.0,oops\nsummary,1.0,1.0\n";
  try {
    probe::read_grad_report(dir.path().string());
    FAIL() << "a cell that is not a number was read";
  } catch (const probe::Error& e) {
    EXPECT_EQ(e.kind(), probe::ErrorKind::Format);
    const std::string what = e.what();
    for (const char* part : {"similarities.csv", "step 1", "fc.weight", "oops"})
      EXPECT_NE(what.find(part), std::string::npos) << what;
  }
  ScratchDir empty("probe-grad-report");
  EXPECT_THROW(probe::read_grad_report(empty.path().string()), probe::Error);
}

}  // namespace
