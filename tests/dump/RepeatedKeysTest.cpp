// A key repeated in a JSON object takes its last value, at the place of its first occurrence, in every
// JSON file probe reads: that is what Python's json (msprobe) does. RapidJSON's DOM finds the first.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/ScratchDir.h"
#include "probe/construct.h"
#include "probe/dump.h"
#include "probe/dump_compare.h"
#include "probe/online_server.h"
#include "probe/stack.h"
#include "run_ut/ApiSelection.h"
#include "support/JsonDocument.h"

namespace {

using probe::testing::ScratchDir;

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// json.loads('{"a": 1, "b": {"x": 1, "x": [2], "y": 3}, "a": 2, "c": [{"k": 1, "k": 2, "k": 3}]}')
// == {'a': 2, 'b': {'x': [2], 'y': 3}, 'c': [{'k': 3}]}, keys in that order.
TEST(RepeatedKeys, JsonDocumentKeepsTheLastValueAtTheFirstPlace) {
  const rapidjson::Document doc = probe::detail::parse_json_document(
      R"({"a": 1, "b": {"x": 1, "x": [2], "y": 3}, "a": 2, "c": [{"k": 1, "k": 2, "k": 3}]})", "mem.json");
  const rapidjson::Value& root = doc;
  ASSERT_EQ(root.MemberCount(), 3u);
  auto it = root.MemberBegin();
  EXPECT_STREQ(it->name.GetString(), "a");
  EXPECT_EQ(it->value.GetInt(), 2);
  ++it;
  EXPECT_STREQ(it->name.GetString(), "b");
  ASSERT_EQ(it->value.MemberCount(), 2u);
  EXPECT_STREQ(it->value.MemberBegin()->name.GetString(), "x");
  ASSERT_TRUE(it->value["x"].IsArray());
  EXPECT_EQ(it->value["x"][0].GetInt(), 2);
  EXPECT_EQ(it->value["y"].GetInt(), 3);
  ++it;
  EXPECT_STREQ(it->name.GetString(), "c");
  ASSERT_EQ(it->value[0].MemberCount(), 1u);
  EXPECT_EQ(it->value[0]["k"].GetInt(), 3);
}

// `"is_online": true, "is_online": false` is an offline run for msprobe: it must not start a server.
TEST(RepeatedKeys, ConfigJsonTakesTheLastValue) {
  ScratchDir d("repeated");
  write(d.file("config.json"),
        R"({"task": "run_ut", "run_ut": {"is_online": true, "host": "127.0.0.1", "port": 0, )"
        R"("is_online": false, "white_list": ["relu"], "white_list": ["gelu"]}})");
  EXPECT_FALSE(probe::online::load_online_config(d.file("config.json")).is_online);
  EXPECT_EQ(probe::rut::load_run_ut_config(d.file("config.json")).white_list,
            std::vector<std::string>{"gelu"});
  // A repeated section: the last one counts as a whole.
  write(d.file("sections.json"), R"({"run_ut": {"is_online": true}, "run_ut": {"host": "127.0.0.1"}})");
  EXPECT_FALSE(probe::online::load_online_config(d.file("sections.json")).is_online);

  // The CLI on that config runs offline and ends (it used to listen for a client, forever).
  const std::string dump = std::string(PROBE_TEST_DATA_DIR) + "/run_ut/pt_fp32_fwd/dump.json";
  const std::string cmd = "timeout 60 '" + std::string(PROBE_CLI_PATH) + "' run_ut -config " +
                          d.file("config.json") + " -api_info " + dump + " -o " + d.file("out") +
                          " --timestamp 20260304050607 -q > " + d.file("log") + " 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(std::filesystem::exists(d.file("out") + "/accuracy_checking_result_20260304050607.csv"));
}

TEST(RepeatedKeys, CompareJsonTakesTheLastValue) {
  ScratchDir d("repeated");
  write(d.file("compare.json"),
        R"({"npu_path": "first/dump.json", "bench_path": "b/dump.json", "npu_path": "last/dump.json", )"
        R"("is_print_compare_log": true, "is_print_compare_log": false})");
  const probe::CompareInput in = probe::read_compare_json(d.file("compare.json"));
  EXPECT_EQ(in.npu_path, "last/dump.json");
  EXPECT_EQ(in.bench_path, "b/dump.json");
  EXPECT_FALSE(in.is_print_compare_log);
}

// dump.json's own reader: inside a record, a repeated key of a tensor descriptor, of a dict argument and
// of a leaf value takes the last value.
TEST(RepeatedKeys, DumpJsonTakesTheLastValue) {
  const probe::Dump dump = probe::Dump::parse(
      R"({"task": "statistics", "framework": "pytorch", "data": {"Functional.relu.0.forward": {)"
      R"("input_args": [{"type": "torch.Tensor", "dtype": "torch.float16", "dtype": "torch.float32", )"
      R"("shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "requires_grad": false}, )"
      R"({"type": "int", "value": 1, "value": 2}], )"
      R"("input_kwargs": {"inplace": {"type": "bool", "value": true}, "inplace": {"type": "bool", "value": false}}, )"
      R"("output": []}}})",
      "mem/dump.json");
  ASSERT_EQ(dump.entries().size(), 1u);
  const probe::DumpEntry& e = dump.entries()[0];
  const auto& args = e.inputs()->items();
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[0].tensor().dtype_name, "torch.float32");
  EXPECT_EQ(args[1].leaf().value.as_int(), 2);
  ASSERT_EQ(e.kwargs()->members().size(), 1u);
  EXPECT_FALSE(e.kwargs()->find("inplace")->leaf().value.as_bool());
}

// stack.json and construct.json: one entry per key, with the last value.
TEST(RepeatedKeys, StackAndConstructJsonTakeTheLastValue) {
  const probe::StackInfo stack = probe::StackInfo::parse(
      R"({"Functional.relu.0.forward": ["first"], "Functional.gelu.0.forward": ["g"], )"
      R"("Functional.relu.0.forward": ["last"]})",
      "stack.json");
  EXPECT_EQ(stack.key_count(), 2u);
  ASSERT_NE(stack.frames_of("Functional.relu.0.forward"), nullptr);
  EXPECT_EQ(*stack.frames_of("Functional.relu.0.forward"), std::vector<std::string>{"last"});
  const probe::ConstructInfo construct = probe::ConstructInfo::parse(
      R"({"Module.fc.Linear.forward.0": "Module.a.A.forward.0", "Module.fc.Linear.forward.0": null})",
      "construct.json");
  EXPECT_EQ(construct.nodes().size(), 1u);
  ASSERT_NE(construct.find("Module.fc.Linear.forward.0"), nullptr);
  EXPECT_FALSE(construct.find("Module.fc.Linear.forward.0")->parent);
}

}  // namespace
