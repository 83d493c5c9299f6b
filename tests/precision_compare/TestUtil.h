// Small details CSVs written by hand for api_precision_compare tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/ScratchDir.h"
#include "common/Slurp.h"
#include "probe/api_precision_compare.h"
#include "probe/csv.h"
#include "probe/output_compare.h"

namespace probe::testing {

/// The run_ut details header: probe's run_ut writes msprobe's (HEAD and 1.0.4 have the same one), which
/// tests/metrics/ConformanceE2ETest checks byte for byte against msprobe's own output.
inline const CsvRow& run_ut_details_header() { return details_csv_header(); }

using Cells = std::map<std::string, std::string>;

/// Writes a details CSV: each row gives some cells by column name; the others are SPACE, like run_ut writes.
inline std::string write_details(const std::string& path, const std::vector<Cells>& rows,
                                 CsvRow header = run_ut_details_header()) {
  std::filesystem::remove(path);
  CsvWriter w(path, header);
  for (const auto& cells : rows) {
    CsvRow row(header.size(), " ");
    for (std::size_t c = 0; c < header.size(); ++c) {
      auto it = cells.find(header[c]);
      if (it != cells.end()) row[c] = it->second;
    }
    w.write_row(row);
  }
  return path;
}

inline ApiPrecisionCompareOptions options_for(const std::string& npu, const std::string& gpu,
                                              const std::string& out) {
  ApiPrecisionCompareOptions o;
  o.npu_csv = npu;
  o.gpu_csv = gpu;
  o.out_dir = out;
  o.profile = Profile::MsProbe;
  o.timestamp = "20250101000000";
  o.thresholds_file = PROBE_SOURCE_DIR "/data/api_precision_compare.json";
  return o;
}

}  // namespace probe::testing
