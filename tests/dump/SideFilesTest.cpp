// stack.json, construct.json, and discovery of the step*/rank* layout.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/ScratchDir.h"
#include "probe/construct.h"
#include "probe/dump_layout.h"
#include "probe/error.h"
#include "probe/stack.h"

namespace probe {
namespace {

const std::string kDumps = std::string(PROBE_TEST_DATA_DIR) + "/dumps";

TEST(StackJson, DeduplicatedFormat) {
  const StackInfo s = StackInfo::open(kDumps + "/pytorch_tensor/step0/rank0/stack.json");
  EXPECT_FALSE(s.legacy());
  ASSERT_GE(s.groups().size(), 3u);
  // linear and the module that ran it share one stack
  EXPECT_EQ(s.groups()[0].keys,
            (std::vector<std::string>{"Functional.linear.0.forward", "Module.fc.Linear.forward.0"}));
  const auto* frames = s.frames_of("Module.fc.Linear.forward.0");
  ASSERT_NE(frames, nullptr);
  ASSERT_EQ(frames->size(), 2u);
  EXPECT_EQ((*frames)[0], "File /work/model/train.py, line 52, in forward, \n x = self.fc(x)");
  EXPECT_EQ(s.frames_of("Functional.relu.0.backward"), nullptr);
  EXPECT_EQ(s.key_count(), 4u);
}

TEST(StackJson, LegacyFormat) {
  const StackInfo s = StackInfo::open(kDumps + "/pytorch_statistics/stack.json");
  EXPECT_TRUE(s.legacy());
  EXPECT_EQ(s.groups().size(), 2u);
  ASSERT_NE(s.frames_of("Torch.matmul.0.forward"), nullptr);
  EXPECT_EQ(s.frames_of("Torch.matmul.0.forward")->at(0),
            "File /work/model/train.py, line 71, in forward, \n y = x @ w");
}

TEST(StackJson, FailureMessageAndErrors) {
  const StackInfo s = StackInfo::open(kDumps + "/mindspore_tensor/step0/rank/stack.json");
  EXPECT_EQ(s.frames_of("Cell.dense.Dense.forward.0")->at(0), "The call stack retrieval failed.");
  EXPECT_EQ(s.frames_of("MintFunctional.relu.0.forward")->size(), 2u);
  EXPECT_TRUE(StackInfo::parse("{}", "s.json").groups().empty());
  // "0" present but falsy (empty list): msprobe treats the file as legacy
  EXPECT_TRUE(StackInfo::parse(R"({"0": []})", "s.json").legacy());
  try {
    StackInfo::parse(R"({"0": [["A.b.0.forward"], "not a list"]})", "s.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format);
    EXPECT_EQ(e.file(), "s.json");
    EXPECT_EQ(e.field(), "0.1");
  }
  EXPECT_THROW(StackInfo::parse(R"({"0": [["A"], [1]]})", "s.json"), Error);
  EXPECT_THROW(StackInfo::parse("[", "s.json"), Error);
  EXPECT_THROW(StackInfo::parse(std::string(100000, '['), "s.json"), Error);
  EXPECT_THROW(StackInfo::parse(std::string_view("{}\0{", 4), "s.json"), Error);
  // a multi-byte UTF-8 sequence cut by the end of the file (found by DumpJsonFuzzer)
  EXPECT_THROW(StackInfo::parse("{\"0\": [[\":\xe7", "s.json"), Error);
  EXPECT_THROW(ConstructInfo::parse("{\"a\": \"\xf0\x9f", "c.json"), Error);
  EXPECT_THROW(StackInfo::parse("{\"0\": [[\"a\"], [\"\xff\"]]}", "s.json"), Error);  // invalid UTF-8
  EXPECT_THROW(StackInfo::open(kDumps + "/nope.json"), Error);
}

TEST(ConstructJson, ParentsInAllForms) {
  const ConstructInfo c = ConstructInfo::open(kDumps + "/pytorch_tensor/step0/rank0/construct.json");
  const auto* linear = c.find("Functional.linear.0.forward");
  ASSERT_NE(linear, nullptr);
  EXPECT_EQ(linear->parent, std::optional<std::string>("Module.fc.Linear.forward.0"));
  EXPECT_FALSE(c.find("Module.fc.Linear.forward.0")->parent.has_value());
  EXPECT_EQ(c.find("Functional.linear.0.backward")->parent,
            std::optional<std::string>("Module.fc.Linear.backward.0"));
  EXPECT_FALSE(c.micro_step_count().has_value());

  const ConstructInfo ms = ConstructInfo::open(kDumps + "/mindspore_tensor/step0/rank/construct.json");
  EXPECT_FALSE(ms.find("Cell.dense.Dense.forward.0")->parent.has_value());  // "" means no parent
  const auto* back = ms.find("Mint.add.0.backward");
  EXPECT_EQ(back->parent, std::optional<std::string>("Cell.dense.Dense.backward.0"));
  EXPECT_EQ(back->micro_step, 0);
  EXPECT_FALSE(ms.find("Cell.dense.Dense.backward.0")->parent.has_value());
  EXPECT_EQ(ms.find("Cell.dense.Dense.backward.0")->micro_step, 1);
  EXPECT_EQ(ms.micro_step_count(), 2);
  EXPECT_EQ(ms.find("megatron_micro_step_number"), nullptr);

  EXPECT_TRUE(ConstructInfo::open(kDumps + "/pytorch_statistics/construct.json").nodes().empty());
  try {
    ConstructInfo::parse(R"({"A.b.0.forward": 3})", "c.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "A.b.0.forward");
    EXPECT_EQ(e.file(), "c.json");
  }
  EXPECT_THROW(ConstructInfo::parse(R"({"A": ["x", "y"]})", "c.json"), Error);
  EXPECT_THROW(ConstructInfo::parse(R"({"megatron_micro_step_number": "2"})", "c.json"), Error);
}

TEST(DumpLayout, StepRankTree) {
  const DumpLayout l = DumpLayout::discover(kDumps + "/pytorch_tensor");
  ASSERT_EQ(l.ranks.size(), 2u);
  EXPECT_EQ(l.ranks[0].step, "step0");
  EXPECT_EQ(l.ranks[0].rank, "rank0");
  EXPECT_EQ(l.ranks[1].rank, "rank1");
  EXPECT_EQ(l.ranks[1].rank_index, 1);
  EXPECT_EQ(l.ranks[1].step_index, 0);
  EXPECT_EQ(l.ranks[0].dump_json, kDumps + "/pytorch_tensor/step0/rank0/dump.json");
  EXPECT_EQ(l.ranks[0].stack_json, kDumps + "/pytorch_tensor/step0/rank0/stack.json");
  EXPECT_EQ(l.ranks[0].construct_json, kDumps + "/pytorch_tensor/step0/rank0/construct.json");
  EXPECT_EQ(l.ranks[0].tensor_dir, kDumps + "/pytorch_tensor/step0/rank0/dump_tensor_data");
  // a step directory, a rank directory, and a dump.json path
  EXPECT_EQ(DumpLayout::discover(kDumps + "/pytorch_tensor/step0").ranks.size(), 2u);
  const DumpLayout r = DumpLayout::discover(kDumps + "/pytorch_tensor/step0/rank1");
  ASSERT_EQ(r.ranks.size(), 1u);
  EXPECT_EQ(r.ranks[0].rank, "rank1");
  EXPECT_EQ(r.ranks[0].step, "step0");
  const DumpLayout f = DumpLayout::discover(kDumps + "/pytorch_statistics/dump.json");
  ASSERT_EQ(f.ranks.size(), 1u);
  EXPECT_EQ(f.ranks[0].dump_json, kDumps + "/pytorch_statistics/dump.json");
  EXPECT_EQ(f.ranks[0].rank, "");
  EXPECT_EQ(f.ranks[0].tensor_dir, "");
}

TEST(DumpLayout, RankWithoutNumberAndErrors) {
  const DumpLayout l = DumpLayout::discover(kDumps + "/mindspore_tensor");
  ASSERT_EQ(l.ranks.size(), 1u);
  EXPECT_EQ(l.ranks[0].rank, "rank");
  EXPECT_FALSE(l.ranks[0].rank_index.has_value());
  try {
    DumpLayout::discover(kDumps + "/malformed");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_EQ(e.file(), kDumps + "/malformed");
  }
  EXPECT_THROW(DumpLayout::discover(kDumps + "/does_not_exist"), Error);
}

TEST(DumpLayout, OrdersStepsAndRanksNumerically) {
  namespace fs = std::filesystem;
  const probe::testing::ScratchDir scratch("probe-layout-order");
  const fs::path& root = scratch.path();
  for (const char* d :
       {"step10/rank2", "step10/rank10", "step2/rank0", "step2/rank01", "step2/other", "graph/step1/rank0"}) {
    fs::create_directories(root / d);
    std::FILE* f = std::fopen((root / d / "dump.json").c_str(), "w");
    std::fputs("{}", f);
    std::fclose(f);
  }
  const DumpLayout l = DumpLayout::discover(root.string());
  std::vector<std::string> got;
  for (const RankDump& r : l.ranks) got.push_back(r.mode + "/" + r.step + "/" + r.rank);
  // rank01 and "other" do not match ^rank(0|[1-9][0-9]*)?$; numeric order, not lexical
  EXPECT_EQ(got, (std::vector<std::string>{"/step2/rank0", "/step10/rank2", "/step10/rank10",
                                           "graph/step1/rank0"}));
}

}  // namespace
}  // namespace probe
