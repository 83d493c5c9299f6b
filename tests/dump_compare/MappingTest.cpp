// compare's mapping features on MindSpore-NPU vs PyTorch-bench dumps from
// tests/data/make_dump_mapping_fixtures.py: layer mapping (-lm, §3.4.5), API mapping records (-am FILE,
// §3.4.3), and the YAML reader behind every mapping file. The expected pairs in expected.json were worked out
// by hand from the fixture's model structure.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "CompareTable.h"
#include "common/RunCli.h"
#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "dump_compare/DumpCompareInternal.h"
#include "probe/dump_compare.h"
#include "probe/error.h"
#include "support/Yaml.h"

namespace fs = std::filesystem;
using namespace probe;
using probe::detail::YamlNode;

namespace {

const std::string kMap = std::string(PROBE_TEST_DATA_DIR) + "/dump_mapping/";

std::string side(const std::string& c, const std::string& s) {
  return kMap + c + "/" + s + "/step0/rank0/dump.json";
}

using probe::testing::ScratchDir;
using probe::testing::slurp;

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::trunc) << text; }

using probe::testing::CompareTable;

CompareTable compare(const std::string& npu, const std::string& bench, DumpCompareOptions o) {
  o.framework = Framework::MindSpore;
  return CompareTable{compare_dump_files(npu, bench, "", o)};
}

CompareTable layer(const std::string& yaml) {
  DumpCompareOptions o;
  o.layer_mapping = true;
  o.layer_mapping_file = yaml;
  return compare(side("layer", "npu"), side("layer", "bench"), o);
}

// The error a call throws, or Internal when it throws nothing.
template <class F>
Error error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return Error(ErrorKind::Internal, "no error");
}

#define EXPECT_MESSAGE_HAS(err, text) \
  EXPECT_NE(std::string((err).what()).find(text), std::string::npos) << (err).what()

