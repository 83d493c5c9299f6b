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

TEST(RunUtNames, ParsesThreeAndFourSegmentNames) {
  auto a = parse_pytorch_api_name("Torch.linalg.vector_norm.0");
  EXPECT_TRUE(a.parsed);
  EXPECT_EQ(a.type, "Torch");
  EXPECT_EQ(a.name, "linalg.vector_norm");
  EXPECT_EQ(parse_pytorch_api_name("Aten.add.Tensor.0").name, "add.Tensor");
  EXPECT_EQ(parse_pytorch_api_name("Functional.relu.0").name, "relu");
  EXPECT_FALSE(parse_pytorch_api_name("Torch.a.b.c.0").parsed);
  EXPECT_FALSE(parse_pytorch_api_name("relu.0").parsed);
}

TEST(RunUtNames, SkipReasonsAsHead) {
  RunUtConfig none;
  EXPECT_EQ(*pytorch_skip_reason(parse_pytorch_api_name("Distributed.all_reduce.0"), none),
            "API Distributed.all_reduce.0 not support for run ut. SKIP.");
  EXPECT_EQ(*pytorch_skip_reason(parse_pytorch_api_name("MindSpeed.x.0"), none),
            "API MindSpeed.x.0 not support for run ut. SKIP.");
  EXPECT_EQ(*pytorch_skip_reason(parse_pytorch_api_name("Torch.a.b.c.0"), none),
            "API Torch.a.b.c.0 not support for run ut. SKIP.");
  EXPECT_EQ(*pytorch_skip_reason(parse_pytorch_api_name("Tensor.to.3"), none),
            "API to in black list or not in white list. SKIP.");
  EXPECT_FALSE(pytorch_skip_reason(parse_pytorch_api_name("Functional.relu.0"), none));
  // White/black truth table: black wins; a non-empty white list excludes everything else.
  RunUtConfig white;
  white.white_list = {"relu", "gelu"};
  white.black_list = {"gelu"};
  EXPECT_FALSE(pytorch_skip_reason(parse_pytorch_api_name("Functional.relu.0"), white));
  EXPECT_TRUE(pytorch_skip_reason(parse_pytorch_api_name("Functional.gelu.0"), white));
  EXPECT_EQ(*pytorch_skip_reason(parse_pytorch_api_name("Torch.matmul.0"), white),
            "API matmul in black list or not in white list. SKIP.");
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
