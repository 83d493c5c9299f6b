// The one API-name parser (probe/api_name.h) on PyTorch and MindSpore dump names, registry keys and
// malformed names. Expectations are written from the dump naming rule (precheck §6.3): prefix, name,
// optional call counter, optional direction.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "probe/api_name.h"
#include "probe/dump.h"
#include "probe/output_compare.h"

namespace probe {
namespace {

struct Expected {
  const char* full;
  const char* prefix;
  const char* name;
  std::optional<std::int64_t> call_index;
  ApiDirection direction;
  bool run_ut_form;
};

TEST(ApiName, SplitsPyTorchAndMindSporeDumpNames) {
  const Expected cases[] = {
      {"Functional.conv2d.3.forward", "Functional", "conv2d", 3, ApiDirection::Forward, true},
      {"Tensor.__add__.0", "Tensor", "__add__", 0, ApiDirection::None, true},
      {"Torch.matmul.1.backward", "Torch", "matmul", 1, ApiDirection::Backward, true},
      {"Torch.linalg.vector_norm.12", "Torch", "linalg.vector_norm", 12, ApiDirection::None, true},
      {"Distributed.all_reduce.0.forward", "Distributed", "all_reduce", 0, ApiDirection::Forward, true},
      {"Aten.add.Tensor.3.backward", "Aten", "add.Tensor", 3, ApiDirection::Backward, true},
      {"NPU.npu_rms_norm.2.forward", "NPU", "npu_rms_norm", 2, ApiDirection::Forward, true},
      {"Mint.add.0.forward", "Mint", "add", 0, ApiDirection::Forward, true},
      {"MintFunctional.relu.1", "MintFunctional", "relu", 1, ApiDirection::None, true},
      {"Primitive.norm.RmsNorm.0.forward", "Primitive", "norm.RmsNorm", 0, ApiDirection::Forward, true},
      {"Jit.model_step.4.backward", "Jit", "model_step", 4, ApiDirection::Backward, true},
      // Five segments before the counter: a valid name, but not one run_ut executes (3 or 4 segments).
      {"Torch.a.b.c.0", "Torch", "a.b.c", 0, ApiDirection::None, false},
      // Registry keys: no counter, no direction.
      {"Functional.softmax", "Functional", "softmax", std::nullopt, ApiDirection::None, false},
      {"Aten.add.Tensor", "Aten", "add.Tensor", std::nullopt, ApiDirection::None, false},
      {"Tensor.__getitem__", "Tensor", "__getitem__", std::nullopt, ApiDirection::None, false},
      // Two segments: the digits are the name, not a counter (a counter needs a name before it).
      {"NPU.123", "NPU", "123", std::nullopt, ApiDirection::None, false},
      // The direction is stripped only as the last segment.
      {"Tensor.backward.0", "Tensor", "backward", 0, ApiDirection::None, true},
  };
  for (const Expected& e : cases) {
    SCOPED_TRACE(e.full);
    const std::optional<ApiName> n = parse_api_name(e.full);
    ASSERT_TRUE(n);
    EXPECT_EQ(n->prefix, e.prefix);
    EXPECT_EQ(n->name, e.name);
    EXPECT_EQ(n->call_index, e.call_index);
    EXPECT_EQ(n->direction, e.direction);
    EXPECT_EQ(n->run_ut_form(), e.run_ut_form);
    EXPECT_EQ(n->key(), std::string(e.prefix) + "." + e.name);
    // Building the name back gives the text that was split.
    EXPECT_EQ(n->dump_key(), e.full);
  }
}

TEST(ApiName, BuildsCountedNamesAndDumpKeys) {
  const ApiName n = *parse_api_name("Torch.linalg.vector_norm.12.backward");
  EXPECT_EQ(n.counted_name(), "Torch.linalg.vector_norm.12");
  EXPECT_EQ(n.dump_key(), "Torch.linalg.vector_norm.12.backward");
  const ApiName key = *parse_api_name("Aten.add.Tensor");
  EXPECT_EQ(key.counted_name(), "Aten.add.Tensor");
  EXPECT_EQ(key.dump_key(), "Aten.add.Tensor");
}

TEST(ApiName, ListNameFromEverySpelling) {
  // msprobe's lists name an API without family, counter or direction (precheck §6.3).
  for (const char* spelling : {"matmul", "Torch.matmul", "Torch.matmul.0", "Torch.matmul.3.forward"}) {
    SCOPED_TRACE(spelling);
    EXPECT_EQ(api_list_name(spelling), "matmul");
  }
  EXPECT_EQ(api_list_name("Functional.gelu"), "gelu");
  EXPECT_EQ(api_list_name("Aten.add.Tensor"), "add.Tensor");
  EXPECT_EQ(api_list_name("Aten.add.Tensor.2.backward"), "add.Tensor");
  EXPECT_EQ(api_list_name("Tensor.__matmul__.1"), "__matmul__");
  EXPECT_EQ(api_list_name("Mint.add.0.forward"), "add");
  // A list name with dots keeps them: "linalg" is no API family.
  EXPECT_EQ(api_list_name("linalg.vector_norm"), "linalg.vector_norm");
  EXPECT_EQ(api_list_name("Torch.linalg.vector_norm.0"), "linalg.vector_norm");
  EXPECT_EQ(api_list_name("elementwise"), "elementwise");
  EXPECT_TRUE(is_api_prefix("MintFunctional"));
  EXPECT_FALSE(is_api_prefix("Module"));
  EXPECT_FALSE(is_api_prefix("functional"));
}

TEST(ApiName, DetailsRowNames) {
  EXPECT_EQ(output_row_name("Functional.conv2d.3", ApiDirection::Forward, 0),
            "Functional.conv2d.3.forward.output.0");
  EXPECT_EQ(output_row_name("Aten.add.Tensor.0", ApiDirection::Backward, 12),
            "Aten.add.Tensor.0.backward.output.12");
  EXPECT_EQ(output_row_prefix("Torch.matmul.1", ApiDirection::Backward), "Torch.matmul.1.backward.output.");
}

TEST(ApiName, OperatorIsTheFirstNameSegment) {
  EXPECT_EQ(parse_api_name("Aten.add_.Tensor")->op(), "add_");
  EXPECT_EQ(parse_api_name("Torch.linalg.vector_norm.0")->op(), "linalg");
  EXPECT_EQ(parse_api_name("Functional.relu.0.forward")->op(), "relu");
  EXPECT_EQ(parse_api_name("Aten.add.Tensor")->name_segments(), 2u);
  EXPECT_EQ(parse_api_name("Aten.add")->name_segments(), 1u);
}

TEST(ApiName, RejectsMalformedNames) {
  for (const char* bad : {"", "relu", "relu.forward", "Functional..0", ".relu.0", "Functional.relu.",
                          "Torch.0.", "forward", "Functional.forward"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parse_api_name(bad));
  }
  // A counter beyond int64 is not a counter of a real dump: rejected rather than wrapped or thrown.
  EXPECT_FALSE(parse_api_name("Torch.matmul.99999999999999999999"));
  EXPECT_EQ(parse_api_name("Torch.matmul.9223372036854775807")->call_index, INT64_MAX);
}

TEST(ApiName, DirectionSpellings) {
  EXPECT_EQ(to_string(ApiDirection::Forward), "forward");
  EXPECT_EQ(to_string(ApiDirection::Backward), "backward");
  EXPECT_EQ(to_string(ApiDirection::None), "");
}

// The other splitters are calls into the one grammar: api_base_name gives parse_api_name's name (the short
// "Torch.matmul" included), msprobe's nullopt for a counted name outside run_ut's form; a dump key's parts
// are parse_api_name's, and a key it reads otherwise than spelled is no API record.
TEST(ApiName, BaseNameAndEntryNameAreTheGrammars) {
  EXPECT_EQ(api_base_name("Torch.matmul"), "matmul");
  EXPECT_EQ(api_base_name("Torch.matmul.0"), "matmul");
  EXPECT_EQ(api_base_name("Torch.matmul.0.forward"), "matmul");
  EXPECT_EQ(api_base_name("Aten.add.Tensor"), "add.Tensor");
  EXPECT_EQ(api_base_name("Torch.linalg.vector_norm.3"), "linalg.vector_norm");
  EXPECT_EQ(api_base_name("Torch.a.b.c.0"), std::nullopt);
  EXPECT_EQ(api_base_name("matmul"), std::nullopt);

  const EntryName e = parse_entry_name("Torch.linalg.vector_norm.12.backward");
  EXPECT_EQ(e.prefix, "Torch");
  EXPECT_EQ(e.api, "linalg.vector_norm");
  EXPECT_EQ(e.call_index, "12");
  EXPECT_EQ(e.full_name, "Torch.linalg.vector_norm.12");
  EXPECT_EQ(e.direction, EntryDirection::Backward);
  EXPECT_EQ(parse_entry_name("Functional.relu.01.forward").direction, EntryDirection::Unknown);
  const EntryName m = parse_entry_name("Module.conv1.Conv2d.forward.0");
  EXPECT_TRUE(m.is_module);
  EXPECT_EQ(m.full_name, "Module.conv1.Conv2d.0");

  EXPECT_EQ(classify_run_ut_key("Aten.add.Tensor.0.forward").full_name, "Aten.add.Tensor.0");
  EXPECT_EQ(classify_run_ut_key("Tensor.relu.0.backward").kind, RunUtKey::Kind::Backward);
  EXPECT_EQ(classify_run_ut_key("Tensor.relu.0.forward.x").kind, RunUtKey::Kind::Invalid);
}

}  // namespace
}  // namespace probe