// A copy of the layer fixture in a scratch directory, so files can be removed or broken.
std::string layer_copy(const ScratchDir& dir) {
  fs::copy(kMap + "layer", dir.path(), fs::copy_options::recursive);
  return dir.path().string();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// YAML reader

TEST(YamlReader, NestedMapsListsScalarsAndLines) {
  const YamlNode d = detail::yaml_parse(
      "# records\n- ms_api: Functional.gather\n  ms_args: [0, 2]\n  note: 'it''s'\n  empty:\n- {a: \"x y\", "
      "b: ~}\n",
      "r.yaml");
  ASSERT_EQ(d.kind, YamlNode::Kind::Sequence);
  ASSERT_EQ(d.items.size(), 2u);
  const YamlNode& r = d.items[0];
  ASSERT_EQ(r.kind, YamlNode::Kind::Mapping);
  EXPECT_EQ(r.line, 2u);
  ASSERT_EQ(r.members.size(), 4u);
  EXPECT_EQ(r.members[0].key.text, "ms_api");
  EXPECT_EQ(r.members[0].value.text, "Functional.gather");
  EXPECT_EQ(r.members[1].value.kind, YamlNode::Kind::Sequence);
  EXPECT_EQ(r.members[1].value.items[1].text, "2");
  EXPECT_EQ(r.members[1].key.line, 3u);
  EXPECT_EQ(r.members[2].value.text, "it's");
  EXPECT_FALSE(r.members[2].value.plain);
  EXPECT_TRUE(r.members[3].value.is_null());
  EXPECT_EQ(d.items[1].members[0].value.text, "x y");
  EXPECT_TRUE(d.items[1].members[1].value.is_null());
  EXPECT_FALSE(detail::yaml_parse("a: 'null'", "q.yaml").members[0].value.is_null());  // quoted: a string
  EXPECT_TRUE(detail::yaml_parse("", "empty.yaml").is_null());
  EXPECT_TRUE(detail::yaml_parse("# only a comment\n", "c.yaml").is_null());
}

TEST(YamlReader, BadInputsAreFormatErrorsWithFileAndLine) {
  auto fails = [](const std::string& text, const std::string& what, detail::YamlLimits lim = {}) {
    const Error e = error_of([&] { detail::yaml_parse(text, "in.yaml", lim); });
    EXPECT_EQ(e.kind(), ErrorKind::Format) << text;
    EXPECT_EQ(e.file(), "in.yaml");
    EXPECT_MESSAGE_HAS(e, what);
  };
  fails("a: b\n  c: d\n", "line 2");                  // bad indentation
  fails("a: [1, 2\n", "line 2");                      // unterminated flow list (found at end of input)
  fails("a: &x 1\nb: *x\n", "line 2: YAML aliases");  // no alias expansion
  fails("a: 1\n---\nb: 2\n", "line 2: only one YAML document");
  fails("? [1, 2]\n: x\n", "line 1: a list cannot be a mapping key");
  fails(std::string(100, '[') + std::string(100, ']'), "nested deeper than 32 levels");
  fails("a:\n  b:\n    c: 1\n", "line 3: YAML nested deeper than 2 levels", {2, 1000, 1000});
  fails("[1, 2, 3, 4]", "more than 3 YAML nodes", {32, 3, 1000});
  fails("a: b", "larger than 2 bytes", {32, 100, 2});
  fails(std::string("a: \x01\n"), "line 1");  // control character
  const Error io = error_of([] { detail::yaml_read_file("/nonexistent/map.yaml"); });
  EXPECT_EQ(io.kind(), ErrorKind::Io);
  EXPECT_EQ(io.file(), "/nonexistent/map.yaml");
  EXPECT_EQ(error_of([] { detail::yaml_read_file(PROBE_TEST_DATA_DIR); }).kind(),
            ErrorKind::Io);  // a directory
}

// ---------------------------------------------------------------------------------------------------------------
// Layer mapping (-lm)

TEST(LayerMapping, EveryEntryPairsAsWorkedOutByHand) {
  const CompareTable t = layer(kMap + "layer/layer_mapping.yaml");
  rapidjson::Document exp;
  exp.Parse(slurp(kMap + "layer/expected.json").c_str());
  ASSERT_FALSE(exp.HasParseError());
  const auto& entries = exp["entries"];
  std::size_t checked = 0, unmatched = 0;
  for (const auto& row : t.t.rows) {
    // Row names start with their entry key; the longest expected key that prefixes the row is its entry.
    std::string entry;
    for (auto& m : entries.GetObject()) {
      const std::string k = m.name.GetString();
      if (row[0].rfind(k + ".", 0) == 0 && k.size() > entry.size()) entry = k;
    }
    ASSERT_FALSE(entry.empty()) << row[0];
    const std::string want = entries[entry.c_str()].GetString();
    const std::string suffix = row[0].substr(entry.size());
    // scalar_value is MindSpore's name of torch_npu's `scale`: same suffix missing on the bench side.
    const bool none = want == "N/A" || suffix == ".input.scalar_value";
    EXPECT_EQ(row[1], none ? "N/A" : want + suffix) << row[0];
    unmatched += none;
    ++checked;
  }
  EXPECT_EQ(checked, 66u);
  EXPECT_EQ(unmatched, 5u);  // Tensor.__add__.0's three rows, two scalar_value rows
  // The pipeline-renumbered layer 3 (global) is PyTorch's layer 1 (local).
  EXPECT_EQ(
      t.bench(
          "Cell.network_with_loss.module.language_model.encoder.layers.3.ParallelTransformerLayer.forward.0."
          "output.0"),
      "Module.module.module.language_model.encoder.layers.1.ParallelTransformerLayer.forward.0.output.0");
  // Mapped rows join on the name only: Int32 vs torch.int64 and bool rows are compared, not demoted.
  const std::string emb =
      "Cell.network_with_loss.module.language_model.embedding.word_embeddings.VocabParallelEmbedding.forward."
      "0.input.0";
  EXPECT_EQ(t.cell(emb, "NPU Dtype"), "Int32");
  EXPECT_EQ(t.cell(emb, "Bench Dtype"), "torch.int64");
  EXPECT_EQ(t.cell(emb, "Max diff"), "0.0");
  // The broken flash attention output: statistics from numpy, and a Warning (§3.6).
  const std::string broken = exp["broken_row"].GetString();
  EXPECT_NEAR(std::stod(t.cell(broken, "Max diff")), exp["broken_max_diff"].GetDouble(), 1e-6);
  EXPECT_EQ(t.cell(broken, "Result"), "Warning");
  EXPECT_EQ(t.cell("Functional.flash_attention_score.0.forward.output.0", "Result"), "");
}

TEST(LayerMapping, WithoutYamlOnlyTheLayerStructureMaps) {
  const CompareTable t = layer("");
  // The stack shows Tensor.__add__.0 ran inside mindspore's __getitem__: no bench entry has that scope, and
  // the first plain top-level __add__ on each side pair up although their counters differ.
  EXPECT_EQ(t.bench("Tensor.__add__.0.forward.output.0"), "N/A");
  EXPECT_EQ(t.bench("Tensor.__add__.1.forward.output.0"), "Tensor.__add__.0.forward.output.0");
  // network_with_loss vs module at the root: nothing below it maps without the yaml's rename.
  EXPECT_EQ(t.bench("Mint.cos.0.forward.output.0"), "N/A");
  EXPECT_EQ(
      t.bench("Cell.network_with_loss.module.language_model.encoder.ParallelTransformer.forward.0.output.0"),
      "N/A");
}

TEST(LayerMapping, IdentityMapsAcrossPrefixesAndCountersByPosition) {
  // Same layer paths on both sides; MindSpore's Mint.matmul.3 (three calls elsewhere before) is the first
  // matmul inside net.fc1 as PyTorch's Torch.matmul.0 is.
  const ScratchDir scratch("mapping_identity");
  const std::string root = scratch.path().string();
  for (const char* s : {"npu", "bench"}) fs::create_directories(root + "/" + s);
  auto tensor = [](const char* dt, double v) {
    const char* type = std::string_view(dt).rfind("torch.", 0) == 0 ? "torch.Tensor" : "mindspore.Tensor";
    return fmt::format(
        R"({{"type": "{}", "dtype": "{}", "shape": [2], "Max": {}, "Min": 0, "Mean": 0, "Norm": 1}})", type,
        dt, v);
  };
  auto api = [&](const char* dt, double v) {
    return fmt::format(R"({{"input_args": [{}], "input_kwargs": {{}}, "output": [{}]}})", tensor(dt, v),
                       tensor(dt, v));
  };
  write(root + "/npu/dump.json",
        fmt::format(R"({{"task": "statistics", "level": "mix", "framework": "mindspore", "data": {{
          "Mint.matmul.0.forward": {}, "Mint.matmul.1.forward": {}, "Mint.matmul.2.forward": {},
          "Mint.matmul.3.forward": {}, "Cell.net.fc1.Dense.forward.0": {}}}}})",
                    api("Float32", 1), api("Float32", 2), api("Float32", 3), api("Float32", 4),
                    api("Float32", 5)));
  write(root + "/npu/construct.json", R"({"Mint.matmul.0.forward": null, "Mint.matmul.1.forward": null,
    "Mint.matmul.2.forward": null, "Mint.matmul.3.forward": "Cell.net.fc1.Dense.forward.0",
    "Cell.net.fc1.Dense.forward.0": null})");
  write(root + "/npu/stack.json", "{}");
  write(root + "/bench/dump.json",
        fmt::format(R"({{"task": "statistics", "level": "mix", "framework": "pytorch", "data": {{
          "Torch.matmul.0.forward": {}, "Module.net.fc1.Dense.forward.0": {}}}}})",
                    api("torch.float32", 4.5), api("torch.float32", 5)));
  write(
      root + "/bench/construct.json",
      R"({"Torch.matmul.0.forward": "Module.net.fc1.Dense.forward.0", "Module.net.fc1.Dense.forward.0": ""})");
  write(root + "/bench/stack.json", "{}");
  DumpCompareOptions o;
  o.layer_mapping = true;
  const CompareTable t = compare(root + "/npu/dump.json", root + "/bench/dump.json", o);
  EXPECT_EQ(t.bench("Mint.matmul.3.forward.output.0"), "Torch.matmul.0.forward.output.0");
  EXPECT_EQ(t.cell("Mint.matmul.3.forward.output.0", "Max diff"), "-0.5");
  EXPECT_EQ(t.bench("Mint.matmul.0.forward.output.0"), "N/A");
  EXPECT_EQ(t.bench("Cell.net.fc1.Dense.forward.0.input.0"), "Module.net.fc1.Dense.forward.0.input.0");
  // Without -lm the same dumps match nothing across frameworks.
  const CompareTable plain = compare(root + "/npu/dump.json", root + "/bench/dump.json", {});
  EXPECT_EQ(plain.bench("Mint.matmul.3.forward.output.0"), "N/A");
}

