#include "standards/Thresholds.h"

#include <rapidjson/document.h>

#include <functional>

#include "probe/error.h"
#include "support/DataFiles.h"

namespace probe::precision_compare {

namespace {

double by_dtype(const std::map<std::string, double>& table, const std::string& dtype) {
  auto it = table.find(dtype);
  if (it == table.end()) it = table.find("default");
  return it->second;
}

class Loader {
 public:
  Loader(std::string file, const rapidjson::Value& common, const rapidjson::Value* profile)
      : file_(std::move(file)), common_(common), profile_(profile) {}

  const rapidjson::Value& get(const char* key) const {
    if (profile_ && profile_->HasMember(key)) return (*profile_)[key];
    if (!common_.HasMember(key)) fail(key, "missing");
    return common_[key];
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(ErrorKind::Format, what, file_, key);
  }
  double number(const rapidjson::Value& v, const std::string& key) const {
    if (!v.IsNumber()) fail(key, "expected a number");
    return v.GetDouble();
  }
  double number_at(const char* key, const char* sub) const {
    const auto& obj = get(key);
    if (!obj.IsObject() || !obj.HasMember(sub)) fail(std::string(key) + "." + sub, "missing");
    return number(obj[sub], std::string(key) + "." + sub);
  }
  std::unordered_set<std::string> string_set(const rapidjson::Value& v, const std::string& key) const {
    if (!v.IsArray()) fail(key, "expected an array of strings");
    std::unordered_set<std::string> out;
    for (const auto& s : v.GetArray()) {
      if (!s.IsString()) fail(key, "expected an array of strings");
      out.emplace(s.GetString(), s.GetStringLength());
    }
    return out;
  }
  std::map<std::string, double> dtype_table(const char* key) const {
    const auto& obj = get(key);
    if (!obj.IsObject()) fail(key, "expected an object of numbers");
    std::map<std::string, double> out;
    for (const auto& m : obj.GetObject()) out[m.name.GetString()] = number(m.value, key);
    if (!out.count("default")) fail(key, "needs a \"default\" entry");
    return out;
  }

