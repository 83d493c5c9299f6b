// Test helper: reads the runner fixtures written by tests/data/make_runner_fixtures.py.
#pragma once

#include <rapidjson/document.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/Slurp.h"
#include "probe/runner.h"
#include "probe/value.h"

namespace probe::test {

inline double parse_num(const std::string& s) {
  if (s == "nan") return std::nan("");
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  return std::strtod(s.c_str(), nullptr);
}

/// A decoded tensor: its dtype name and float64 data (exact for every dtype the fixtures use).
struct FixTensor {
  DType dtype;
  Shape shape;
  std::vector<double> data;
};

inline FixTensor decode_tensor(const rapidjson::Value& t) {
  FixTensor r;
  r.dtype = *parse_dtype(t["dtype"].GetString());
  for (const auto& d : t["shape"].GetArray()) r.shape.push_back(d.GetInt64());
  for (const auto& v : t["data"].GetArray()) r.data.push_back(parse_num(v.GetString()));
  return r;
}

/// The tensor in its own dtype (values are exactly representable: torch produced them in that dtype).
inline Tensor to_probe_tensor(const FixTensor& f) {
  return Tensor::from_values<double>(f.data, f.shape).to(f.dtype);
}

inline Value decode_value(const rapidjson::Value& v) {
  if (v.IsNull()) return Value(NoneValue{});
  if (v.IsArray()) {
    std::vector<Value> items;
    for (const auto& x : v.GetArray()) items.push_back(decode_value(x));
    return Value(std::move(items));
  }
  if (v.HasMember("tensor")) return Value(to_probe_tensor(decode_tensor(v["tensor"])));
  if (v.HasMember("bool")) return Value(v["bool"].GetBool());
  if (v.HasMember("int")) return Value(static_cast<std::int64_t>(v["int"].GetInt64()));
  if (v.HasMember("float")) return Value(parse_num(v["float"].GetString()));
  if (v.HasMember("str")) return Value(std::string(v["str"].GetString()));
  if (v.HasMember("dtype")) return Value(*parse_dtype(v["dtype"].GetString()));
  if (v.HasMember("ellipsis")) return Value(EllipsisValue{});
  if (v.HasMember("slice")) {
    Slice s;
    const auto& a = v["slice"];
    if (!a[0].IsNull()) s.start = a[0].GetInt64();
    if (!a[1].IsNull()) s.stop = a[1].GetInt64();
    if (!a[2].IsNull()) s.step = a[2].GetInt64();
    return Value(s);
  }
  return Value(NoneValue{});
}

inline rapidjson::Document load_json(const std::filesystem::path& p) {
  rapidjson::Document d;
  d.Parse(probe::testing::slurp(p).c_str());
  return d;
}

/// All fixture files of the runner tests.
inline std::vector<std::filesystem::path> fixture_files() {
  std::vector<std::filesystem::path> out;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(PROBE_TEST_DATA_DIR) / "runners"))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace probe::test
