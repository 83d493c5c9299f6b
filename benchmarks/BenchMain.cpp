// The main() of every benchmark driver: Google Benchmark's, except for --benchmark_format=csv and
// --benchmark_out_format=csv. Google Benchmark 1.7's CSV reporter aborts as soon as one run carries a
// counter the first run did not (our drivers report GFLOP/s for one family and Gelem/s or a ratio for the
// next), so CSV is written here: every counter any run reported is a column, empty where a run has none.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace {

class CounterUnionCsvReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    runs_.insert(runs_.end(), runs.begin(), runs.end());
  }

  // Rows are held until the end: the columns are known only when every run has reported.
  void Finalize() override {
    std::vector<std::string> counters;
    for (const Run& r : runs_)
      for (const auto& [name, value] : r.counters)
        if (std::find(counters.begin(), counters.end(), name) == counters.end()) counters.push_back(name);
    std::ostream& out = GetOutputStream();
    out << "name,iterations,real_time,cpu_time,time_unit,label,error_message";
    for (const std::string& c : counters) out << ',' << quoted(c);
    out << '\n';
    for (const Run& r : runs_) {
      out << quoted(r.benchmark_name()) << ',';
      if (!r.error_occurred)
        out << r.iterations << ',' << r.GetAdjustedRealTime() << ',' << r.GetAdjustedCPUTime() << ','
            << benchmark::GetTimeUnitString(r.time_unit);
      else
        out << ",,,";
      out << ',' << quoted(r.report_label) << ',' << quoted(r.error_message);
      for (const std::string& c : counters) {
        out << ',';
        if (auto it = r.counters.find(c); it != r.counters.end()) out << it->second.value;
      }
      out << '\n';
    }
  }

 private:
  static std::string quoted(const std::string& s) {
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + '"';
  }
  std::vector<Run> runs_;
};

}  // namespace

int main(int argc, char** argv) {
  // Take the CSV format flags out before Google Benchmark sees them, so it keeps its console and JSON output.
  bool csv_display = false, csv_file = false, out_file = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--benchmark_format=csv") == 0) {
      csv_display = true;
    } else if (std::strcmp(argv[i], "--benchmark_out_format=csv") == 0) {
      csv_file = true;
    } else {
      out_file |= std::strncmp(argv[i], "--benchmark_out=", 16) == 0;
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  CounterUnionCsvReporter display, file;
  benchmark::RunSpecifiedBenchmarks(csv_display ? &display : nullptr, csv_file && out_file ? &file : nullptr);
  benchmark::Shutdown();
  return 0;
}
