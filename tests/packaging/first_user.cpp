// What a first user writes against the installed package, from the README and the public headers alone:
//   1. a dump written by probe::DumpWriter, with requires_grad and a backward record, that run_ut checks
//      in both directions;
//   2. a custom device runner (an operator library) without a backward in run_ut: its backward is the
//      built-in device backward, so the backward is still compared;
//   3. probe::judge on a dumped API, its list name taken from the full dump name with api_base_name;
//   4. run_ut stopped after its first API and resumed: the files equal an uninterrupted run's byte for byte.
// Usage: first_user WORK_DIR. Prints one line per scenario; exits 1 on the first failure.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stop_token>
#include <string>
#include <vector>

#include "probe/probe.h"

namespace fs = std::filesystem;

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "first_user: %s\n", what.c_str());
  return 1;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Column -> cell of the row of `name` in a run_ut CSV (empty when absent).
std::map<std::string, std::string> row_of(const std::string& csv, const std::string& name) {
  const auto rows = probe::csv_read_file(csv);
  std::map<std::string, std::string> out;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (!rows[i].empty() && rows[i][0] == name)
      for (std::size_t c = 0; c < rows[0].size() && c < rows[i].size(); ++c) out[rows[0][c]] = rows[i][c];
  return out;
}

probe::Tensor f32(std::vector<float> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return probe::Tensor::from_values<float>(v, probe::Shape{n});
}

// Torch.mul(x, y), x requiring grad, and its backward; then relu and add (forward only). Values are exact
// in float32: x * y = [3, -1, -0.25, 12]; the incoming gradient g gives x the gradient g * y =
// [1, 1, -1, -3]; relu(x) = [1.5, 0, 0.25, 4]; x + y = [3.5, -1.5, -0.75, 7].
std::string write_dump(const fs::path& root) {
  probe::DumpWriterOptions o;
  o.dump_path = root.string();
  o.task = probe::DumpTask::Tensor;
  probe::DumpWriter w(o);
  const probe::Tensor x = f32({1.5f, -2.0f, 0.25f, 4.0f}), y = f32({2.0f, 0.5f, -1.0f, 3.0f});
  probe::DumpRecordContext grad;
  grad.requires_grad = {"input.0", "output.0"};
  const std::string mul = w.api_forward("Torch.mul", probe::ApiCall{{probe::Value(x), probe::Value(y)}, {}},
                                        {probe::Value(f32({3.0f, -1.0f, -0.25f, 12.0f}))}, grad);
  w.backward(mul, {probe::Value(f32({0.5f, 2.0f, 1.0f, -1.0f}))},
             {probe::Value(f32({1.0f, 1.0f, -1.0f, -3.0f})), probe::Value()});
  w.api_forward("Functional.relu", probe::ApiCall{{probe::Value(x)}, {}},
                {probe::Value(f32({1.5f, 0.0f, 0.25f, 4.0f}))});
  w.api_forward("Torch.add", probe::ApiCall{{probe::Value(x), probe::Value(y)}, {}},
                {probe::Value(f32({3.5f, -1.5f, -0.75f, 7.0f}))});
  w.close();
  return w.dump_json_path();
}

// The operator library's mul: a float32 kernel with no backward.
probe::Runner library_mul() {
  probe::Runner r;
  r.schema = "mul(Tensor input, Tensor other) -> Tensor";
  r.forward = [](const probe::BoundArgs& a) {
    const std::vector<double> x = a["input"].tensor().to_doubles(), y = a["other"].tensor().to_doubles();
    std::vector<float> z(x.size());
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = static_cast<float>(x[i]) * static_cast<float>(y[i]);
    return probe::ApiResult{{probe::Value(f32(z))}, {probe::DType::Float32}};
  };
  return r;
}