namespace {

dump_compare_detail::LayerItem item(std::string key, std::string type, std::string state, std::string scope) {
  dump_compare_detail::LayerItem it;
  it.key = std::move(key);
  it.type_name = std::move(type);
  it.state = std::move(state);
  it.full_scope = std::move(scope);
  return it;
}

}  // namespace

TEST(LayerMapping, LongestMultiSegmentKeyFirstCellAliasAndOrdinals) {
  using dump_compare_detail::layer_entry_mapping;
  const std::vector<dump_compare_detail::LayerItem> npu = {
      item("Cell.net.blk.Block.forward.0", "Block", "forward", "Cell.net.blk"),
      item("Mint.add.0.forward", "add", "forward", "Cell.net.blk.helper.add"),
      item("Mint.mul.0.forward", "mul", "forward", "Cell.net.blk.helper.mul"),
      item("Mint.mul.1.forward", "mul", "forward", "Cell.net.blk.helper.mul"),
      item("Mint.mul.1.backward", "mul", "backward", "Cell.net.blk.helper.mul")};
  const std::vector<dump_compare_detail::LayerItem> bench = {
      item("Module.model.block.Block.forward.0", "Block", "forward", "Module.model.block"),
      item("Torch.add.0.forward", "add", "forward", "Module.model.block.add"),
      item("Torch.mul.0.forward", "mul", "forward", "Module.model.block.inner.mul"),
      item("Torch.mul.0.backward", "mul", "backward", "Module.model.block.inner.mul")};
  const ScratchDir scratch("mapping_rules");
  const std::string dir = scratch.path().string();
  // helper.add (two segments) beats helper (one), whatever the order in the file; Cell is TopLayer's old
  // name.
  write(dir + "/m.yaml",
        "Cell:\n  net: model\nBlock:\n  helper: inner(SomeModule)\n  helper.add: add\n  blk: x\n");
  auto m = layer_entry_mapping(npu, bench, dir + "/m.yaml");
  ASSERT_EQ(m.size(), 5u);
  // Node "net" has no entry, so its type is its own name: no rule renames "blk", and model.blk does not
  // exist.
  EXPECT_EQ(m[0].second, "N/A");
  // A two-segment key at the root renames both levels at once.
  write(dir + "/m.yaml",
        "Cell:\n  net.blk: model.block\nBlock:\n  helper: inner(SomeModule)\n  helper.add: add\n");
  m = layer_entry_mapping(npu, bench, dir + "/m.yaml");
  EXPECT_EQ(m[0].second, "Module.model.block.Block.forward.0");
  EXPECT_EQ(m[1].second, "Torch.add.0.forward");   // helper.add -> add
  EXPECT_EQ(m[2].second, "Torch.mul.0.forward");   // helper -> inner, first mul
  EXPECT_EQ(m[3].second, "N/A");                   // second forward mul: the bench has one
  EXPECT_EQ(m[4].second, "Torch.mul.0.backward");  // the first backward, ordinals count per state
  // Without the file only identical paths map.
  m = layer_entry_mapping(npu, bench, "");
  for (const auto& [n, b] : m) EXPECT_EQ(b, "N/A") << n;
}

