// The row loop of api_precision_compare (precheck.md §5.2, §5.4) and the safe writing of its two CSVs.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <optional>
#include <unordered_map>

#include "precision_compare/DetailsTable.h"
#include "precision_compare/Judge.h"
#include "probe/api_precision_compare.h"
#include "probe/csv.h"
#include "probe/error.h"
#include "standards/Thresholds.h"
#include "support/Timestamp.h"

namespace probe {

namespace pc = precision_compare;
namespace fs = std::filesystem;

namespace {

struct RowName {
  std::string api_name, full_name, direction;
};

// `type.name.order.direction.x.y` or `type.prefix.name.order.direction.x.y`; anything else is invalid.
std::optional<RowName> parse_row_name(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    std::size_t dot = name.find('.', start);
    parts.push_back(name.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  auto join = [&](std::size_t from, std::size_t to) {
    std::string s;
    for (std::size_t i = from; i < to; ++i) s += (i > from ? "." : "") + parts[i];
    return s;
  };
  if (parts.size() == 6) return RowName{parts[1], join(0, 3), parts[3]};
  if (parts.size() == 7) return RowName{join(1, 3), join(0, 4), parts[4]};
  return std::nullopt;
}

// msprobe get_api_checker_result: empty → none (SPACE), all SKIP → SKIP, any error → error, any Warning →
// Warning.
std::optional<Status> aggregate(const std::vector<Status>& statuses) {
  if (statuses.empty()) return std::nullopt;
  bool all_skip = true, error = false, warning = false;
  for (const Status s : statuses) {
    all_skip = all_skip && s == Status::Skip;
    error = error || s == Status::Error;
    warning = warning || s == Status::Warning;
  }
  if (all_skip) return Status::Skip;
  if (error) return Status::Error;
  if (warning) return Status::Warning;
  return Status::Pass;
}

void check_input_path(const std::string& path, const char* flag) {
  if (path.empty()) throw Error(ErrorKind::InvalidArgument, std::string(flag) + " is required");
  if (path.size() < 4 || path.compare(path.size() - 4, 4, ".csv") != 0)
    throw Error(ErrorKind::InvalidArgument, "expected a .csv file (a run_ut accuracy_checking_details CSV)",
                path, flag);
}

// DECISIONS (proposed, api_precision_compare outputs): msprobe appends rows to the final names as it goes and
// appends to an existing file of the same name. probe writes both outputs under a temporary name and renames
// them only once complete, so an interrupted or failed run never leaves a file that looks like a finished
// result (the temporaries are removed on failure), and it refuses to touch an existing output.
class PendingOutput {
 public:
  PendingOutput(fs::path final_path, const CsvRow& header) : final_(std::move(final_path)) {
    temp_ = final_;
    temp_ += ".partial";
    std::error_code ec;
    if (fs::exists(final_, ec))
      throw Error(ErrorKind::InvalidArgument, "output exists; refusing to overwrite it", final_.string());
    fs::remove(temp_, ec);
    writer_ = std::make_unique<CsvWriter>(temp_.string(), header);
  }
  ~PendingOutput() {
    if (!committed_) {
      writer_.reset();
      std::error_code ec;
      fs::remove(temp_, ec);
    }
  }
  void write(const CsvRow& row) {
    // DECISIONS (CSV injection): msprobe refuses the whole run on a formula-like API name; probe writes it
    // as literal text, the one policy of every writer (csv_escape_formula).
    CsvRow safe = row;
    for (auto& cell : safe) cell = csv_escape_formula(std::move(cell));
    writer_->write_row(safe);
  }
  void close() {
    writer_->sync();
    writer_.reset();
    ::chmod(temp_.c_str(), 0640);
  }
  void commit() {
    std::error_code ec;
    fs::rename(temp_, final_, ec);
    if (ec) throw Error(ErrorKind::Io, "cannot rename into place: " + ec.message(), final_.string());
    committed_ = true;
  }
  std::string path() const { return final_.string(); }

 private:
  fs::path final_, temp_;
  std::unique_ptr<CsvWriter> writer_;
  bool committed_ = false;
};

// Input paths and the timestamp, checked before any thresholds file is read; returns the timestamp to use.
std::string check_options(const ApiPrecisionCompareOptions& options) {
  check_input_path(options.npu_csv, "-npu");
  check_input_path(options.gpu_csv, "-gpu");
  std::string ts = options.timestamp.empty() ? detail::local_timestamp() : options.timestamp;
  if (!detail::is_timestamp(ts))
    throw Error(ErrorKind::InvalidArgument, "timestamp must be 14 digits (YYYYmmddHHMMSS)", {}, "timestamp");
  return ts;
}

fs::path prepare_out_dir(const std::string& dir) {
  fs::path p = dir.empty() ? fs::path(".") : fs::path(dir);
  std::error_code ec;
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(p, ec))
      throw Error(ErrorKind::InvalidArgument, "not a directory", p.string(), "-o");
    return p;
  }
  if (!fs::create_directories(p, ec) || ec)
    throw Error(ErrorKind::Io, "cannot create the output directory: " + ec.message(), p.string(), "-o");
  ::chmod(p.c_str(), 0750);
  return p;
}

class Run {
 public:
  Run(const pc::Thresholds& t, const pc::DetailsTable& npu, const pc::DetailsTable& gpu,
      PendingOutput& result, PendingOutput& details, ApiPrecisionCompareSummary& summary,
      const ApiPrecisionCompareProgressFn& progress)
      : t_(t),
        npu_(npu),
        gpu_(gpu),
        result_(result),
        details_(details),
        summary_(summary),
        progress_(progress) {}

