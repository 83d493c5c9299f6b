// .pt files written by probe (save_pt) must be readable by PyTorch itself, not only by probe's own reader:
// this runs Debian's /usr/bin/python3 with torch (python3-torch, installed by tools/bootstrap.sh for every
// test mode) on probe-written files and checks dtype, shape and every value bit for bit. A missing
// interpreter or torch is a failure, never a skip: CI would otherwise never run the check.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "common/ScratchDir.h"
#include "probe/tensor_file.h"

namespace probe {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

struct Written {
  std::string file, dtype;
  Shape shape;
  std::vector<std::string> values;  // what torch must read, as Python literals
};

std::string py_float(double v) {
  if (v != v) return "nan";
  if (v == kInf) return "inf";
  if (v == -kInf) return "-inf";
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

template <class T, class Conv>
Written write(const testing::ScratchDir& dir, const std::string& name, const std::string& torch_dtype,
              const std::vector<double>& values, Shape shape, Conv conv) {
  std::vector<T> raw;
  Written w{dir.file(name + ".pt"), torch_dtype, shape, {}};
  for (double v : values) {
    raw.push_back(conv(v));
    w.values.push_back(std::is_floating_point_v<T> || torch_dtype == "float16" || torch_dtype == "bfloat16"
                           ? py_float(v)
                           : std::to_string(static_cast<long long>(v)));
  }
  save_pt(w.file, Tensor::from_values<T>(raw, std::move(shape)));
  return w;
}

struct ShellRun {
  int code = -1;
  std::string out;
};

ShellRun run(const std::string& cmd) {
  ShellRun r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(TorchLoad, PythonTorchReadsEveryDtypeProbeWrites) {
  const ShellRun torch_here = run("/usr/bin/python3 -c 'import torch; print(torch.__version__)'");
  ASSERT_EQ(torch_here.code, 0)
      << "Debian's /usr/bin/python3 with torch is required (tools/bootstrap.sh test "
         "installs python3-torch): "
      << torch_here.out;

  const testing::ScratchDir dir("probe-torch-load");
  auto id = [](double v) { return v; };
  // Exactly representable values in each dtype, with the specials: signed zero, subnormals, the largest
  // finite values, infinities and NaN.
  const std::vector<double> f16_vals = {
      0.5, -2.25, -0.0, 65504.0, 6.103515625e-05, 5.960464477539063e-08, kInf, -kInf, kNan, 1.0009765625};
  const std::vector<double> bf16_vals = {1.0078125, -3.0, -0.0, 3.3895313892515355e38, 9.183549615799121e-41,
                                         kInf,      kNan};
  auto f32 = [](double v) { return static_cast<float>(v); };
  std::vector<Written> files = {
      write<float16_t>(dir, "f16", "float16", f16_vals, {2, 5}, [](double v) { return to_float16(v); }),
      write<bfloat16_t>(dir, "bf16", "bfloat16", bf16_vals, {7}, [](double v) { return to_bfloat16(v); }),
      write<float>(dir, "f32", "float32",
                   {0.1f, -1e-45f, 3.4028234663852886e38, -kInf, kNan, -0.0, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5},
                   {2, 3, 2}, f32),
      write<double>(dir, "f64", "float64",
                    {0.1, -4.9406564584124654e-324, 1.7976931348623157e308, kNan, -0.0, kInf}, {3, 2}, id),
      write<double>(dir, "f64_0d", "float64", {-7.25}, {}, id),
      write<float>(dir, "f32_empty", "float32", {}, {0, 3}, f32),
      write<std::int32_t>(dir, "i32", "int32", {-2147483648.0, 2147483647.0, 7}, {3},
                          [](double v) { return static_cast<std::int32_t>(v); }),
      write<std::int16_t>(dir, "i16", "int16", {-32768, 32767}, {2, 1},
                          [](double v) { return static_cast<std::int16_t>(v); }),
      write<std::int8_t>(dir, "i8", "int8", {-128, 127, 0}, {3},
                         [](double v) { return static_cast<std::int8_t>(v); }),
      write<std::uint8_t>(dir, "u8", "uint8", {0, 255, 17}, {3},
                          [](double v) { return static_cast<std::uint8_t>(v); }),
  };
  // int64 beyond 2^53 (not representable as a double) and bool, written directly.
  files.push_back(
      {dir.file("i64.pt"), "int64", {4}, {"-9007199254740993", "9223372036854775807", "0", "-1"}});
  save_pt(files.back().file,
          Tensor::from_values<std::int64_t>(
              {-9007199254740993LL, std::numeric_limits<std::int64_t>::max(), 0, -1}, {4}));
  files.push_back({dir.file("bool.pt"), "bool", {2, 2}, {"1", "0", "0", "1"}});
  save_pt(files.back().file, Tensor::from_values<bool>({true, false, false, true}, {2, 2}));

  const std::string manifest = dir.file("manifest.txt");
  {
    std::ofstream m(manifest);
    for (const auto& w : files) {
      m << w.file << '|' << w.dtype << '|';
      for (std::size_t i = 0; i < w.shape.size(); ++i) m << (i ? "," : "") << w.shape[i];
      m << '|';
      for (std::size_t i = 0; i < w.values.size(); ++i) m << (i ? " " : "") << w.values[i];
      m << '\n';
    }
  }
  const ShellRun check = run("/usr/bin/python3 '" + std::string(PROBE_SOURCE_DIR) +
                             "/tests/io/check_torch_load.py' '" + manifest + "'");
  EXPECT_EQ(check.code, 0) << check.out;
  EXPECT_NE(check.out.find("checked " + std::to_string(files.size()) + " files, 0 problems"),
            std::string::npos)
      << check.out;
}

// The checker itself must be able to fail: a file probe did not write, and a value that differs.
TEST(TorchLoad, CheckerRejectsWrongValuesAndUnreadableFiles) {
  const testing::ScratchDir dir("probe-torch-load-neg");
  save_pt(dir.file("t.pt"), Tensor::from_values<float>({1.5f, -0.0f}, {2}));
  std::ofstream(dir.file("junk.pt")) << "not a zip";
  {
    std::ofstream m(dir.file("m.txt"));
    m << dir.file("t.pt") << "|float32|2|1.5 0.0\n";  // -0.0 written, +0.0 claimed
    m << dir.file("junk.pt") << "|float32|2|1.5 -0.0\n";
  }
  const ShellRun check = run("/usr/bin/python3 '" + std::string(PROBE_SOURCE_DIR) +
                             "/tests/io/check_torch_load.py' '" + dir.file("m.txt") + "'");
  EXPECT_EQ(check.code, 1) << check.out;
  EXPECT_NE(check.out.find("checked 2 files, 2 problems"), std::string::npos) << check.out;
}

}  // namespace
}  // namespace probe
