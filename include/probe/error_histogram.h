// The distribution of one output's element errors, in fixed power-of-two bins: what the report draws for a
// flagged output. Computed only when asked for (MetricParams::histogram, ErrorBoundScan), riding the pass
// that judges the output.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace probe {

/// What an element error is measured in: its error over its D14 bound (1 = at the bound), msprobe's ULP
/// error (units of the device dtype at the bench's exponent), or |device - bench| / |bench|.
enum class HistogramUnit { BoundUnits, Ulp, RelativeError };

/// "error / bound", "ulp", "relative error": the spelling the report's sidecar file and page use.
constexpr std::string_view to_string(HistogramUnit u) noexcept {
  return u == HistogramUnit::BoundUnits ? "error / bound"
         : u == HistogramUnit::Ulp      ? "ulp"
                                        : "relative error";
}

/// Element errors counted in bins [2^e, 2^(e+1)) for kMinExp <= e < kMaxExp, plus exact zeros, errors
/// below 2^kMinExp, at or above 2^kMaxExp (a finite element against a zero bench for relative error), and
/// non-finite mismatches (NaN or Inf on one side only). Powers of two keep the bin edges exact (the ULP
/// thresholds 1 and 32 and the bound 1 are edges) and binning needs no logarithm.
struct ErrorHistogram {
  static constexpr int kMinExp = -40, kMaxExp = 24, kBins = kMaxExp - kMinExp;
  HistogramUnit unit = HistogramUnit::RelativeError;
  std::int64_t zero = 0, below = 0, above = 0, nonfinite = 0;
  std::array<std::int64_t, kBins> counts{};

  /// Slots of a flat count array (what a hot loop counts into, then add_slots): zero, below, the bins,
  /// above, non-finite.
  static constexpr int kSlots = kBins + 4;
  /// The slot of one error (>= 0): +Inf counts as above, NaN as a non-finite mismatch. The exponent is read
  /// from the bits (no libm call): the binning costs a few integer operations an element.
  static int slot(double error) noexcept {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(error) & ~(std::uint64_t{1} << 63);
    if (bits == 0) return 0;
    const int biased = static_cast<int>(bits >> 52);
    if (biased == 0x7ff) return (bits & ((std::uint64_t{1} << 52) - 1)) ? kSlots - 1 : kSlots - 2;
    // Subnormals (biased 0) lie far below 2^kMinExp.
    return std::clamp(biased - 1023 - kMinExp + 2, 1, kSlots - 2);
  }
  /// Counts one error (see slot()).
  void add(double error) noexcept {
    std::array<std::int64_t, kSlots> one{};
    ++one[static_cast<std::size_t>(slot(error))];
    add_slots(one);
  }
  /// Adds counts indexed by slot().
  void add_slots(const std::array<std::int64_t, kSlots>& s) noexcept {
    zero += s[0];
    below += s[1];
    for (int b = 0; b < kBins; ++b) counts[static_cast<std::size_t>(b)] += s[static_cast<std::size_t>(b + 2)];
    above += s[kSlots - 2];
    nonfinite += s[kSlots - 1];
  }
  void merge(const ErrorHistogram& o) noexcept {
    zero += o.zero;
    below += o.below;
    above += o.above;
    nonfinite += o.nonfinite;
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] += o.counts[i];
  }
  std::int64_t total() const noexcept {
    std::int64_t t = zero + below + above + nonfinite;
    for (std::int64_t c : counts) t += c;
    return t;
  }
};

/// run_ut's sidecar of its details CSV that holds the flagged outputs' histograms (written when a report is
/// asked for; the msprobe-format CSVs never change): accuracy_checking_details_<ts>.csv ->
/// accuracy_checking_histograms_<ts>.csv in the same directory; "" for another file name.
inline std::string error_histogram_path(std::string_view details_csv) {
  constexpr std::string_view kDetails = "accuracy_checking_details_";
  const auto p = details_csv.rfind(kDetails);
  if (p == std::string_view::npos || details_csv.find('/', p) != std::string_view::npos) return {};
  return std::string(details_csv.substr(0, p)) + "accuracy_checking_histograms_" +
         std::string(details_csv.substr(p + kDetails.size()));
}

/// The sidecar's header: API Name, Unit, then the counts: zero, below 2^kMinExp, one column "2^e" per bin
/// (errors in [2^e, 2^(e+1))), at or above 2^kMaxExp, non-finite.
inline std::vector<std::string> error_histogram_header() {
  std::vector<std::string> h{"API Name", "Unit", "zero",
                             "below 2^" + std::to_string(ErrorHistogram::kMinExp)};
  for (int e = ErrorHistogram::kMinExp; e < ErrorHistogram::kMaxExp; ++e)
    h.push_back("2^" + std::to_string(e));
  h.push_back("above 2^" + std::to_string(ErrorHistogram::kMaxExp));
  h.push_back("non-finite");
  return h;
}

}  // namespace probe