  void operator()(const std::stop_token& stop) {
    std::size_t gpu_name_col = *gpu_.column("API Name");
    for (std::size_t r = 0; r < gpu_.rows(); ++r) gpu_index_[gpu_.raw(r, gpu_name_col)].push_back(r);
    std::size_t name_col = *npu_.column("API Name");
    std::size_t dtype_col = *npu_.column("DEVICE Dtype");
    for (; rows_done_ < npu_.rows(); ++rows_done_) {
      const std::string& name = npu_.raw(rows_done_, name_col);
      // Stop only where a new API starts, so every API in the files has all its rows and its result row.
      if (stop.stop_requested() && starts_api(name)) {
        summary_.cancelled = true;
        break;
      }
      row(rows_done_, name, npu_.raw(rows_done_, dtype_col), stop);
      if (summary_.cancelled) break;
    }
    flush();
  }

 private:
  void row(std::size_t r, const std::string& name, const std::string& dtype, const std::stop_token& stop) {
    auto parsed = parse_row_name(name);
    if (!parsed) {
      std::string msg = "The API name " + name + " is invalid.";
      skip_row(name, msg, {msg, npu_.path(), npu_.row_number(r), "API Name", msg});
      return;
    }
    auto it = gpu_index_.find(name);
    if (it == gpu_index_.end()) {
      summary_.missing_in_gpu.push_back({npu_.path(), npu_.row_number(r), "API Name",
                                         "This API : " + name + " does not exist in the GPU data."});
      return;
    }
    if (it->second.size() > 1)
      throw Error(ErrorKind::Format,
                  "This API : " + name + " has multiple records in the GPU data (rows " +
                      std::to_string(gpu_.row_number(it->second[0])) + " and " +
                      std::to_string(gpu_.row_number(it->second[1])) + ")",
                  gpu_.path(), "API Name", name);
    CsvRow detail = pc::RowFormat::details_row(name);
    Status status = Status::Skip;
    try {
      status = pc::judge_row(t_, npu_, r, gpu_, it->second[0], parsed->api_name, detail);
    } catch (const pc::RowSkip& skip) {
      skip_row(name, skip.message, skip);
      return;
    }
    if (last_full_name_ && *last_full_name_ != parsed->full_name) {
      flush();
      // A stop requested while the previous API was written (e.g. by the progress callback) ends the run
      // before this API's first row, so neither file holds a part of it.
      if (stop.stop_requested()) {
        summary_.cancelled = true;
        return;
      }
    }
    details_.write(detail);
    ++summary_.detail_rows;
    last_full_name_ = parsed->full_name;
    last_api_name_ = parsed->api_name;
    last_dtype_ = dtype;
    if (t_.unsupported_dtypes.count(dtype)) return;
    if (parsed->direction == "forward") {
      forward_.push_back(status);
      skip_message_ = status == Status::Skip ? detail[pc::kMessage] : "";
    } else if (parsed->direction == "backward") {
      backward_.push_back(status);
    }
  }

  bool starts_api(const std::string& name) const {
    if (!last_full_name_) return true;
    const auto parsed = parse_row_name(name);
    return !parsed || parsed->full_name != *last_full_name_;
  }

