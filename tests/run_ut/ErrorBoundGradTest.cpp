// run_ut's error bound (DECISIONS D14) on the input gradients of a GEMM, on a dump written here: each
// gradient element sums numel(output) K / numel(input) products, and its bound grows with that count.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/csv.h"
#include "probe/dump_writer.h"
#include "probe/precision_standard.h"
#include "probe/run_ut.h"
#include "probe/runner.h"

namespace probe {
namespace {

// Torch.mm(a, b), a = ones [1, 4], b [4, 256] with b[j][n] = +1 for even n and -1 for odd n: the output
// a @ b = 4 b[0] (exact in float32). Output gradient g = ones [1, 256]: grad_a = g b^T = 0 exactly (the
// signs alternate) with magnitude |g| |b|^T = 256, each element summing 1 256 4 / 4 = 256 products;
// grad_b = a^T g = ones, exact. With u = 2^-24, a device grad_a[0] of 50 2^-16 (= 50 u 256) is within the
// K = 256 bound (1 + 2^-10) (u + 8 sqrt(256) u) 256 = 129.1 u 256 and beyond the K = 1 bound
// (1 + 2^-10) (u + u / (1 - u)) 256 = 2 u 256; 200 2^-16 is beyond the K = 256 bound, within the TF32 band
// (1 + 2^-10) (u + 4 2^-11) 256 = 0.5: a Warning.
std::map<std::string, CsvRow> run_mm_dump(const std::string& root, int grad_units) {
  std::vector<float> ones(4, 1.0f), b(4 * 256), out(256), g(256, 1.0f), grad_b(4 * 256, 1.0f);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = i % 2 ? -1.0f : 1.0f;
  for (std::size_t n = 0; n < out.size(); ++n) out[n] = 4 * b[n];
  std::vector<float> grad_a(4, 0.0f);
  grad_a[0] = std::ldexp(static_cast<float>(grad_units), -16);
  DumpWriterOptions wo;
  wo.dump_path = root + "/dump";
  wo.task = DumpTask::Tensor;
  DumpWriter w(wo);
  ApiCall call;
  call.args = {Value(Tensor::from_values<float>(ones, {1, 4})),
               Value(Tensor::from_values<float>(b, {4, 256}))};
  const std::string key = w.api_forward("Torch.mm", call, {Value(Tensor::from_values<float>(out, {1, 256}))});
  w.backward(key, {Value(Tensor::from_values<float>(g, {1, 256}))},
             {Value(Tensor::from_values<float>(grad_a, {1, 4})),
              Value(Tensor::from_values<float>(grad_b, {4, 256}))});
  w.close();
  // DumpWriter records every tensor with requires_grad false; a training dump marks the inputs it has
  // gradients for.
  std::string json = testing::slurp(w.dump_json_path());
  const std::string no = "\"requires_grad\": false", yes = "\"requires_grad\": true";
  std::size_t marked = 0;
  for (std::size_t at; (at = json.find(no)) != std::string::npos; ++marked) json.replace(at, no.size(), yes);
  EXPECT_GT(marked, 0u) << json;
  std::ofstream(w.dump_json_path(), std::ios::trunc) << json;
  RunUtOptions o;
  o.api_info = w.dump_json_path();
  o.out_dir = root;
  o.timestamp = "20260203040506";
  o.threads = 1;
  const RunUtSummary s = run_ut(o, RunnerRegistry::with_builtins(), Standards::builtin(Profile::Probe));
  const auto rows = csv_read_file(s.details_csv);
  std::map<std::string, CsvRow> by_name;
  for (std::size_t i = 1; i < rows.size(); ++i) by_name[rows[i][0]] = rows[i];
  by_name["header"] = rows.empty() ? CsvRow{} : rows[0];
  return by_name;
}

TEST(RunUtErrorBound, GemmGradientBoundGrowsWithTheTermsOfEachElement) {
  for (const int units : {50, 200}) {
    SCOPED_TRACE(units);
    testing::ScratchDir dir("probe-run-ut-d14-grad");
    const auto rows = run_mm_dump(dir.path().string(), units);
    const CsvRow& header = rows.at("header");
    std::size_t status = 0, message = 0;
    for (std::size_t c = 0; c < header.size(); ++c) {
      if (header[c] == "Status") status = c;
      if (header[c] == "Message") message = c;
    }
    ASSERT_GT(message, 0u);
    const auto fwd = rows.find("Torch.mm.0.forward.output.0");
    ASSERT_NE(fwd, rows.end());
    EXPECT_EQ(fwd->second[status], to_string(Status::Pass)) << fwd->second[message];
    const auto grad_a = rows.find("Torch.mm.0.backward.output.0");
    ASSERT_NE(grad_a, rows.end());
    EXPECT_EQ(grad_a->second[status], to_string(units == 50 ? Status::Pass : Status::Warning))
        << grad_a->second[message];
    EXPECT_NE(grad_a->second[message].find("gemm family, K=256"), std::string::npos)
        << grad_a->second[message];
  }
}

}  // namespace
}  // namespace probe
