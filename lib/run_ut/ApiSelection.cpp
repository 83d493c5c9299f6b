#include "run_ut/ApiSelection.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "probe/error.h"
#include "support/FileOps.h"
#include "support/JsonDocument.h"

namespace probe::rut {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// Tensor methods the MindSpore checker accepts (checker_support_api.yaml, `tensor`).
constexpr std::array<std::string_view, 59> kMindSporeTensorApis = {"add_",
                                                                   "add",
                                                                   "addmm_",
                                                                   "all",
                                                                   "allclose",
                                                                   "any",
                                                                   "bool",
                                                                   "byte",
                                                                   "ceil",
                                                                   "clamp",
                                                                   "contiguous",
                                                                   "copy_",
                                                                   "cos",
                                                                   "clone",
                                                                   "cumprod",
                                                                   "expand_as",
                                                                   "flatten",
                                                                   "float",
                                                                   "half",
                                                                   "int",
                                                                   "is_contiguous",
                                                                   "isnan",
                                                                   "item",
                                                                   "log",
                                                                   "log2",
                                                                   "long",
                                                                   "masked_fill",
                                                                   "max",
                                                                   "mean",
                                                                   "min",
                                                                   "numel",
                                                                   "numpy",
                                                                   "repeat",
                                                                   "repeat_interleave",
                                                                   "reshape",
                                                                   "round",
                                                                   "select",
                                                                   "sin",
                                                                   "size",
                                                                   "split",
                                                                   "sqrt",
                                                                   "square",
                                                                   "sub",
                                                                   "swapaxes",
                                                                   "to",
                                                                   "t",
                                                                   "tolist",
                                                                   "topk",
                                                                   "transpose",
                                                                   "trunc",
                                                                   "type",
                                                                   "unsqueeze",
                                                                   "view",
                                                                   "view_as",
                                                                   "fill_",
                                                                   "floor_",
                                                                   "clamp_",
                                                                   "type_as",
                                                                   "zero_"};

}  // namespace

RunUtConfig load_run_ut_config(const std::string& path) {
  std::string text = detail::read_whole_file(path, "cannot open config", true);
  const rapidjson::Document doc = detail::parse_json_document(text, path);
  if (!doc.IsObject()) throw Error(ErrorKind::Format, "config must be a JSON object", path);
  RunUtConfig cfg;
  // Read through a const view: comparing rapidjson's mutable member iterators is ambiguous under C++20's
  // reversed operators (clang -Wambiguous-reversed-operator); the const ones compare cleanly.
  const rapidjson::Value& root = doc;
  auto section = root.FindMember("run_ut");
  if (section == root.MemberEnd() || section->value.IsNull()) return cfg;
  if (!section->value.IsObject()) throw Error(ErrorKind::Format, "must be an object", path, "run_ut");
  const auto& s = section->value;
  auto read_list = [&](const char* key, std::vector<std::string>& out) {
    auto it = s.FindMember(key);
    if (it == s.MemberEnd() || it->value.IsNull()) return;
    if (!it->value.IsArray())
      throw Error(ErrorKind::Format, "must be a list of API names", path, std::string("run_ut.") + key);
    for (const auto& v : it->value.GetArray()) {
      if (!v.IsString())
        throw Error(ErrorKind::Format, "must be a list of API names", path, std::string("run_ut.") + key);
      out.emplace_back(v.GetString(), v.GetStringLength());
    }
  };
  read_list("white_list", cfg.white_list);
  read_list("black_list", cfg.black_list);
  auto edp = s.FindMember("error_data_path");
  if (edp != s.MemberEnd() && !edp->value.IsNull()) {
    if (!edp->value.IsString())
      throw Error(ErrorKind::Format, "must be a path", path, "run_ut.error_data_path");
    cfg.error_data_path = edp->value.GetString();
  }
  return cfg;
}

std::optional<std::string> pytorch_skip_reason(const std::string& full, const std::optional<ApiName>& parsed,
                                               const RunUtConfig& config) {
  if (!parsed || parsed->prefix == "Distributed" || parsed->prefix == "MindSpeed" || !parsed->run_ut_form())
    return "API " + full + " not support for run ut. SKIP.";
  const ApiName& api = *parsed;
  // Factory/conversion APIs produce uninitialised or device-bound data: msprobe never checks them.
  static const std::vector<std::string> kAlwaysBlack = {
      "to", "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_with_format"};
  bool black = contains(config.black_list, api.name) || contains(kAlwaysBlack, api.name);
  bool not_white = !config.white_list.empty() && !contains(config.white_list, api.name);
  if (black || not_white) return "API " + api.name + " in black list or not in white list. SKIP.";
  return std::nullopt;
}

std::optional<std::string> mindspore_bench_name(const std::string& full, bool mindtorch) {
  const std::optional<ApiName> api = parse_api_name(full);
  if (!api || !api->call_index) return std::nullopt;  // the key (with .forward) needs >= 4 segments
  const std::string& type = api->prefix;
  const std::string& real = api->name;
  const std::string index = std::to_string(*api->call_index);
  if (mindtorch) {
    if (type == "Torch" || type == "Functional" || type == "Tensor") return full;
    return std::nullopt;
  }
  if (type == "Mint") return "Torch." + real + "." + index;
  if (type == "MintFunctional") return "Functional." + real + "." + index;
  if (type == "Tensor") {
    if (std::find(kMindSporeTensorApis.begin(), kMindSporeTensorApis.end(), real) ==
        kMindSporeTensorApis.end())
      return std::nullopt;
    return "Tensor." + real + "." + index;
  }
  if (type == "Functional" && real == "flash_attention_score") return "NPU.npu_fusion_attention." + index;
  return std::nullopt;
}

}  // namespace probe::rut