TEST(LayerMapping, PipelineRenumberingRebasesLayersUnderParallelTransformer) {
  const Dump d = Dump::open(side("layer", "npu"));
  const auto dir = fs::path(side("layer", "npu")).parent_path();
  const auto items =
      dump_compare_detail::layer_items(d, StackInfo::open((dir / "stack.json").string()),
                                       ConstructInfo::open((dir / "construct.json").string()), true);
  auto scope_of = [&](const std::string& key) {
    for (const auto& it : items)
      if (it.key == key) return it.full_scope;
    ADD_FAILURE() << key;
    return std::string();
  };
  const std::string enc = "Cell.network_with_loss.module.language_model.encoder";
  EXPECT_EQ(scope_of(enc + ".layers.2.ParallelTransformerLayer.forward.0"), enc + ".layers.0");
  EXPECT_EQ(scope_of(enc + ".layers.3.input_norm.FusedRMSNorm.forward.0"), enc + ".layers.1.input_norm");
  EXPECT_EQ(scope_of("Primitive.norm.RmsNorm.1.forward"), enc + ".layers.1.input_norm.RmsNorm");
  EXPECT_EQ(scope_of(enc + ".ParallelTransformer.forward.0"), enc);
  // The stack (grouped stack.json format) puts mindspore's __getitem__ into the scope; backward entries take
  // their forward entry's scope.
  EXPECT_EQ(scope_of("Tensor.__add__.0.forward"), "TopLayer.__getitem__.__add__");
  EXPECT_EQ(scope_of("Tensor.__add__.1.forward"), "TopLayer.__add__");
  EXPECT_EQ(scope_of("Functional.flash_attention_score.1.backward"),
            enc + ".layers.1.attention.flash_attention_score");
  // parameters_grad: the layer's own node. DECISIONS (compare -lm): msprobe puts the numbered form one level
  // deeper (…attention.attention), where a renamed attribute can never map.
  EXPECT_EQ(scope_of(enc + ".layers.2.attention.ParallelAttention.parameters_grad.0"),
            enc + ".layers.0.attention");
  // Without a ParallelTransformer entry the global numbers stay, and those layers find no PyTorch partner.
  const ScratchDir scratch("mapping_norenumber");
  const std::string root = layer_copy(scratch);
  const std::string npu = root + "/npu/step0/rank0/dump.json";
  std::string text = slurp(npu);
  for (std::size_t p; (p = text.find("encoder.ParallelTransformer.forward.0")) != std::string::npos;)
    text.replace(p, 37, "encoder.TransformerStack.forward.000");
  write(npu, text);
  DumpCompareOptions o;
  o.layer_mapping = true;
  o.layer_mapping_file = root + "/layer_mapping.yaml";
  const CompareTable t = compare(npu, root + "/bench/step0/rank0/dump.json", o);
  EXPECT_EQ(t.bench(enc + ".layers.2.ParallelTransformerLayer.forward.0.output.0"), "N/A");
  EXPECT_EQ(t.bench("Tensor.__add__.1.forward.output.0"), "Tensor.__add__.0.forward.output.0");
}

