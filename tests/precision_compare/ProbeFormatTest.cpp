// DECISIONS D11: details CSVs written by probe's own run_ut are read like msprobe's. Built from run_ut's
// header so that a change of run_ut's format that api_precision_compare cannot read fails here.
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "probe/api_precision_compare.h"
#include "probe/error.h"
#include "run_ut/OutputFiles.h"

namespace probe {
namespace {

TEST(PrecisionCompareProbeFormat, ReadsProbeRunUtDetails) {
  testing::ScratchDir dir("probe_fmt");
  const CsvRow header = rut::run_ut_format(Framework::PyTorch).details_header();
  std::vector<testing::Cells> rows{{{"API Name", "Torch.abs.0.forward.output.0"},
                                    {"DEVICE Dtype", "torch.float16"},
                                    {"Shape", "(3,)"},
                                    {"二进制一致错误率", "0.00000000000000"}},
                                   {{"API Name", "Functional.relu.0.forward.output.0"},
                                    {"DEVICE Dtype", "torch.float32"},
                                    {"Shape", "(3,)"},
                                    {"二进制一致错误率", "0.33333333333333"}}};
  auto f = testing::write_details(dir.file("d.csv"), rows, header);
  auto s = run_api_precision_compare(testing::options_for(f, f, dir.file("out")));
  auto result = csv_read_file(s.result_csv);
  ASSERT_EQ(result.size(), 3u);
  EXPECT_EQ(result[1], (CsvRow{"Torch.abs.0", "pass", " ", ""}));
  EXPECT_EQ(result[2], (CsvRow{"Functional.relu.0", "error", " ", ""}));
}

TEST(PrecisionCompareProbeFormat, MindSporeDetailsAreRefusedWithAHint) {
  testing::ScratchDir dir("ms_fmt");
  auto f = testing::write_details(dir.file("d.csv"), {{{"API Name", "Mint.abs.0.forward.output.0"}}},
                                  rut::run_ut_format(Framework::MindSpore).details_header());
  try {
    run_api_precision_compare(testing::options_for(f, f, dir.file("out")));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format);
    EXPECT_NE(e.message().find("MindSpore"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace probe
