// msprobe's GradComparator (core/grad_probe/grad_compare.py) on two gradient-monitor dumps.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "probe/csv.h"
#include "probe/error.h"
#include "probe/grad_compare.h"
#include "probe/number_format.h"
#include "probe/tensor_file.h"

namespace probe {

namespace fs = std::filesystem;

namespace {

void require_directory(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) throw Error(ErrorKind::Io, "no such directory", path);
}

std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) names.push_back(e.path().filename());
  if (ec) throw Error(ErrorKind::Io, "cannot list the directory: " + ec.message(), dir);
  // msprobe takes os.listdir's order, which the file system chooses; sorted names make the choice of the
  // grad_summary csv (the parameter order) reproducible.
  std::sort(names.begin(), names.end());
  return names;
}

// msprobe's _get_matched_dirs: the N of every {prefix}N entry of path1 (N all digits) whose path2
// counterpart is a directory, ascending.
std::vector<long long> matched_dirs(const std::string& path1, const std::string& path2,
                                    const std::string& prefix) {
  require_directory(path1);
  require_directory(path2);
  std::vector<long long> out;
  for (const std::string& name : entries_of(path1)) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string index = name.substr(prefix.size());
    if (!std::all_of(index.begin(), index.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
      continue;
    std::error_code ec;
    if (!fs::is_directory(fs::path(path2) / name, ec)) continue;
    if (index.size() > 18) throw Error(ErrorKind::InvalidArgument, "index out of range", path1, name);
    out.push_back(std::stoll(index));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// msprobe's _get_grad_weight_order: the param_name column of the first grad_summary csv of path1 that path2
// holds too.
std::vector<std::string> weight_order(const std::string& path1, const std::string& path2) {
  for (const std::string& name : entries_of(path1)) {
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".csv") != 0) continue;
    std::error_code ec;
    if (!fs::exists(fs::path(path2) / name, ec)) continue;
    const std::string file = (fs::path(path1) / name).string();
    const std::vector<CsvRow> rows = csv_read_file(file);
    if (rows.empty()) throw Error(ErrorKind::Format, "empty csv", file);
    const auto column = std::find(rows[0].begin(), rows[0].end(), "param_name");
    if (column == rows[0].end()) throw Error(ErrorKind::Format, "no param_name column", file, "param_name");
    const auto at = static_cast<std::size_t>(column - rows[0].begin());
    std::vector<std::string> order;
    for (std::size_t r = 1; r < rows.size(); ++r) {
      if (at >= rows[r].size())
        throw Error(ErrorKind::Format, "row " + std::to_string(r) + " is short", file);
      order.push_back(rows[r][at]);
    }
    return order;
  }
  throw Error(ErrorKind::InvalidArgument,
              "no matched grad_summary.csv for comparison, please dump data in same configuration", path1);
}

// msprobe's _get_matched_grad_files: the .npy/.pt files of path1/step{N} that path2/step{N} holds too,
// sorted.
std::vector<std::string> matched_grad_files(const std::string& step1, const std::string& step2) {
  require_directory(step1);
  require_directory(step2);
  std::vector<std::string> out;
  for (const std::string& name : entries_of(step1)) {
    const std::size_t dot = name.rfind('.');
    const std::string suffix = dot == std::string::npos ? name : name.substr(dot + 1);
    if (suffix != "npy" && suffix != "pt") continue;
    std::error_code ec;
    if (!fs::exists(fs::path(step2) / name, ec)) continue;
    out.push_back(name);
  }
  return out;
}

struct Counts {
  long long same = 0;
  long long total = 0;
};

Counts direction_agreement(const std::string& file1, const std::string& file2) {
  const Tensor a = load_npy(file1);
  const Tensor b = load_npy(file2);
  if (a.shape() != b.shape())
    throw Error(ErrorKind::Format, "tensor shape is not equal: " + file1 + ", " + file2, file1);
  if (a.dtype() != DType::Bool) throw Error(ErrorKind::Format, "tensor type is not bool", file1);
  if (b.dtype() != DType::Bool) throw Error(ErrorKind::Format, "tensor type is not bool", file2);
  Counts c;
  c.total = a.numel();
  const std::byte* pa = a.bytes();
  const std::byte* pb = b.bytes();
  for (long long i = 0; i < c.total; ++i)
    c.same += (pa[i] != std::byte{0}) == (pb[i] != std::byte{0}) ? 1 : 0;
  return c;
}

// msprobe writes same/total (a float, Python's repr) or the int 0 for an empty parameter.
std::string cell(double v, bool empty) { return empty ? "0" : python_repr(v); }

}  // namespace