TEST(LayerMapping, BadInputsAreClearErrors) {
  DumpCompareOptions o;
  o.layer_mapping = true;
  const ScratchDir scratch("mapping_bad");
  const std::string root = layer_copy(scratch);
  const std::string npu = root + "/npu/step0/rank0/dump.json", bench = root + "/bench/step0/rank0/dump.json";
  // Missing stack.json / construct.json beside either dump.json: Io naming the file.
  fs::rename(root + "/bench/step0/rank0/stack.json", root + "/stack.json");
  Error e = error_of([&] { compare(npu, bench, o); });
  EXPECT_EQ(e.kind(), ErrorKind::Io);
  EXPECT_EQ(e.file(), root + "/bench/step0/rank0/stack.json");
  EXPECT_MESSAGE_HAS(e, "needs stack.json and construct.json");
  fs::rename(root + "/stack.json", root + "/bench/step0/rank0/stack.json");
  fs::rename(root + "/npu/step0/rank0/construct.json", root + "/construct.json");
  e = error_of([&] { compare(npu, bench, o); });
  EXPECT_EQ(e.kind(), ErrorKind::Io);
  EXPECT_EQ(e.file(), root + "/npu/step0/rank0/construct.json");
  // An L1 dump's empty construct.json: DECISIONS (compare -lm), msprobe silently falls back to name matching.
  write(root + "/npu/step0/rank0/construct.json", "{}");
  e = error_of([&] { compare(npu, bench, o); });
  EXPECT_EQ(e.kind(), ErrorKind::Format);
  EXPECT_MESSAGE_HAS(e, "construct.json is empty");
  fs::rename(root + "/construct.json", root + "/npu/step0/rank0/construct.json");
  // Malformed / wrongly shaped / too deep yaml: Format with the file and the line.
  const std::string y = root + "/m.yaml";
  struct Case {
    const char* text;
    const char* what;
  } cases[] = {
      {"TopLayer:\n  network_with_loss: module\n bad: indent\n", "line 3"},
      {"TopLayer: module\n", "line 1: the value of class 'TopLayer' must be a mapping"},
      {"- TopLayer\n", "line 1: a layer mapping is {ClassName: {npu_attr: bench_attr}}"},
      {"TopLayer:\n  network_with_loss: [module]\n", "line 2: class 'TopLayer'"},
      {"TopLayer:\n  a: {b: {c: {d: {e: {f: {g: {h: {i: {j: {k: {l: {m: {n: {o: {p: {q: {r: {s: {t: {u: "
       "{v: {w: {x: {y: {z: {A: {B: {C: {D: {E: {F: {G: 1}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}\n",
       "nested deeper than 32 levels"}};
  for (const Case& c : cases) {
    write(y, c.text);
    o.layer_mapping_file = y;
    e = error_of([&] { compare(npu, bench, o); });
    EXPECT_EQ(e.kind(), ErrorKind::Format) << c.text;
    EXPECT_EQ(e.file(), y);
    EXPECT_MESSAGE_HAS(e, c.what);
  }
  o.layer_mapping_file = root + "/no_such.yaml";
  EXPECT_EQ(error_of([&] { compare(npu, bench, o); }).kind(), ErrorKind::Io);
  // A PyTorch NPU dump, and -lm together with another mapping, are refused.
  o.layer_mapping_file.clear();
  e = error_of([&] { compare_dump_files(bench, bench, "", o); });
  EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  EXPECT_MESSAGE_HAS(e, "only for MindSpore");
  // DECISIONS (compare -lm): msprobe lets -lm silently override -dm and mix with -am/-cm; probe refuses.
  o.data_mapping = y;
  e = error_of([&] { compare(npu, bench, o); });
  EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  EXPECT_MESSAGE_HAS(e, "cannot be combined");
  o.data_mapping.clear();
  o.api_mapping = true;
  e = error_of([&] { compare(npu, bench, o); });
  EXPECT_MESSAGE_HAS(e, "cannot be combined");
  o.api_mapping = false;
  o.cell_mapping = true;
  e = error_of([&] { compare(npu, bench, o); });
  EXPECT_MESSAGE_HAS(e, "cannot be combined");
}

