// Loads data/precision_standards.json: every threshold and API list is data, selected per profile.
#include <rapidjson/document.h>

#include "probe/error.h"
#include "probe/precision_standard.h"
#include "support/DataFiles.h"

namespace probe {
namespace {

using rapidjson::Value;
using Alloc = rapidjson::Document::AllocatorType;

// Overlays `over` onto `base` (objects merged key by key, anything else replaced).
void merge(Value& base, const Value& over, Alloc& a) {
  if (!base.IsObject() || !over.IsObject()) {
    base.CopyFrom(over, a);
    return;
  }
  for (auto it = over.MemberBegin(); it != over.MemberEnd(); ++it) {
    // HasMember + operator[] rather than comparing FindMember with MemberEnd(): rapidjson's mutable member
    // iterators compare ambiguously under C++20's reversed operators (clang -Wambiguous-reversed-operator).
    if (base.HasMember(it->name))
      merge(base[it->name], it->value, a);
    else
      base.AddMember(Value(it->name, a), Value(it->value, a), a);
  }
}

[[noreturn]] void bad(const std::string& path, const std::string& field, const std::string& what) {
  throw Error(ErrorKind::Format, what, path, field);
}

const Value& member(const Value& obj, const char* key, const std::string& path, const std::string& where) {
  if (!obj.IsObject()) bad(path, where, "expected an object");
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) bad(path, where + "." + key, "missing field");
  return it->value;
}
double number(const Value& obj, const char* key, const std::string& path, const std::string& where) {
  const Value& v = member(obj, key, path, where);
  if (!v.IsNumber()) bad(path, where + "." + key, "expected a number");
  return v.GetDouble();
}
std::vector<std::string> strings(const Value& v, const std::string& path, const std::string& where) {
  if (!v.IsArray()) bad(path, where, "expected an array of strings");
  std::vector<std::string> out;
  for (const auto& s : v.GetArray()) {
    if (!s.IsString()) bad(path, where, "expected an array of strings");
    out.emplace_back(s.GetString(), s.GetStringLength());
  }
  return out;
}

Standard parse_standard(std::string_view id, const std::string& path) {
  if (auto s = parse_standard_id(id)) return *s;
  bad(path, "groups.standard", "unknown standard '" + std::string(id) + "'");
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  for (const auto& x : v)
    if (x == s) return true;
  return false;
}

}  // namespace

Profile parse_profile(std::string_view text) {
  if (text == "probe") return Profile::Probe;
  if (text == "msprobe") return Profile::MsProbe;
  throw Error(ErrorKind::InvalidArgument,
              "unknown profile '" + std::string(text) + "' (expected probe or msprobe)");
}
std::string_view to_string(Profile p) noexcept { return p == Profile::Probe ? "probe" : "msprobe"; }

namespace {
struct StandardNames {
  Standard standard;
  std::string_view id, csv_name;  // precision_standards.json / msprobe's details CSV
};
// In Standard's declaration order, so that a Standard indexes its row.
constexpr StandardNames kStandardNames[] = {
    {Standard::Benchmark, "benchmark", "标杆比对法"},
    {Standard::AbsoluteThreshold, "absolute_threshold", "绝对阈值法"},
    {Standard::BinaryConsistency, "binary_consistency", "二进制一致法"},
    {Standard::Ulp, "ulp_compare", "ULP误差比对法"},
    {Standard::Thousandth, "thousandth_threshold", "双千指标法"},
    {Standard::Accumulative, "accumulative_error_compare", "累积误差比对法"},
};
constexpr bool names_in_enum_order() {
  for (std::size_t i = 0; i < std::size(kStandardNames); ++i)
    if (static_cast<std::size_t>(kStandardNames[i].standard) != i) return false;
  return true;
}
static_assert(names_in_enum_order());

const StandardNames& names(Standard s) noexcept {
  const auto i = static_cast<std::size_t>(s);
  return i < std::size(kStandardNames) ? kStandardNames[i] : kStandardNames[0];
}
}  // namespace

std::string_view standard_id(Standard s) noexcept { return names(s).id; }
std::string_view standard_csv_name(Standard s) noexcept { return names(s).csv_name; }
std::optional<Standard> parse_standard_id(std::string_view id) noexcept {
  for (const auto& n : kStandardNames)
    if (n.id == id) return n.standard;
  return std::nullopt;
}

std::string Standards::default_path() { return detail::data_file_path("precision_standards.json"); }

Standards Standards::builtin(Profile profile) { return load(default_path(), profile); }

// The one reader of the file's layout; `path` is where the text came from, for error messages.
struct Standards::Loader {
  static Standards from(rapidjson::Document& doc, const std::string& path, Profile profile);
};

Standards Standards::load(const std::string& path, Profile profile) {
  rapidjson::Document doc = detail::parse_data_json(path, "precision standards file");
  return Loader::from(doc, path, profile);
}

Standards Standards::parse(std::string_view json, Profile profile, const std::string& origin) {
  rapidjson::Document doc = detail::parse_data_json_text(json, origin, "precision standards file");
  return Loader::from(doc, origin, profile);
}

