// Which APIs run_ut executes: name parsing (precheck §6.3), SKIP rules (§6.10), config.json,
// MindSpore's checkable set (§7.1).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/ScratchDir.h"
#include "probe/csv.h"
#include "probe/error.h"
#include "run_ut/ApiSelection.h"

namespace probe::rut {
namespace {

// Skip reasons of one full name, parsed by the one API-name parser.
std::optional<std::string> skip(const std::string& full, const RunUtConfig& config) {
  return pytorch_skip_reason(full, parse_api_name(full), config);
}

TEST(RunUtNames, SkipReasonsAsHead) {
  RunUtConfig none;
  EXPECT_EQ(*skip("Distributed.all_reduce.0", none),
            "API Distributed.all_reduce.0 not support for run ut. SKIP.");
  EXPECT_EQ(*skip("MindSpeed.x.0", none), "API MindSpeed.x.0 not support for run ut. SKIP.");
  EXPECT_EQ(*skip("Torch.a.b.c.0", none), "API Torch.a.b.c.0 not support for run ut. SKIP.");
  // Not run_ut's form: no prefix, an empty segment, no call counter.
  EXPECT_EQ(*skip("relu.0", none), "API relu.0 not support for run ut. SKIP.");
  EXPECT_EQ(*skip("Torch..0", none), "API Torch..0 not support for run ut. SKIP.");
  EXPECT_EQ(*skip("Torch.matmul", none), "API Torch.matmul not support for run ut. SKIP.");
  EXPECT_FALSE(skip("Aten.add.Tensor.0", none));
  EXPECT_EQ(*skip("Tensor.to.3", none), "API to in black list or not in white list. SKIP.");
  EXPECT_FALSE(skip("Functional.relu.0", none));
  // White/black truth table: black wins; a non-empty white list excludes everything else.
  RunUtConfig white;
  white.white_list = {"relu", "gelu"};
  white.black_list = {"gelu"};
  EXPECT_FALSE(skip("Functional.relu.0", white));
  EXPECT_TRUE(skip("Functional.gelu.0", white));
  EXPECT_EQ(*skip("Torch.matmul.0", white), "API matmul in black list or not in white list. SKIP.");
}

// The one spreadsheet-formula policy (probe/csv.h): msprobe's pattern plus TAB and CR; numbers exempt.
TEST(RunUtNames, FormulaLikeCells) {
  EXPECT_TRUE(csv_formula_risk("=cmd|x.0"));
  EXPECT_TRUE(csv_formula_risk("＋add.0"));
  EXPECT_TRUE(csv_formula_risk("Torch.a;@x.0"));
  EXPECT_TRUE(csv_formula_risk("\tTorch.relu.0"));
  EXPECT_TRUE(csv_formula_risk("\rTorch.relu.0"));
  EXPECT_TRUE(csv_formula_risk("％x"));
  EXPECT_FALSE(csv_formula_risk("Tensor.__add__.0"));
  EXPECT_FALSE(csv_formula_risk("Torch.a;b.0"));
  EXPECT_FALSE(csv_formula_risk("-1.5e-3"));
  EXPECT_FALSE(csv_formula_risk("-inf"));
  EXPECT_FALSE(csv_formula_risk("\nMax abs error is less than 0.001"));
  EXPECT_EQ(csv_escape_formula("@x"), "'@x");
  EXPECT_EQ(csv_escape_formula("x"), "x");
}

TEST(RunUtNames, MindSporeCheckableSet) {
  EXPECT_EQ(*mindspore_bench_name("Mint.add.0", false), "Torch.add.0");
  EXPECT_EQ(*mindspore_bench_name("MintFunctional.relu.1", false), "Functional.relu.1");
  EXPECT_EQ(*mindspore_bench_name("Tensor.add_.2", false), "Tensor.add_.2");
  EXPECT_FALSE(mindspore_bench_name("Tensor.__matmul__.0", false));
  EXPECT_FALSE(mindspore_bench_name("Functional.relu.0", false));
  EXPECT_FALSE(mindspore_bench_name("Primitive.norm.RmsNorm.0", false));
  EXPECT_TRUE(mindspore_bench_name("Functional.flash_attention_score.0", false));
  EXPECT_EQ(*mindspore_bench_name("Functional.relu.0", true), "Functional.relu.0");
  EXPECT_FALSE(mindspore_bench_name("Mint.add.0", true));
  EXPECT_FALSE(mindspore_bench_name("Mint.0", false));
}

TEST(RunUtConfigFile, ReadsTheRunUtSection) {
  const probe::testing::ScratchDir dir("probe-rut-config");
  const std::filesystem::path p = dir.path() / "config.json";
  {
    std::ofstream o(p);
    o << R"({"task": "run_ut", "run_ut": {"white_list": ["relu"], "black_list": [], "error_data_path": "/tmp"}})";
  }
  auto c = load_run_ut_config(p.string());
  EXPECT_EQ(c.white_list, std::vector<std::string>{"relu"});
  EXPECT_TRUE(c.black_list.empty());
  EXPECT_EQ(c.error_data_path, "/tmp");
  {
    std::ofstream o(p);
    o << R"({"run_ut": {"white_list": "relu"}})";
  }
  EXPECT_THROW(load_run_ut_config(p.string()), Error);
  {
    std::ofstream o(p);
    o << R"({"run_ut": {"white_list": [)";
  }
  try {
    load_run_ut_config(p.string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format);
  }
  std::filesystem::remove(p);
  EXPECT_THROW(load_run_ut_config(p.string()), Error);
}

}  // namespace
}  // namespace probe::rut