// ---------------------------------------------------------------------------------------------------------------
// API mapping records (-am FILE)

TEST(ApiMapping, RecordsRewriteIndicesAndAbandonUnlistedOnes) {
  DumpCompareOptions o;
  o.api_mapping = true;
  o.api_mapping_file = kMap + "api/api_mapping.yaml";
  const CompareTable t = compare(side("api", "npu"), side("api", "bench"), o);
  // ops.gather(params, indices, axis) vs torch.gather(input, dim, index): the last two swap.
  EXPECT_EQ(t.bench("Functional.gather.0.forward.input.0"), "Torch.gather.0.forward.input.0");
  EXPECT_EQ(t.bench("Functional.gather.0.forward.input.1"), "Torch.gather.0.forward.input.2");
  EXPECT_EQ(t.bench("Functional.gather.0.forward.input.2"), "Torch.gather.0.forward.input.1");
  EXPECT_EQ(t.bench("Functional.gather.0.forward.output.0"), "Torch.gather.0.forward.output.0");
  EXPECT_EQ(t.cell("Functional.gather.0.forward.input.1", "Max diff"), "0.0");  // the same indices
  // Unlisted indices never match, although the bench has rows of the same name and shape.
  EXPECT_EQ(t.bench("Functional.flash_attention_score.0.forward.input.2"),
            "NPU.npu_fusion_attention.0.forward.input.2");
  EXPECT_EQ(t.bench("Functional.flash_attention_score.0.forward.input.3"), "N/A");
  EXPECT_EQ(t.bench("Functional.flash_attention_score.0.forward.input.input_layout"), "N/A");
  EXPECT_EQ(t.bench("Functional.flash_attention_score.0.forward.output.1"), "N/A");
  // The built-in table maps APIs no record names.
  EXPECT_EQ(t.bench("Functional.matmul.0.forward.output.0"), "Torch.matmul.0.forward.output.0");
  // Without the file: the table only; gather and flash_attention_score have no counterpart.
  o.api_mapping_file.clear();
  const CompareTable plain = compare(side("api", "npu"), side("api", "bench"), o);
  EXPECT_EQ(plain.bench("Functional.gather.0.forward.input.0"), "N/A");
  EXPECT_EQ(plain.bench("Functional.matmul.0.forward.output.0"), "Torch.matmul.0.forward.output.0");
  // Without -am at all nothing crosses frameworks.
  const CompareTable none = compare(side("api", "npu"), side("api", "bench"), {});
  EXPECT_EQ(none.bench("Functional.matmul.0.forward.output.0"), "N/A");
}

