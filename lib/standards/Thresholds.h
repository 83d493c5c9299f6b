// The constants api_precision_compare judges with, loaded from data/api_precision_compare.json.
#pragma once

#include <string>

#include "probe/api_precision_compare.h"

namespace probe::precision_compare {

// The public struct under the name the judging code has always used.
using Thresholds = PrecisionCompareThresholds;

/// Loads `file` (common section overridden key by key by `profile`, a profile name of the file); throws
/// probe::Error naming file and key. PrecisionCompareThresholds::load with the profile as text.
Thresholds load_thresholds(const std::string& file, const std::string& profile);
/// The data file, found by probe's data-file lookup (support/DataFiles.h).
std::string default_thresholds_file();

}  // namespace probe::precision_compare
