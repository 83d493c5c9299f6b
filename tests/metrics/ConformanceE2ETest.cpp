// Byte-exact reproduction of msprobe HEAD's run_ut compare stage (conformance/msprobe_e2e, profile msprobe):
// the inputs are msprobe's own JSON dumps of each API's bench/device outputs, the expected CSVs are the files
// msprobe wrote from them.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/Slurp.h"
#include "probe/csv.h"
#include "probe/output_compare.h"
#include "run_ut/RowFormat.h"

namespace probe {
namespace {

namespace fs = std::filesystem;
const fs::path kE2E = fs::path(PROBE_CONFORMANCE_DIR) / "msprobe_e2e";

using testing::slurp;

Tensor tensor_from(const std::vector<double>& v, DType dtype) {
  Tensor t64 = Tensor::from_values<double>(v, Shape{static_cast<std::int64_t>(v.size())});
  return t64.to(dtype);
}

// A flat JSON list of float strings / ints / bools as a 1-d tensor of `dtype`.
Tensor json_tensor(const rapidjson::Value& list, DType dtype) {
  std::vector<double> v;
  for (const auto& x : list.GetArray()) {
    if (x.IsString())
      v.push_back(std::strtod(x.GetString(), nullptr));
    else if (x.IsBool())
      v.push_back(x.GetBool() ? 1 : 0);
    else
      v.push_back(x.GetDouble());
  }
  return tensor_from(v, dtype);
}

// torch's repr "tensor([a, b], dtype=torch.float16)" (values are exact in these fixtures).
Tensor parse_tensor_repr(const std::string& s) {
  auto open = s.find('['), close = s.find(']');
  std::string body = s.substr(open + 1, close - open - 1);
  std::vector<double> v;
  bool is_float = false;
  std::stringstream ss(body);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find('.') != std::string::npos) is_float = true;
    v.push_back(std::strtod(item.c_str(), nullptr));
  }
  DType dt = is_float ? DType::Float32 : DType::Int64;
  auto d = s.find("dtype=");
  if (d != std::string::npos) {
    auto end = s.find_first_of(")", d);
    dt = *parse_dtype(s.substr(d + 6, end - d - 6));
  }
  return tensor_from(v, dt);
}

Value repr_value(const std::string& s) {
  if (s == "None") return Value(NoneValue{});
  if (s.rfind("{", 0) == 0) {
    // Dict: only its key set matters to msprobe.
    return Value(OpaqueValue{"dict", s.substr(1, s.find(':') - 1)});
  }
  if (s.rfind("(tensor", 0) == 0) {
    std::vector<Value> items;
    std::size_t pos = s.find("tensor(");
    while (pos != std::string::npos) {
      std::size_t next = s.find("tensor(", pos + 1);
      items.push_back(
          parse_tensor_repr(s.substr(pos, next == std::string::npos ? std::string::npos : next - pos)));
      pos = next;
    }
    return Value(std::move(items), true);
  }
  return Value(static_cast<std::int64_t>(std::stoll(s)));
}

Value json_value(const rapidjson::Value& v, const std::string& dtype) {
  if (v.IsArray()) return Value(json_tensor(v, *parse_dtype(dtype)));
  return repr_value(v.GetString());
}

std::string run_side(const std::string& side, std::string& result_csv, Profile profile) {
  std::string text = slurp(kE2E / (side + "_inputs.json"));
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  EXPECT_FALSE(doc.HasParseError());
  Standards cfg = Standards::builtin(profile);
  std::string details = "\xEF\xBB\xBF" + csv_encode_row(details_csv_header()) + "\r\n";
  result_csv = "\xEF\xBB\xBF" + csv_encode_row(result_csv_header()) + "\r\n";
  const rapidjson::Value& root = doc;  // const iterators: clang -Wambiguous-reversed-operator
  for (auto it = root.MemberBegin(); it != root.MemberEnd(); ++it) {
    const auto& api = it->value;
    OutputCompareInput in;
    in.full_api_name = it->name.GetString();
    in.bench_output = json_value(api["bench"], api["bench_dtype"].GetString());
    in.device_output = json_value(api["device"], api["device_dtype"].GetString());
    if (api.HasMember("bench_grad")) {
      std::vector<Value> bg, dg;
      for (const auto& g : api["bench_grad"].GetArray())
        bg.push_back(json_tensor(g, *parse_dtype(api["bench_dtype"].GetString())));
      for (const auto& g : api["device_grad"].GetArray())
        dg.push_back(json_tensor(g, *parse_dtype(api["device_dtype"].GetString())));
      in.bench_grad = Value(std::move(bg));
      in.device_grad = Value(std::move(dg));
    }
    // run_ut's backward message for APIs without backward input data (precheck.md §6.9).
    if (api_base_name(in.full_api_name) == "repeat_interleave")
      in.backward_message = "This API does not have backward input data, skip backward.";
    OutputCompareResult r = compare_output(in, cfg);
    for (const auto& row : r.rows) details += csv_encode_row(row.to_csv()) + "\r\n";
    const rut::ResultRow result{in.full_api_name, r.forward_status, r.backward_status, r.result_message};
    result_csv += csv_encode_row(rut::run_ut_format(Framework::PyTorch).result_cells(result)) + "\r\n";
    std::string ret = std::string("(") + (r.forward_ok ? "True" : "False") + ", " +
                      (r.backward_ok ? "True" : "False") + ")";
    if (profile == Profile::MsProbe) {
      EXPECT_EQ(ret, api["ret"].GetString()) << in.full_api_name;
    }
  }
  return details;
}

class ConformanceE2E : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // The data is in the tree (tests/data/conformance): missing means broken, never "skip".
    ASSERT_TRUE(fs::exists(kE2E / (GetParam() + "_inputs.json"))) << "conformance data missing at " << kE2E;
  }
};

TEST_P(ConformanceE2E, DetailsAndResultBytesMatchMsprobeHead) {
  const std::string side = GetParam();
  std::string result;
  std::string details = run_side(side, result, Profile::MsProbe);
  const std::string want_details =
      slurp(kE2E / "head" / (side + "_accuracy_checking_details_20250101000000.csv"));
  const std::string want_result =
      slurp(kE2E / "head" / (side + "_accuracy_checking_result_20250101000000.csv"));
  EXPECT_EQ(details, want_details);
  EXPECT_EQ(result, want_result);
  if (details != want_details || result != want_result) {
    // Keep what probe wrote for `diff` (a unique directory: concurrent runs never overwrite each other).
    char tmpl[] = "/tmp/probe-conformance-XXXXXX";
    if (::mkdtemp(tmpl) != nullptr) {
      std::ofstream(std::string(tmpl) + "/" + side + "_details.csv", std::ios::binary) << details;
      std::ofstream(std::string(tmpl) + "/" + side + "_result.csv", std::ios::binary) << result;
      ADD_FAILURE() << "probe's files kept in " << tmpl;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sides, ConformanceE2E, ::testing::Values("npu", "gpu"));

}  // namespace
}  // namespace probe