TEST(ApiMapping, OneRecordFileOutputAliasAndBadRecords) {
  using dump_compare_detail::read_api_mapping;
  const ScratchDir scratch("mapping_am");
  const std::string dir = scratch.path().string();
  const std::string y = dir + "/a.yaml";
  // msprobe's documentation writes one record as the whole file; msprobe's code reads ms_output.
  write(y,
        "ms_api: Functional.abs\npt_api: Torch.abs\nms_args:\n- 0\npt_args:\n- 0\nms_output: [0]\npt_output: "
        "[0]\n");
  auto r = read_api_mapping(y);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].pt_api, "Torch.abs");
  ASSERT_EQ(r[0].ms[1].size(), 1u);
  EXPECT_EQ(r[0].pt[1][0], "0");
  write(y, "");
  EXPECT_TRUE(read_api_mapping(y).empty());
  struct Case {
    const char* text;
    const char* what;
  } cases[] = {
      {"- ms_api: Functional.abs\n  pt_api: Torch.abs\n  ms_args: [0, 1]\n  pt_args: [0]\n",
       "line 3: ms_args has 2 indices but pt_args has 1"},
      {"- ms_api: Functional.abs\n  pt_api: Torch.abs\n  ms_argz: [0]\n", "line 3: unknown key 'ms_argz'"},
      {"- ms_api: Functional.abs\n  ms_args: [0]\n  pt_args: [0]\n",
       "line 1: an API mapping record needs ms_api and pt_api"},
      {"- ms_api: abs\n  pt_api: Torch.abs\n", "'abs' is not a two-part API name"},
      {"- ms_api: Functional.abs\n  pt_api: Torch.abs\n  ms_args: [0, 0]\n  pt_args: [0, 1]\n",
       "line 3: index 0 appears twice in 'ms_args'"},
      {"- ms_api: Functional.abs\n  pt_api: Torch.abs\n  ms_args: 0\n  pt_args: [0]\n",
       "line 3: 'ms_args' must be a list"},
      {"- [Functional.abs, Torch.abs]\n", "line 1: an API mapping record must be a mapping"},
      {"ms_api: Functional.abs\npt_api: [Torch.abs\n", "line 3"},
  };
  for (const Case& c : cases) {
    write(y, c.text);
    const Error e = error_of([&] { read_api_mapping(y); });
    EXPECT_EQ(e.kind(), ErrorKind::Format) << c.text;
    EXPECT_EQ(e.file(), y);
    EXPECT_MESSAGE_HAS(e, c.what);
  }
  // Through compare: a PyTorch NPU dump rejects -am / -cm with a clear error.
  DumpCompareOptions o;
  o.api_mapping_file = kMap + "api/api_mapping.yaml";
  const Error e = error_of([&] { compare_dump_files(side("api", "bench"), side("api", "bench"), "", o); });
  EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  EXPECT_EQ(e.field(), "-am");
  o = {};
  o.cell_mapping = true;
  EXPECT_EQ(error_of([&] { compare_dump_files(side("api", "bench"), side("api", "bench"), "", o); }).field(),
            "-cm");
}