probe::RunUtOptions options(const std::string& dump, const fs::path& out) {
  probe::RunUtOptions o;
  o.api_info = dump;
  o.out_dir = out.string();
  o.timestamp = "20260203040506";
  o.threads = 1;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return fail("usage: first_user WORK_DIR");
  const fs::path work = argv[1];
  fs::remove_all(work);
  const std::string dump = write_dump(work / "dump");
  if (slurp(dump).find("\"requires_grad\": true") == std::string::npos)
    return fail("DumpWriter did not write requires_grad true");

  // 1. The backward DumpWriter recorded is compared.
  const probe::RunUtSummary recorded = probe::run_ut(options(dump, work / "recorded"));
  auto mul = row_of(recorded.result_csv, "Torch.mul.0");
  if (mul["Forward Test Success"] != "pass" || mul["Backward Test Success"] != "pass")
    return fail("run_ut on the written dump: Torch.mul.0 is " + mul["Forward Test Success"] + "/" +
                mul["Backward Test Success"] + ": " + mul["Message"]);
  std::printf("dump_writer requires_grad: Torch.mul.0 forward %s backward %s\n",
              mul["Forward Test Success"].c_str(), mul["Backward Test Success"].c_str());

  // 2. The library's device runner has no backward: the built-in device backward stands in.
  probe::RunnerRegistry registry = probe::RunnerRegistry::with_builtins();
  registry.add(probe::Framework::PyTorch, "Torch.mul", library_mul(), probe::RunnerRole::Device);
  probe::RunUtOptions device = options(dump, work / "device");
  device.device_side = probe::DeviceSide::Runner;
  const probe::RunUtSummary custom =
      probe::run_ut(device, registry, probe::Standards::builtin(probe::Profile::Probe));
  mul = row_of(custom.result_csv, "Torch.mul.0");
  if (mul["Backward Test Success"] != "pass")
    return fail("custom device runner without backward: backward " + mul["Backward Test Success"] + ": " +
                mul["Message"]);
  std::printf("device runner without backward: Torch.mul.0 backward %s\n",
              mul["Backward Test Success"].c_str());

  // 3. judge by the dumped name, through api_base_name (judge itself takes the list name, "mul").
  const auto base = probe::api_base_name("Torch.mul.0");
  if (!base || *base != "mul") return fail("api_base_name(Torch.mul.0) is not mul");
  const probe::Tensor bench = f32({3.0f, -1.0f, -0.25f, 12.0f}).to(probe::DType::Float64);
  const probe::Verdict v = probe::judge(*base, bench, f32({3.0f, -1.0f, -0.25f, 12.0f}),
                                        probe::Standards::builtin(), probe::DType::Float32);
  const probe::Verdict wrong = probe::judge(*base, bench, f32({3.0f, -1.0f, -0.25f, 13.0f}),
                                            probe::Standards::builtin(), probe::DType::Float32);
  if (v.status != probe::Status::Pass || wrong.status != probe::Status::Error)
    return fail("judge(mul): exact " + std::string(to_string(v.status)) + ", wrong " +
                std::string(to_string(wrong.status)));
  std::printf("judge %s: exact %s, one element off %s\n", base->c_str(),
              std::string(to_string(v.status)).c_str(), std::string(to_string(wrong.status)).c_str());

  // 4. Stop after the first API, resume: byte-identical to the whole run.
  const probe::RunUtSummary whole = probe::run_ut(options(dump, work / "whole"));
  std::stop_source stop;
  const probe::RunUtSummary first = probe::run_ut(
      options(dump, work / "cut"),
      [&](const probe::RunUtProgress& p) {
        if (p.done >= 1) stop.request_stop();
      },
      stop.get_token());
  probe::RunUtOptions resume = options(dump, work / "cut");
  resume.result_csv = first.result_csv;
  const probe::RunUtSummary rest = probe::run_ut(resume);
  if (!first.cancelled || first.checked != 1 || rest.cancelled || whole.apis < 3)
    return fail("cancel/resume: the first run was not cut after one API");
  if (slurp(rest.result_csv) != slurp(whole.result_csv) ||
      slurp(rest.details_csv) != slurp(whole.details_csv))
    return fail("cancel/resume: the resumed files differ from the uninterrupted run's");
  std::printf("cancel/resume: %zu APIs, resumed files byte-identical\n", whole.apis);
  return 0;
}
