// probe::summarise_dump and its JSON: the library behind `probe info`, checked on hand-written dumps.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <fstream>
#include <map>
#include <string>

#include "common/ScratchDir.h"
#include "probe/dump_layout.h"
#include "probe/dump_summary.h"
#include "probe/tensor.h"
#include "probe/tensor_file.h"

namespace {

using probe::DumpProblemKind;
using probe::testing::ScratchDir;

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

probe::RankDump rank_of(const ScratchDir& dir) {
  return probe::DumpLayout::discover(dir.file("dump.json")).ranks.at(0);
}

std::string tensor_desc(const std::string& shape, const std::string& extra = "") {
  return R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": )" + shape +
         R"(, "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false)" + extra + "}";
}

// Messages (issue 14): a size overflow in one record is that record's "bad shape" problem, naming the
// record, the field, the shape and the dtype; the rest of the dump is still summarised.
TEST(DumpSummary, AnImpossibleShapeIsOneRecordsProblem) {
  ScratchDir d("summary");
  write(
      d.file("dump.json"),
      R"({"task": "statistics", "framework": "pytorch", "data": {"Functional.relu.0.forward": {"input_args": [)" +
          tensor_desc("[4294967296, 4294967296, 4294967296]") +
          R"(], "input_kwargs": {}, "output": []}, "Functional.gelu.0.forward": {"input_args": [)" +
          tensor_desc("[2, 3]") + R"(], "input_kwargs": {}, "output": []}}})");
  const probe::DumpSummary s = probe::summarise_dump(rank_of(d));
  EXPECT_EQ(s.records, 2u);
  EXPECT_EQ(s.tensors, 2u);
  EXPECT_EQ(s.tensor_bytes, 24);  // only the [2, 3] float32 tensor
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_EQ(s.problems[0].kind, DumpProblemKind::BadShape);
  EXPECT_EQ(s.problems[0].record, "Functional.relu.0.forward");
  EXPECT_EQ(s.problems[0].field, "input_args.0");
  EXPECT_EQ(s.problems[0].detail,
            "shape (4294967296, 4294967296, 4294967296) has too many elements (dtype torch.float32)");
  EXPECT_EQ(s.problem_counts.at("bad shape"), 1u);
}

// Records are counted by the direction their key names, spelled as to_string(EntryDirection) spells it;
// a key of no known shape is "unknown".
TEST(DumpSummary, RecordsAreCountedByDirection) {
  ScratchDir d("summary");
  const std::string record = R"({"input_args": [], "input_kwargs": {}, "output": []})";
  write(d.file("dump.json"), R"({"task": "statistics", "framework": "pytorch", "data": {)"
                             R"("Functional.relu.0.forward": )" +
                                 record + R"(, "Functional.relu.0.backward": )" + record +
                                 R"(, "Functional.gelu.1.forward": )" + record +
                                 R"(, "Module.conv2.Conv2d.parameters_grad": {"weight": []})"
                                 R"(, "x_grad.0.debug": [])"
                                 R"(, "weird": )" +
                                 record + "}}");
  const probe::DumpSummary s = probe::summarise_dump(rank_of(d));
  EXPECT_EQ(s.records, 6u);
  const std::map<std::string, std::size_t> expected = {
      {"forward", 2}, {"backward", 1}, {"parameters_grad", 1}, {"debug", 1}, {"unknown", 1}};
  EXPECT_EQ(s.by_direction, expected);
}

// A tensor dump descriptor without data_name is "no file" (run_ut SKIPs its API); an empty one is not
// (msprobe writes no file for it). A file holding another shape is a shape mismatch.
TEST(DumpSummary, TensorDumpFilesAreChecked) {
  ScratchDir d("summary");
  std::filesystem::create_directories(d.path() / "dump_tensor_data");
  probe::save_pt(d.file("dump_tensor_data/a.pt"), probe::Tensor::from_values<float>({1, 2, 3}, {3}));
  write(
      d.file("dump.json"),
      R"({"task": "tensor", "framework": "pytorch", "data": {"Functional.relu.0.forward": {"input_args": [)" +
          tensor_desc("[3]", R"(, "data_name": "a.pt")") + ", " +
          tensor_desc("[2]", R"(, "data_name": "a.pt")") + ", " + tensor_desc("[4]") + ", " +
          tensor_desc("[0]") + R"(], "input_kwargs": {}, "output": []}}})");
  const probe::DumpSummary s = probe::summarise_dump(rank_of(d));
  EXPECT_TRUE(s.files_checked);
  EXPECT_EQ(s.files_referenced, 2u);
  EXPECT_EQ(s.files_ok, 1u);
  ASSERT_EQ(s.problems.size(), 2u);
  EXPECT_EQ(s.problems[0].kind, DumpProblemKind::ShapeMismatch);
  EXPECT_EQ(s.problems[0].field, "input_args.1");
  EXPECT_NE(s.problems[0].detail.find("the file holds (3,), dump.json says (2,)"), std::string::npos)
      << s.problems[0].detail;
  EXPECT_EQ(s.problems[1].kind, DumpProblemKind::NoFile);
  EXPECT_EQ(s.problems[1].field, "input_args.2");
  const probe::DumpSummary unchecked = probe::summarise_dump(rank_of(d), false);
  EXPECT_FALSE(unchecked.files_checked);
  EXPECT_EQ(unchecked.files_ok, 0u);
  ASSERT_EQ(unchecked.problems.size(), 1u);  // "no file" needs no file access
}

// The JSON is valid and escapes what a record key may hold (quotes, backslashes, control characters).
TEST(DumpSummary, JsonEscapesEveryString) {
  ScratchDir d("summary");
  write(d.file("dump.json"),
        R"({"task": "statistics", "framework": "pytorch", "data": {"Functional.a\"b\\c\u0001.0.forward": )"
        R"({"input_args": [)" +
            tensor_desc("[4294967296, 4294967296, 4294967296]") +
            R"(], "input_kwargs": {}, "output": []}}})");
  const probe::DumpSummary s = probe::summarise_dump(rank_of(d));
  const std::string json = probe::dump_summaries_json("p\"\n", {s});
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  ASSERT_FALSE(doc.HasParseError()) << json;
  EXPECT_EQ(std::string(doc["path"].GetString()), "p\"\n");
  const auto& problems = doc["ranks"][0]["problems"];
  ASSERT_EQ(problems.Size(), 1u) << json;
  EXPECT_EQ(std::string(problems[0]["kind"].GetString()), "bad shape");
  EXPECT_EQ(std::string(problems[0]["record"].GetString()), "Functional.a\"b\\c\x01.0.forward");
  EXPECT_TRUE(doc["ranks"][0]["stack_records"].IsNull());
}

}  // namespace