TEST(ApiMapping, BuiltInTableIsShippedData) {
  const auto table =
      dump_compare_detail::read_ms_to_pt_table(std::string(PROBE_SOURCE_DIR) + "/data/ms_to_pt_api.yaml");
  EXPECT_GT(table.size(), 150u);
  EXPECT_EQ(table.at("Functional.dense"), "Functional.linear");
  EXPECT_EQ(table.at("Tensor.swapaxes"), "Tensor.transpose");
  for (const auto& [ms, pt] : table) EXPECT_NE(ms, pt);  // identities are left out
}

// ---------------------------------------------------------------------------------------------------------------
// CLI

TEST(MappingCli, LayerAndApiMappingExitCodesAndMessages) {
  using probe::testing::run_cli;
  const ScratchDir out_scratch("mapping_cli");
  const std::string out = out_scratch.path().string();
  auto r = run_cli("-f mindspore compare -i compare.json -o " + out +
                       " --no-xlsx --timestamp 20250101000000 -lm layer_mapping.yaml",
                   kMap + "layer");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(slurp(out + "/compare_result_20250101000000.csv")
                .find("Mint.cos.1.forward.output.0,Torch.cos.1.forward.output.0"),
            std::string::npos);
  // -lm without a file is accepted (identity mapping); -am FILE is no longer refused.
  r = run_cli("-f mindspore compare -i compare.json -o " + out + " --no-xlsx -lm -c", kMap + "layer");
  EXPECT_EQ(r.code, 0) << r.out;
  r = run_cli("-f mindspore compare -i compare.json -o " + out + " --no-xlsx -am api_mapping.yaml",
              kMap + "api");
  EXPECT_EQ(r.code, 0) << r.out;
  // PyTorch rejects the MindSpore-only mappings (exit 2).
  r = run_cli("-f pytorch compare -i compare.json -o " + out + " -lm", kMap + "layer");
  EXPECT_EQ(r.code, 2) << r.out;
  // A malformed yaml: exit 4, the file and the line in the message.
  write(out + "/bad.yaml", "TopLayer:\n  a: b\n c: d\n");
  r = run_cli("-f mindspore compare -i compare.json -o " + out + " -lm " + out + "/bad.yaml", kMap + "layer");
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.out.find(out + "/bad.yaml"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("line 3"), std::string::npos) << r.out;
  // A missing construct.json: exit 3.
  const ScratchDir root_scratch("mapping_cli_missing");
  const std::string root = layer_copy(root_scratch);
  fs::remove(root + "/bench/step0/rank0/construct.json");
  r = run_cli("-f mindspore compare -i compare.json -o " + out + " -lm", root);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("construct.json"), std::string::npos) << r.out;
  r = run_cli("compare --help", kMap);
  ASSERT_EQ(r.code, 0);
  for (const char* s :
       {"--layer_mapping [FILE]", "--api_mapping [FILE]", "ms_outputs", "ParallelTransformer"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}
