// The constants api_precision_compare judges with, loaded from data/api_precision_compare.json.
#pragma once

#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "probe/precision_standard.h"

namespace probe::precision_compare {

struct Thresholds {
  std::unordered_set<std::string> unsupported_dtypes;  ///< SKIP rows, SKIP groups (float64, complex)
  std::unordered_set<std::string> fp8_dtypes;          ///< judged by ULP (out) / absolute (in)
  std::unordered_set<std::string> float_dtypes;        ///< anything else goes to binary consistency
  std::string zero_shape;
  std::vector<std::pair<Standard, std::unordered_set<std::string>>> api_groups;  ///< first match wins
  std::map<std::string, double> minimum_err, accumulative_eb;                    ///< by dtype, with "default"
  double small_value_err = 0, rmse_err = 0, max_rel_err = 0, mean_rel_err = 0, eb_err = 0;
  double thousandth_pass = 0;
  double ulp_fp32_mean = 0, ulp_fp32_proportion = 0, ulp_low_proportion = 0, ulp_proportion_ratio = 0;
  std::map<std::string, std::string> compare_messages;  ///< hint appended on forward error, by API name

  double min_err(const std::string& dtype) const;
  double eb_threshold(const std::string& dtype) const;
};

/// Loads `file` (common section overridden key by key by `profile`); throws probe::Error naming file and key.
Thresholds load_thresholds(const std::string& file, const std::string& profile);
/// The data file, found by probe's data-file lookup (support/DataFiles.h).
std::string default_thresholds_file();

}  // namespace probe::precision_compare