  // A row msprobe cannot judge: a SKIP detail row and a SKIP result row written at once, outside any group.
  void skip_row(const std::string& name, const std::string& message, pc::RowSkip note) {
    details_.write(pc::RowFormat::skip_details_row(name, message));
    ++summary_.detail_rows;
    write_result({name, Status::Skip, Status::Skip, message});
    summary_.skipped.push_back(
        {std::move(note.file), note.row, std::move(note.column), std::move(note.detail)});
  }

  void write_result(const pc::ResultRow& row) {
    result_.write(pc::RowFormat::result_cells(row));
    ++summary_.result_rows;
    if (row.forward == Status::Pass) ++summary_.forward_pass;
    if (row.forward == Status::Error) ++summary_.forward_error;
    if (row.forward == Status::Skip) ++summary_.forward_skip;
    if (progress_) progress_({rows_done_, npu_.rows(), summary_.result_rows});
  }

  void flush() {
    if (!last_full_name_) return;
    if (t_.unsupported_dtypes.count(last_dtype_)) {
      write_result({*last_full_name_, Status::Skip, Status::Skip,
                    "This data type does not support benchmark compare."});
    } else {
      const std::optional<Status> fwd = aggregate(forward_), bwd = aggregate(backward_);
      std::string message;
      if (fwd == Status::Error) {
        auto m = t_.compare_messages.find(last_api_name_);
        if (m != t_.compare_messages.end()) message += m->second;
      }
      if (fwd == Status::Skip) message += skip_message_;
      write_result({*last_full_name_, fwd, bwd, message});
      skip_message_.clear();
    }
    forward_.clear();
    backward_.clear();
    last_full_name_.reset();
  }

  const pc::Thresholds& t_;
  const pc::DetailsTable& npu_;
  const pc::DetailsTable& gpu_;
  PendingOutput& result_;
  PendingOutput& details_;
  ApiPrecisionCompareSummary& summary_;
  const ApiPrecisionCompareProgressFn& progress_;
  std::size_t rows_done_ = 0;
  std::unordered_map<std::string, std::vector<std::size_t>> gpu_index_;
  std::optional<std::string> last_full_name_;
  std::string last_api_name_, last_dtype_, skip_message_;
  std::vector<Status> forward_, backward_;
};

}  // namespace

ApiPrecisionCompareSummary run_api_precision_compare(const ApiPrecisionCompareOptions& options,
                                                     const ApiPrecisionCompareProgressFn& progress,
                                                     std::stop_token stop) {
  check_options(options);
  const PrecisionCompareThresholds thresholds =
      options.thresholds_file.empty()
          ? PrecisionCompareThresholds::builtin(options.profile)
          : PrecisionCompareThresholds::load(options.thresholds_file, options.profile);
  return run_api_precision_compare(options, thresholds, progress, std::move(stop));
}

ApiPrecisionCompareSummary run_api_precision_compare(const ApiPrecisionCompareOptions& options,
                                                     const PrecisionCompareThresholds& thresholds,
                                                     const ApiPrecisionCompareProgressFn& progress,
                                                     std::stop_token stop) {
  std::string ts = check_options(options);

  const pc::DetailsTable npu(options.npu_csv, "NPU");
  npu.require_columns(pc::required_columns());
  const pc::DetailsTable gpu(options.gpu_csv, "GPU");
  gpu.require_columns(pc::required_columns());

  fs::path out = prepare_out_dir(options.out_dir);
  // Without --timestamp a run whose names are taken (an earlier run in the same second) moves on to the next
  // free second, as run_ut and compare do; with --timestamp an existing output is refused.
  auto taken = [&](const std::string& t) {
    std::error_code ec;
    return fs::exists(out / ("api_precision_compare_result_" + t + ".csv"), ec) ||
           fs::exists(out / ("api_precision_compare_details_" + t + ".csv"), ec);
  };
  for (int tries = 0; options.timestamp.empty() && tries < 600 && taken(ts); ++tries)
    ts = detail::next_timestamp(ts);
  PendingOutput result(out / ("api_precision_compare_result_" + ts + ".csv"), pc::RowFormat::result_header());
  PendingOutput details(out / ("api_precision_compare_details_" + ts + ".csv"),
                        pc::RowFormat::details_header());
  ApiPrecisionCompareSummary summary;
  summary.result_csv = result.path();
  summary.details_csv = details.path();
  Run(thresholds, npu, gpu, result, details, summary, progress)(stop);
  result.close();
  details.close();
  details.commit();
  result.commit();
  return summary;
}

}  // namespace probe