std::optional<long long> grad_first_suspicious_step(const std::vector<long long>& steps,
                                                    const std::vector<GradSimilarityRow>& rows) {
  constexpr double kFirstStepFloor = 0.97;
  constexpr double kMaxDrop = 0.03;
  for (std::size_t i = 0; i < steps.size(); ++i)
    for (const GradSimilarityRow& row : rows) {
      if (i >= row.values.size()) continue;
      if (i == 0 ? row.values[0] < kFirstStepFloor : row.values[i - 1] - row.values[i] > kMaxDrop)
        return steps[i];
    }
  return std::nullopt;
}

GradRankComparison grad_compare_rank(const std::string& path1, const std::string& path2,
                                     const std::string& output_dir, long long rank) {
  GradRankComparison r;
  r.rank = rank;
  r.steps = matched_dirs(path1, path2, "step");
  if (r.steps.empty())
    throw Error(
        ErrorKind::InvalidArgument,
        "no matched steps for comparison, please dump data in same configuration (both rank "
        "directories must hold step{step}/ directories of .npy directions, grad_probe level L1 or L2; "
        "compared with " +
            path2 + ")",
        path1);
  const std::vector<std::string> order = weight_order(path1, path2);
  std::vector<std::string> names;  // insertion order of msprobe's dict
  std::map<std::string, std::vector<std::pair<double, bool>>> values;
  const auto add = [&](const std::string& name, double v, bool empty) {
    auto [it, fresh] = values.try_emplace(name);
    if (fresh) names.push_back(name);
    it->second.emplace_back(v, empty);
  };
  for (long long step : r.steps) {
    const std::string step1 = (fs::path(path1) / ("step" + std::to_string(step))).string();
    const std::string step2 = (fs::path(path2) / ("step" + std::to_string(step))).string();
    const std::vector<std::string> files = matched_grad_files(step1, step2);
    Counts sum;
    for (const std::string& param : order) {
      const auto file = std::find_if(files.begin(), files.end(), [&](const std::string& f) {
        return f.substr(0, f.rfind('.')) == param;
      });
      if (file == files.end())
        throw Error(ErrorKind::InvalidArgument,
                    "no matched grad_file for comparison, please dump data in same configuration", step1,
                    param);
      const Counts c =
          direction_agreement((fs::path(step1) / *file).string(), (fs::path(step2) / *file).string());
      sum.same += c.same;
      sum.total += c.total;
      add(param, c.total == 0 ? 0.0 : static_cast<double>(c.same) / static_cast<double>(c.total),
          c.total == 0);
    }
    add("summary", sum.total == 0 ? 0.0 : static_cast<double>(sum.same) / static_cast<double>(sum.total),
        sum.total == 0);
  }

  std::error_code ec;
  fs::create_directories(output_dir, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot create the directory: " + ec.message(), output_dir);
  // msprobe's write_csv: csv.writer (minimal quoting, CRLF) on a utf-8-sig file.
  std::string text = "\xEF\xBB\xBF";
  CsvRow head{"step"};
  for (long long s : r.steps) head.push_back(std::to_string(s));
  text += csv_encode_row(head) + "\r\n";
  for (const std::string& name : names) {
    const auto& v = values.at(name);
    if (v.size() != r.steps.size())
      throw Error(ErrorKind::InvalidArgument,
                  "similarities length of " + name + ":" + std::to_string(v.size()) +
                      " not equal steps:" + std::to_string(r.steps.size()),
                  path1, name);
    CsvRow row{name};
    GradSimilarityRow out{name, {}};
    for (const auto& [x, empty] : v) {
      row.push_back(cell(x, empty));
      out.values.push_back(x);
    }
    text += csv_encode_row(row) + "\r\n";
    r.rows.push_back(std::move(out));
  }
  r.file = (fs::path(output_dir) / "similarities.csv").string();
  std::ofstream f(r.file, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) throw Error(ErrorKind::Io, "cannot write the file", r.file);
  r.first_suspicious_step = grad_first_suspicious_step(r.steps, r.rows);
  return r;
}

GradCompareResult grad_compare(const GradCompareOptions& options) {
  const std::vector<long long> ranks = matched_dirs(options.path1, options.path2, "rank");
  if (ranks.empty())
    throw Error(ErrorKind::InvalidArgument,
                "no matched ranks for comparison, please dump data in same configuration (both directories "
                "must hold rank{R}/ directories of a grad_probe dump, with grad_summary_{step}.csv and "
                "step{step}/; compared with " +
                    options.path2 + ")",
                options.path1);
  GradCompareResult result;
  for (long long rank : ranks) {
    const std::string dir = "rank" + std::to_string(rank);
    result.ranks.push_back(grad_compare_rank((fs::path(options.path1) / dir).string(),
                                             (fs::path(options.path2) / dir).string(),
                                             (fs::path(options.output_dir) / dir).string(), rank));
  }
  return result;
}

}  // namespace probe
