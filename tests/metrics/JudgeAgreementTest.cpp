// probe::judge agrees with msprobe's own CSVs on the conformance case (tests/data/conformance/msprobe_e2e):
// its RunUt verdict is the Status msprobe HEAD's run_ut wrote for each NPU output, and its PrecisionStandard
// verdict, with the GPU output as the reference device, is the 比对结果 and 比对算法 that msprobe's
// api_precision_compare wrote for the two details files.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/Slurp.h"
#include "probe/csv.h"
#include "probe/judge.h"
#include "probe/output_compare.h"

namespace probe {
namespace {

namespace fs = std::filesystem;
const fs::path kE2E = fs::path(PROBE_CONFORMANCE_DIR) / "msprobe_e2e";

rapidjson::Document read_json(const fs::path& p) {
  rapidjson::Document doc;
  doc.Parse(testing::slurp(p).c_str());
  EXPECT_FALSE(doc.HasParseError()) << p;
  return doc;
}

Tensor flat(const std::vector<double>& v, DType dtype) {
  return Tensor::from_values<double>(v, Shape{static_cast<std::int64_t>(v.size())}).to(dtype);
}

Tensor json_tensor(const rapidjson::Value& list, DType dtype) {
  std::vector<double> v;
  for (const auto& x : list.GetArray())
    v.push_back(x.IsString() ? std::strtod(x.GetString(), nullptr)
                : x.IsBool() ? x.GetBool()
                             : x.GetDouble());
  return flat(v, dtype);
}

// The tensors of a tuple repr "(tensor([..]), tensor([..], dtype=torch.int64))"; the values are exact.
std::vector<Tensor> tuple_tensors(const std::string& s) {
  std::vector<Tensor> out;
  for (std::size_t pos = s.find("tensor("); pos != std::string::npos; pos = s.find("tensor(", pos + 1)) {
    const std::string t = s.substr(pos, s.find("tensor(", pos + 1) - pos);
    const std::string body = t.substr(t.find('[') + 1, t.find(']') - t.find('[') - 1);
    std::vector<double> v;
    std::stringstream ss(body);
    std::string item;
    while (std::getline(ss, item, ',')) v.push_back(std::strtod(item.c_str(), nullptr));
    DType dt = body.find('.') != std::string::npos ? DType::Float32 : DType::Int64;
    if (auto d = t.find("dtype="); d != std::string::npos)
      dt = *parse_dtype(t.substr(d + 6, t.find(')', d) - d - 6));
    out.push_back(flat(v, dt));
  }
  return out;
}

// Rows of a CSV by API Name.
std::map<std::string, CsvRow> rows_by_name(const fs::path& p, std::vector<std::string>& header) {
  std::vector<CsvRow> rows = csv_read_file(p.string());
  std::map<std::string, CsvRow> out;
  header = rows.at(0);
  for (std::size_t i = 1; i < rows.size(); ++i) out[rows[i].at(0)] = rows[i];
  return out;
}
std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name || header[i] == "\xEF\xBB\xBF" + name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

struct Item {
  std::string row;  // details row name
  Tensor bench, npu, gpu;
};

// Every tensor output and gradient of the case (dropout has its own check and no judge).
std::vector<std::pair<std::string, Item>> items() {
  const rapidjson::Document npu = read_json(kE2E / "npu_inputs.json"),
                            gpu = read_json(kE2E / "gpu_inputs.json");
  std::vector<std::pair<std::string, Item>> out;
  const rapidjson::Value& root = npu;
  for (auto it = root.MemberBegin(); it != root.MemberEnd(); ++it) {
    const std::string name = it->name.GetString();
    if (name.find("dropout") != std::string::npos) continue;
    const std::string base = *api_base_name(name);
    const auto& n = it->value;
    const auto& g = static_cast<const rapidjson::Value&>(gpu)[name.c_str()];
    if (n["bench"].IsArray()) {
      const DType bd = *parse_dtype(n["bench_dtype"].GetString()),
                  nd = *parse_dtype(n["device_dtype"].GetString()),
                  gd = *parse_dtype(g["device_dtype"].GetString());
      out.push_back({base,
                     {name + ".forward.output.0", json_tensor(n["bench"], bd), json_tensor(n["device"], nd),
                      json_tensor(g["device"], gd)}});
      if (n.HasMember("bench_grad") && base != "repeat_interleave") {  // its backward row is a message
        for (rapidjson::SizeType i = 0; i < n["bench_grad"].Size(); ++i)
          out.push_back({base,
                         {name + ".backward.output." + std::to_string(i), json_tensor(n["bench_grad"][i], bd),
                          json_tensor(n["device_grad"][i], nd), json_tensor(g["device_grad"][i], gd)}});
      }
    } else if (std::string(n["bench"].GetString()).rfind("(tensor", 0) == 0) {
      std::vector<Tensor> b = tuple_tensors(n["bench"].GetString()),
                          d = tuple_tensors(n["device"].GetString()),
                          r = tuple_tensors(g["device"].GetString());
      for (std::size_t i = 0; i < b.size(); ++i)
        out.push_back({base, {name + ".forward.output." + std::to_string(i), b[i], d.at(i), r.at(i)}});
    }
  }
  return out;
}

TEST(JudgeAgreement, RunUtRuleIsMsprobeStatusColumn) {
  std::vector<std::string> header;
  const auto csv = rows_by_name(kE2E / "head" / "npu_accuracy_checking_details_20250101000000.csv", header);
  const std::size_t status = column(header, "Status"), message = column(header, "Message");
  const Standards cfg = Standards::builtin(Profile::MsProbe);
  std::size_t compared = 0;
  for (const auto& [api, item] : items()) {
    auto row = csv.find(item.row);
    ASSERT_NE(row, csv.end()) << item.row;
    Verdict v = judge(api, item.bench, item.npu, cfg, item.npu.dtype());
    EXPECT_EQ(to_string(v.status), row->second.at(status)) << item.row;
    EXPECT_EQ(v.message, row->second.at(message)) << item.row;
    ++compared;
  }
  // 17 tensor forward outputs (two from Torch.max) and the softmax gradient; an empty loop must not pass.
  EXPECT_EQ(compared, 18u);
}

TEST(JudgeAgreement, PrecisionStandardIsMsprobeApiPrecisionCompare) {
  std::vector<std::string> header;
  const auto csv = rows_by_name(kE2E / "head" / "api_precision_compare_details_20250101000000.csv", header);
  const std::size_t result = column(header, "比对结果"), algorithm = column(header, "比对算法");
  const Standards cfg = Standards::builtin(Profile::MsProbe);
  std::size_t compared = 0, judged = 0;
  for (const auto& [api, item] : items()) {
    auto row = csv.find(item.row);
    ASSERT_NE(row, csv.end()) << item.row;
    JudgeOptions opt;
    opt.rule = JudgeRule::PrecisionStandard;
    opt.reference = item.gpu;
    Verdict v = judge(api, item.bench, item.npu, cfg, item.npu.dtype(), opt);
    EXPECT_EQ(to_string(v.status), row->second.at(result)) << item.row;
    const std::string want_algorithm = row->second.at(algorithm);
    EXPECT_EQ(v.standard ? std::string(standard_csv_name(*v.standard)) : " ", want_algorithm) << item.row;
    ++compared;
    judged += v.method != Method::NotCompared;
  }
  EXPECT_EQ(compared, 18u);
  EXPECT_EQ(judged, 16u);  // float64 cumsum and the empty zeros are SKIP rows
}

}  // namespace
}  // namespace probe
