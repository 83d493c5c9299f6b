// libFuzzer target: what `probe run_ut -csv_path` does with an existing result/details CSV pair before it
// continues (lib/run_ut/OutputFiles.cpp): resume_output_paths() finds the pair, result_has_rows() and
// load_and_repair() read and validate both files against the dump's API names, cut a torn last row and
// drop rows of unfinished APIs.
// Input: the result file's bytes, a 0x00 byte, the details file's bytes (no 0x00: an empty details file).
// Each input is tried with both layouts (PyTorch, MindSpore). A refusal (probe::Error) is a normal outcome;
// a repair that succeeds must leave files that a second resume accepts unchanged, with the same state.
// Run: probe_fuzz_resumecsv -max_total_time=60 corpus/ (PROBE_FUZZ_VERBOSE=1 prints each refusal)
// (seed corpus: tests/data/conformance/msprobe_e2e/*/ result and details CSVs joined by a 0x00 byte; see
// tools/run_fuzzers.sh)
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "probe/error.h"
#include "run_ut/OutputFiles.h"
#include "run_ut/RowFormat.h"

namespace {

namespace fs = std::filesystem;

// The APIs of the seed files (tests/data/conformance/msprobe_e2e/head; v1.0.4 has no Torch.dictapi.0, so its
// files are refused at that row), in their order, and one whose name the writer escapes as a formula.
const std::vector<std::string> kApis = {"Functional.gelu.0",
                                        "Functional.softmax.0",
                                        "Functional.silu.0",
                                        "Tensor.mul.0",
                                        "Torch.matmul.0",
                                        "Torch.mm.0",
                                        "Torch.abs.0",
                                        "Functional.conv2d.0",
                                        "Torch.argmax.0",
                                        "Torch.isnan.0",
                                        "Torch.max.0",
                                        "Tensor.numel.0",
                                        "Tensor.dim.0",
                                        "Torch.empty_like.0",
                                        "Torch.zeros.0",
                                        "Torch.sum.0",
                                        "Torch.exp.0",
                                        "Torch.cumsum.0",
                                        "Torch.repeat_interleave.0",
                                        "Torch.dictapi.0",
                                        "Functional.dropout.0",
                                        "=Torch.formula.0"};

// One scratch directory per process, created on the first input and removed at exit.
struct Scratch {
  std::string dir, result, details;
  Scratch() {
    // In memory where there is a tmpfs: every input writes, truncates and renames files.
    std::error_code ec;
    const fs::path base = std::getenv("TMPDIR") == nullptr && fs::is_directory("/dev/shm", ec)
                              ? fs::path("/dev/shm")
                              : fs::temp_directory_path();
    std::string tmpl = (base / "probe_fuzz_resumecsv.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    dir = tmpl;
    result = dir + "/accuracy_checking_result_20250101000000.csv";
    details = dir + "/accuracy_checking_details_20250101000000.csv";
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::abort();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void resume(const Scratch& s, std::string_view result, std::string_view details,
            const probe::rut::RunUtLayout& format) {
  write_file(s.result, result);
  write_file(s.details, details);
  probe::rut::ResumeState first;
  try {
    const probe::rut::OutputPaths paths = probe::rut::resume_output_paths(s.result);
    volatile bool rows = probe::rut::result_has_rows(paths);
    (void)rows;
    first = probe::rut::load_and_repair(paths, format, kApis);
  } catch (const probe::Error& e) {
    if (std::getenv("PROBE_FUZZ_VERBOSE")) std::fprintf(stderr, "refused: %s\n", e.what());
    return;  // refusing the files is the expected outcome for most inputs
  }
  if (first.next > kApis.size() || first.statuses.size() != first.done.size()) __builtin_trap();
  // The repaired files are what a resume continues from: a second resume finds nothing to repair.
  const std::string repaired_result = read_file(s.result), repaired_details = read_file(s.details);
  probe::rut::ResumeState second;
  try {
    second = probe::rut::load_and_repair(probe::rut::resume_output_paths(s.result), format, kApis);
  } catch (const probe::Error&) {
    __builtin_trap();  // a resume refused the files the previous one repaired
  }
  if (second.next != first.next || second.done != first.done || second.statuses != first.statuses)
    __builtin_trap();
  if (read_file(s.result) != repaired_result || read_file(s.details) != repaired_details) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Scratch scratch;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find('\0');
  const std::string_view result = input.substr(0, split);
  const std::string_view details =
      split == std::string_view::npos ? std::string_view{} : input.substr(split + 1);
  resume(scratch, result, details, probe::rut::run_ut_layout(probe::Framework::PyTorch));
  resume(scratch, result, details, probe::rut::run_ut_layout(probe::Framework::MindSpore));
  return 0;
}
