// `probe info` end to end: the built CLI on the fixtures.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "common/RunCli.h"
#include "common/ScratchDir.h"

namespace {

const std::string kDumps = std::string(PROBE_TEST_DATA_DIR) + "/dumps";

using probe::testing::run_cli;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(InfoCommand, HelpDocumentsEveryFlag) {
  const auto r = run_cli("info --help");
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--json", "--no-file-check", "--list", "--framework"})
    EXPECT_TRUE(has(r.out, flag)) << flag;
}

TEST(InfoCommand, SummarisesEveryRank) {
  const auto r = run_cli("info " + kDumps + "/pytorch_tensor");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "[step0/rank0]")) << r.out;
  EXPECT_TRUE(has(r.out, "[step0/rank1]"));
  EXPECT_TRUE(has(r.out, "framework: pytorch   task: tensor   level: mix"));
  EXPECT_TRUE(has(r.out, "total: 2 dumps"));
  EXPECT_TRUE(has(r.out, "0 file problems")) << r.out;  // every .pt written by torch.save reads back
}

TEST(InfoCommand, JsonCountsOfTheEscapesFixture) {
  // escapes/dump.json: 6 records, 8 float32 [2] tensors (8 * 2 * 4 = 64 bytes), all with data_name:
  // ok.pt is fine, missing.pt absent, four names leave dump_tensor_data/, corrupt.pt is a bare zip
  // signature, wrong_shape.pt holds 3 elements.
  const auto r = run_cli("info --json " + kDumps + "/escapes");
  ASSERT_EQ(r.code, 0) << r.out;
  rapidjson::Document doc;
  doc.Parse(r.out.c_str());
  ASSERT_FALSE(doc.HasParseError()) << r.out;
  ASSERT_TRUE(doc.IsObject() && doc.HasMember("ranks") && doc["ranks"].IsArray()) << r.out;
  ASSERT_EQ(doc["ranks"].Size(), 1u);
  const rapidjson::Value& rank = doc["ranks"][0];
  auto count = [&](const char* key) { return rank[key].GetUint64(); };
  auto counts = [&](const char* key) {
    std::map<std::string, std::uint64_t> m;
    for (auto it = rank[key].MemberBegin(); it != rank[key].MemberEnd(); ++it)
      m[it->name.GetString()] = it->value.GetUint64();
    return m;
  };
  EXPECT_EQ(count("records"), 6u);
  EXPECT_EQ(count("tensors"), 8u);
  EXPECT_EQ(rank["tensor_bytes"].GetInt64(), 64);
  EXPECT_EQ(counts("by_dtype"), (std::map<std::string, std::uint64_t>{{"torch.float32", 8}}));
  EXPECT_EQ(counts("by_prefix"), (std::map<std::string, std::uint64_t>{{"Functional", 6}}));
  EXPECT_EQ(count("files_ok"), 1u);
  EXPECT_TRUE(rank["files_checked"].GetBool());
  EXPECT_EQ(counts("file_problems"),
            (std::map<std::string, std::uint64_t>{
                {"missing", 1}, {"rejected", 4}, {"shape mismatch", 1}, {"unreadable", 1}}));
  ASSERT_EQ(rank["problems"].Size(), 7u);
  for (const auto& p : rank["problems"].GetArray()) {
    EXPECT_TRUE(p["record"].GetString()[0] != '\0');
    const std::string field = p["field"].GetString();
    EXPECT_TRUE(field.starts_with("input_args.") || field.starts_with("output.")) << field;
  }
  const auto text = run_cli("info --list 0 " + kDumps + "/escapes");
  EXPECT_TRUE(has(text.out, "8 referenced, 1 ok")) << text.out;
  EXPECT_TRUE(has(text.out, "... 7 more")) << text.out;
  const auto unchecked = run_cli("info --no-file-check " + kDumps + "/escapes");
  EXPECT_TRUE(has(unchecked.out, "8 referenced (not checked)")) << unchecked.out;
}

TEST(InfoCommand, MindSporeAndStatistics) {
  const auto ms = run_cli("info " + kDumps + "/mindspore_tensor/step0/rank/dump.json");
  ASSERT_EQ(ms.code, 0) << ms.out;
  EXPECT_TRUE(has(ms.out, "framework: mindspore")) << ms.out;
  EXPECT_TRUE(has(ms.out, "Cell 1")) << ms.out;
  EXPECT_TRUE(has(ms.out, "Mint 2")) << ms.out;
  EXPECT_TRUE(has(ms.out, "ok\n")) << ms.out;  // no problems listed after the count
  const auto st = run_cli("info " + kDumps + "/pytorch_statistics");
  ASSERT_EQ(st.code, 0) << st.out;
  EXPECT_TRUE(has(st.out, "task: statistics")) << st.out;
  EXPECT_TRUE(has(st.out, "tensor files: 0 referenced")) << st.out;
}

TEST(InfoCommand, ErrorsMapToExitCodes) {
  EXPECT_EQ(run_cli("info").code, 2);
  EXPECT_EQ(run_cli("info --bogus x").code, 2);
  EXPECT_EQ(run_cli("info --list -1 x").code, 2);
  EXPECT_EQ(run_cli("info " + kDumps + "/nope").code, 3);
  const auto bad = run_cli("info " + kDumps + "/malformed/truncated.json");
  EXPECT_EQ(bad.code, 4);
  EXPECT_TRUE(has(bad.out, "truncated.json")) << bad.out;
  EXPECT_TRUE(has(bad.out, "line ")) << bad.out;
  EXPECT_EQ(run_cli("info " + kDumps + "/malformed/wrong_shape.json").code, 4);
  const auto missing = run_cli("info " + kDumps + "/nope");
  EXPECT_TRUE(has(missing.out, "/nope: no such file or directory")) << missing.out;
}

// A path that exists but cannot be reached (a symlink loop; a directory without search permission alike) is
// not reported as missing: the reason is the system's.
TEST(InfoCommand, AnUnreachablePathSaysWhyNotNoSuchFile) {
  const probe::testing::ScratchDir scratch("info_loop");
  std::filesystem::create_symlink(scratch.file("b"), scratch.file("a"));
  std::filesystem::create_symlink(scratch.file("a"), scratch.file("b"));
  const auto r = run_cli("info " + scratch.file("a"));
  EXPECT_EQ(r.code, 3);
  EXPECT_TRUE(has(r.out, "a: cannot access: Too many levels of symbolic links")) << r.out;
}

}  // namespace
