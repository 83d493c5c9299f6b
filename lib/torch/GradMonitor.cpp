// msprobe's grad_probe writer (pytorch/grad_probe/grad_monitor.py, grad_stat_csv.py) for LibTorch.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <utility>

#include "probe/csv.h"
#include "probe/dump_writer.h"
#include "probe/error.h"
#include "probe/number_format.h"
#include "probe/tensor_file.h"
#include "probe/torch.h"
#include "probe/torch/grad_monitor.h"

namespace probe::torch {

namespace fs = std::filesystem;

namespace {

bool known_level(const std::string& level) { return level == "L0" || level == "L1" || level == "L2"; }

// Python's f"{bound}": a JSON int prints as an int, a float as its repr.
std::string bound_text(double b) {
  if (std::isfinite(b) && b == std::trunc(b) && std::fabs(b) < 9.2e18)
    return std::to_string(static_cast<long long>(b));
  return python_repr(b);
}

// `.float().numpy().tolist()` of a 0-d result: the float32 value as a Python float.
std::string float_cell(const at::Tensor& t) {
  return python_repr(static_cast<double>(t.to(at::kFloat).item<float>()));
}

// x / element_num as Python divides two ints; the int 0 for an empty tensor.
std::string share_cell(std::int64_t count, std::int64_t n) {
  return n == 0 ? "0" : python_repr(static_cast<double>(count) / static_cast<double>(n));
}

void write_csv(const std::string& path, const std::vector<CsvRow>& rows) {
  // msprobe's write_csv: csv.writer (minimal quoting, CRLF) on a utf-8-sig file, replacing an old one.
  std::string text = "\xEF\xBB\xBF";
  for (const CsvRow& r : rows) text += csv_encode_row(r) + "\r\n";
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) throw Error(ErrorKind::Io, "cannot write the file", path);
}

void make_directory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot create the directory: " + ec.message(), dir.string());
}

}  // namespace

std::vector<std::string> grad_summary_header(const std::string& level, const std::vector<double>& bounds) {
  if (!known_level(level)) throw Error(ErrorKind::InvalidArgument, "expected L0, L1 or L2", {}, "grad_level");
  std::vector<std::string> h{"param_name"};
  if (level == "L0") h.push_back("MD5");
  if (level == "L2") {
    // Appended piecewise: GCC 12's -Wrestrict misfires on "(" + std::string temporaries.
    const auto interval = [](const std::string& lo, const std::string& hi, const char* close) {
      std::string cell = "(";
      cell.append(lo).append(", ").append(hi).append(close);
      return cell;
    };
    if (!bounds.empty()) {
      h.push_back(interval("-inf", bound_text(bounds[0]), "]"));
      for (std::size_t i = 1; i < bounds.size(); ++i)
        h.push_back(interval(bound_text(bounds[i - 1]), bound_text(bounds[i]), "]"));
      h.push_back(interval(bound_text(bounds.back()), "inf", ")"));
    }
    h.push_back("=0");
  }
  for (const char* c : {"max", "min", "norm", "shape"}) h.push_back(c);
  return h;
}

std::vector<std::string> grad_summary_row(const std::string& param_name, const std::string& level,
                                          const at::Tensor& grad_in, const std::vector<double>& bounds) {
  if (!known_level(level)) throw Error(ErrorKind::InvalidArgument, "expected L0, L1 or L2", {}, "grad_level");
  const at::Tensor grad = grad_in.detach().cpu();
  std::vector<std::string> row{param_name};
  if (level == "L0") row.push_back(dump_crc32(to_probe(grad.to(at::kFloat).contiguous())));
  if (level == "L2") {
    const at::Tensor g = grad.scalar_type() == at::kBFloat16 ? grad.to(at::kFloat) : grad;
    const std::int64_t n = g.numel();
    // torch.Tensor(bounds): the bounds as float32, as msprobe cuts with them.
    std::vector<float> b32(bounds.begin(), bounds.end());
    const at::Tensor edges = at::tensor(b32, at::kFloat);
    const at::Tensor bucket = at::bucketize(g, edges);
    for (std::size_t i = 0; i <= bounds.size(); ++i)
      row.push_back(share_cell(bucket.eq(static_cast<std::int64_t>(i)).sum().item<std::int64_t>(), n));
    row.push_back(share_cell(g.eq(0).sum().item<std::int64_t>(), n));
  }
  row.push_back(float_cell(at::max(grad)));
  row.push_back(float_cell(at::min(grad)));
  row.push_back(float_cell(at::norm(grad)));
  std::string shape = "[";
  for (std::size_t i = 0; i < static_cast<std::size_t>(grad.dim()); ++i)
    shape += (i ? ", " : "") + std::to_string(grad.size(static_cast<std::int64_t>(i)));
  row.push_back(shape + "]");
  return row;
}

struct GradMonitor::Impl {
  GradMonitorConfig config;
  std::int64_t rank = 0;
  bool active = true;
  std::int64_t step = -1;
  std::vector<std::pair<std::string, at::Tensor>> params;
};

GradMonitor::GradMonitor(GradMonitorConfig config, std::int64_t rank) : impl_(std::make_unique<Impl>()) {
  if (!known_level(config.grad_level))
    throw Error(ErrorKind::InvalidArgument, "expected L0, L1 or L2, got '" + config.grad_level + "'", {},
                "grad_level");
  for (std::size_t i = 1; i < config.bounds.size(); ++i)
    if (!(config.bounds[i - 1] < config.bounds[i]))
      throw Error(ErrorKind::InvalidArgument, "bounds list is not ascending", {}, "bounds");
  make_directory(config.dump_path);
  impl_->active = config.rank.empty() || std::count(config.rank.begin(), config.rank.end(), rank) > 0;
  impl_->config = std::move(config);
  impl_->rank = rank;
}

GradMonitor::~GradMonitor() = default;

void GradMonitor::monitor(const ::torch::nn::Module& model) {
  impl_->params.clear();
  for (const auto& item : model.named_parameters(true)) impl_->params.emplace_back(item.key(), item.value());
}

std::int64_t GradMonitor::step() const noexcept { return impl_->step; }

bool GradMonitor::before_optimizer_step() {
  Impl& m = *impl_;
  const GradMonitorConfig& c = m.config;
  if (!m.active) return false;
  ++m.step;
  if (!c.step.empty() && std::count(c.step.begin(), c.step.end(), m.step) == 0) return false;
  const fs::path rank_dir = fs::path(c.dump_path) / ("rank" + std::to_string(m.rank));
  const fs::path step_dir = rank_dir / ("step" + std::to_string(m.step));
  const bool direction = c.grad_level != "L0";
  std::vector<CsvRow> rows{grad_summary_header(c.grad_level, c.bounds)};
  for (const auto& [name, param] : m.params) {
    if (!c.param_list.empty() && std::count(c.param_list.begin(), c.param_list.end(), name) == 0) continue;
    const at::Tensor& grad = param.grad();
    if (!grad.defined()) continue;
    rows.push_back(grad_summary_row(name, c.grad_level, grad, c.bounds));
    if (direction) {
      make_directory(step_dir);
      save_npy((step_dir / (name + ".npy")).string(), to_probe(grad.detach().gt(0).cpu().contiguous()));
    }
  }
  make_directory(rank_dir);
  write_csv((rank_dir / ("grad_summary_" + std::to_string(m.step) + ".csv")).string(), rows);
  return true;
}

}  // namespace probe::torch