Standards Standards::Loader::from(rapidjson::Document& doc, const std::string& path, Profile profile) {
  const Value& profiles = member(doc, "profiles", path, "");
  // Resolve the profile chain (base first), refusing cycles.
  std::vector<std::string> chain;
  std::string name(to_string(profile));
  while (true) {
    if (contains(chain, name)) bad(path, "profiles." + name + ".base", "cyclic profile base");
    chain.push_back(name);
    const Value& p = member(profiles, name.c_str(), path, "profiles");
    auto base = p.FindMember("base");
    if (base == p.MemberEnd()) break;
    if (!base->value.IsString()) bad(path, "profiles." + name + ".base", "expected a string");
    name = base->value.GetString();
  }
  Value eff(rapidjson::kObjectType);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    merge(eff, profiles[it->c_str()], doc.GetAllocator());

  Standards c;
  c.profile_ = profile;
  const std::string w = "profiles." + std::string(to_string(profile));
  std::string agg = member(eff, "aggregation", path, w).IsString() ? eff["aggregation"].GetString() : "";
  if (agg == "last_non_pass")
    c.aggregation = Aggregation::LastNonPass;
  else if (agg == "worst")
    c.aggregation = Aggregation::Worst;
  else
    bad(path, w + ".aggregation", "expected \"last_non_pass\" or \"worst\"");
  const Value& old = member(eff, "old_rule", path, w);
  c.cosine_threshold = number(old, "cosine", path, w + ".old_rule");
  c.max_abs_threshold = number(old, "max_abs", path, w + ".old_rule");
  const Value& ms = member(eff, "mindspore", path, w);
  c.mindspore_cosine = number(ms, "cosine", path, w + ".mindspore");
  c.mindspore_max_abs = number(ms, "max_abs", path, w + ".mindspore");
  const Value& dr = member(eff, "dropout", path, w);
  c.dropout_ratio = number(dr, "ratio", path, w + ".dropout");
  c.dropout_min_numel = static_cast<std::int64_t>(number(dr, "min_numel", path, w + ".dropout"));
  c.supported_dtypes_ =
      strings(member(eff, "new_standard_dtypes", path, w), path, w + ".new_standard_dtypes");
  c.fp8_dtypes_ = strings(member(eff, "fp8_dtypes", path, w), path, w + ".fp8_dtypes");
  c.float_dtypes_ = strings(member(eff, "float_dtypes", path, w), path, w + ".float_dtypes");
  const Value& groups = member(eff, "groups", path, w);
  if (!groups.IsArray()) bad(path, w + ".groups", "expected an array");
  for (const auto& g : groups.GetArray()) {
    const Value& sid = member(g, "standard", path, w + ".groups");
    if (!sid.IsString()) bad(path, w + ".groups.standard", "expected a string");
    c.groups_.emplace_back(parse_standard(sid.GetString(), path),
                           strings(member(g, "apis", path, w + ".groups"), path, w + ".groups.apis"));
  }
  const Value& rows = member(eff, "dtype_params", path, w);
  if (!rows.IsObject()) bad(path, w + ".dtype_params", "expected an object");
  for (auto it = rows.MemberBegin(); it != rows.MemberEnd(); ++it) {
    std::string f = w + ".dtype_params." + it->name.GetString();
    const Value& r = it->value;
    DtypeRow row{number(r, "small_value", path, f),
                 number(r, "small_value_atol_benchmark", path, f),
                 number(r, "small_value_atol_absolute", path, f),
                 number(r, "rtol", path, f),
                 number(r, "accumulative_error_bound", path, f),
                 number(r, "accumulative_small_value", path, f),
                 number(r, "ulp_threshold", path, f),
                 static_cast<int>(number(r, "ulp_min_eb", path, f)),
                 static_cast<int>(number(r, "ulp_mantissa_bits", path, f))};
    c.rows_[it->name.GetString()] = row;
  }
  if (!c.rows_.count("default")) bad(path, w + ".dtype_params.default", "missing field");
  return c;
}

Standard Standards::standard_for(std::string_view api_name, std::string_view out_dtype,
                                 bool fp8_input) const {
  if (contains(fp8_dtypes_, out_dtype)) return Standard::Ulp;
  if (fp8_input) return Standard::AbsoluteThreshold;
  if (!contains(float_dtypes_, out_dtype)) return Standard::BinaryConsistency;
  for (const auto& [standard, apis] : groups_)
    if (contains(apis, api_name)) return standard;
  return Standard::Benchmark;
}

bool Standards::new_standard_supported(std::string_view device_dtype) const {
  return contains(supported_dtypes_, device_dtype);
}

MetricParams Standards::metric_params(DType device) const {
  auto it = rows_.find(torch_name(device));
  const DtypeRow& r = it == rows_.end() ? rows_.find("default")->second : it->second;
  MetricParams p;
  p.small_value = r.small_value;
  p.small_value_atol_benchmark = r.atol_benchmark;
  p.small_value_atol_absolute = r.atol_absolute;
  p.rtol = r.rtol;
  p.accumulative_bound = r.acc_bound;
  p.accumulative_small_value = r.acc_small_value;
  p.ulp_threshold = r.ulp_threshold;
  p.ulp_min_eb = r.ulp_min_eb;
  p.ulp_mantissa_bits = r.ulp_mantissa;
  return p;
}

}  // namespace probe
