// compare_dumps: writes two tensor dumps of the same two API calls from C++ with probe::DumpWriter, a
// "bench" run and an "npu" run whose Tensor.__mul__ result is corrupted in one element, then compares them
// the way `probe compare` does (msprobe's real-data mode) and prints, for each row, the row name, its max
// absolute error and whether its accuracy is reached. Usage: compare_dumps OUT_DIR (must not exist yet).
//
// Library calls shown: DumpWriter (api_forward, close, dump_json_path), Tensor::from_values,
// compare_dump_files with DumpCompareOptions, the DumpCompareTable header and rows.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "probe/probe.h"

namespace {

// Records relu(x) and x * 0.5 as one process would; `corrupt` adds 1.5 to element 5 of the product.
std::string write_dump(const std::string& root, bool corrupt) {
  std::vector<float> x(32), relu(32), half(32);
  for (int i = 0; i < 32; ++i) {
    x[i] = static_cast<float>(i - 16) / 8.0f;
    relu[i] = x[i] > 0.0f ? x[i] : 0.0f;
    half[i] = x[i] * 0.5f;
  }
  if (corrupt) half[5] += 1.5f;
  const probe::Tensor input = probe::Tensor::from_values(x, {4, 8});

  probe::DumpWriterOptions options;
  options.dump_path = root;
  options.task = probe::DumpTask::Tensor;  // tensor files, so the compare uses real data
  probe::DumpWriter writer(options);
  writer.api_forward("Functional.relu", probe::ApiCall{{input}, {}},
                     {probe::Tensor::from_values(relu, {4, 8})});
  writer.api_forward("Tensor.__mul__", probe::ApiCall{{input, 0.5}, {}},
                     {probe::Tensor::from_values(half, {4, 8})});
  writer.close();
  return writer.dump_json_path();
}

std::size_t column(const probe::DumpCompareTable& table, const std::string& name) {
  for (std::size_t i = 0; i < table.header.size(); ++i)
    if (table.header[i] == name) return i;
  throw probe::Error(probe::ErrorKind::Internal, "no column " + name + " in the compare table");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  try {
    if (std::filesystem::exists(out))
      throw probe::Error(probe::ErrorKind::InvalidArgument, "already exists; give a new directory", out);
    const std::string bench = write_dump(out + "/bench", false);
    const std::string npu = write_dump(out + "/npu", true);

    probe::DumpCompareOptions options;
    options.out_dir = out;  // compare_dump_files writes nothing; run_dump_compare would write here
    const probe::DumpCompareTable table = probe::compare_dump_files(npu, bench, "", options);
    const std::size_t name = column(table, "NPU Name"), max_abs = column(table, "MaxAbsErr"),
                      reached = column(table, "Accuracy Reached or Not");
    std::printf("mode %s, %zu rows, %zu suspect\n", probe::to_string(table.mode), table.rows.size(),
                table.suspects);
    for (const std::vector<std::string>& row : table.rows)
      std::printf("%s max_abs_err %s reached %s\n", row[name].c_str(), row[max_abs].c_str(),
                  row[reached].c_str());
    return 0;
  } catch (const probe::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return probe::exit_code(e.kind());
  }
}