 private:
  std::string file_;
  const rapidjson::Value& common_;
  const rapidjson::Value* profile_;
};

// The ids are precision_standards.json's, so an inline list reads like a referenced one.
Standard standard_from_id(const std::string& id, const Loader& l) {
  if (auto s = parse_standard_id(id)) return *s;
  l.fail("api_groups", "unknown algorithm '" + id + "'");
}

// Where `{"from": FILE}` API groups come from: FILE on disk, or standards the caller already holds.
using GroupSource = std::function<Standards(const std::string& from, Profile profile)>;

Thresholds from_document(const rapidjson::Document& doc, const std::string& file, const std::string& profile,
                         const GroupSource& groups_from) {
  if (!doc.IsObject() || !doc.HasMember("common") || !doc["common"].IsObject())
    throw Error(ErrorKind::Format, "missing object", file, "common");
  if (!doc.HasMember("profiles") || !doc["profiles"].IsObject())
    throw Error(ErrorKind::Format, "missing object", file, "profiles");
  const auto& profiles = doc["profiles"];
  if (!profiles.HasMember(profile.c_str()) || !profiles[profile.c_str()].IsObject())
    throw Error(ErrorKind::InvalidArgument, "unknown profile '" + profile + "'", file, "profiles");
  Loader l(file, doc["common"], &profiles[profile.c_str()]);

  Thresholds t;
  t.unsupported_dtypes = l.string_set(l.get("unsupported_dtypes"), "unsupported_dtypes");
  t.fp8_dtypes = l.string_set(l.get("fp8_dtypes"), "fp8_dtypes");
  t.float_dtypes = l.string_set(l.get("float_dtypes"), "float_dtypes");
  const auto& zs = l.get("zero_shape");
  if (!zs.IsString()) l.fail("zero_shape", "expected a string");
  t.zero_shape = zs.GetString();
  const auto& groups = l.get("api_groups");
  if (groups.IsObject()) {
    // The shipped file keeps no copy of the lists: run_ut's standards file is their single source.
    if (!groups.HasMember("from") || !groups["from"].IsString())
      l.fail("api_groups.from", "expected the name of a precision standards data file");
    const Standards standards = groups_from(groups["from"].GetString(), parse_profile(profile));
    for (const auto& [standard, apis] : standards.api_groups())
      t.api_groups.emplace_back(standard, std::unordered_set<std::string>(apis.begin(), apis.end()));
  } else {
    if (!groups.IsArray()) l.fail("api_groups", "expected an array or {\"from\": FILE}");
    for (const auto& g : groups.GetArray()) {
      if (!g.IsObject() || !g.HasMember("algorithm") || !g["algorithm"].IsString() || !g.HasMember("apis"))
        l.fail("api_groups", "each entry needs \"algorithm\" and \"apis\"");
      t.api_groups.emplace_back(standard_from_id(g["algorithm"].GetString(), l),
                                l.string_set(g["apis"], "api_groups.apis"));
    }
  }
  t.minimum_err = l.dtype_table("minimum_err");
  t.accumulative_eb = l.dtype_table("accumulative_error_eb_threshold");
  t.small_value_err = l.number_at("benchmark_error_threshold", "small_value");
  t.rmse_err = l.number_at("benchmark_error_threshold", "rmse");
  t.max_rel_err = l.number_at("benchmark_error_threshold", "max_rel_err");
  t.mean_rel_err = l.number_at("benchmark_error_threshold", "mean_rel_err");
  t.eb_err = l.number_at("benchmark_error_threshold", "eb");
  t.thousandth_pass = l.number(l.get("thousandth_pass_value"), "thousandth_pass_value");
  t.ulp_fp32_mean = l.number_at("ulp", "fp32_mean_ulp_err");
  t.ulp_fp32_proportion = l.number_at("ulp", "fp32_proportion");
  t.ulp_low_proportion = l.number_at("ulp", "low_precision_proportion");
  t.ulp_proportion_ratio = l.number_at("ulp", "proportion_ratio");
  const auto& msgs = l.get("compare_messages");
  if (!msgs.IsObject()) l.fail("compare_messages", "expected an object of strings");
  for (const auto& m : msgs.GetObject()) {
    if (!m.value.IsString()) l.fail("compare_messages", "expected an object of strings");
    t.compare_messages[m.name.GetString()] = std::string(m.value.GetString(), m.value.GetStringLength());
  }
  return t;
}

Standards standards_from_data_file(const std::string& from, Profile profile) {
  return Standards::load(detail::data_file_path(from), profile);
}

}  // namespace

Thresholds load_thresholds(const std::string& file, const std::string& profile) {
  return from_document(detail::parse_data_json(file, "the thresholds data file"), file, profile,
                       standards_from_data_file);
}

std::string default_thresholds_file() { return detail::data_file_path("api_precision_compare.json"); }

}  // namespace probe::precision_compare

namespace probe {

namespace pc = precision_compare;

double PrecisionCompareThresholds::min_err(const std::string& dtype) const {
  return pc::by_dtype(minimum_err, dtype);
}
double PrecisionCompareThresholds::eb_threshold(const std::string& dtype) const {
  return pc::by_dtype(accumulative_eb, dtype);
}

PrecisionCompareThresholds PrecisionCompareThresholds::builtin(Profile profile) {
  return load(pc::default_thresholds_file(), profile);
}

PrecisionCompareThresholds PrecisionCompareThresholds::load(const std::string& path, Profile profile) {
  return pc::load_thresholds(path, std::string(to_string(profile)));
}

PrecisionCompareThresholds PrecisionCompareThresholds::parse(std::string_view json,
                                                             const Standards& standards,
                                                             const std::string& origin) {
  // The caller's standards are the one source of the groups: whatever FILE says, nothing is read.
  return pc::from_document(detail::parse_data_json_text(json, origin, "the thresholds data"), origin,
                           std::string(to_string(standards.profile())),
                           [&](const std::string&, Profile) { return standards; });
}

}  // namespace probe
