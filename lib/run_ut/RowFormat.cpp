// The rows of run_ut's two checkers (precheck.md §3.5-§3.6 PyTorch, §7.2-§7.4 MindSpore), in one place each.
#include "run_ut/RowFormat.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "probe/api_name.h"
#include "probe/metric_table.h"
#include "probe/output_compare.h"
#include "standards/ErrorBound.h"

namespace probe {

namespace rut {
namespace {

// The result row with `blank` for a direction that has no verdict.
CsvRow result_cells_with(const ResultRow& row, const std::string& blank) {
  auto cell = [&](const std::optional<Status>& s) { return s ? std::string(to_string(*s)) : blank; };
  CsvRow cells{row.api, cell(row.forward), cell(row.backward)};
  if (row.message) cells.push_back(*row.message);
  return cells;
}

// DECISIONS D14: each direction's rows re-judged by the error bound where the API has a family. The
// backward only for the families that accumulate (a magnitude bench exists for their gradients).
void error_bound(const ApiOutputs& api, const Standards& standards, OutputCompareResult& cmp) {
  const std::string fwd_prefix = output_row_prefix(api.full_name, ApiDirection::Forward);
  std::size_t forward_rows = 0;
  while (forward_rows < cmp.rows.size() && cmp.rows[forward_rows].api_name.rfind(fwd_prefix, 0) == 0)
    ++forward_rows;
  std::vector<DetailRow> fwd(cmp.rows.begin(), cmp.rows.begin() + static_cast<std::ptrdiff_t>(forward_rows));
  cmp.forward_status = detail::rejudge_rows(
      api.bound_api, detail::value_leaves(api.bench), detail::value_leaves(api.device), api.magnitude,
      api.accumulation, fwd, 0, standards.aggregation, false, standards.error_histograms, api.exact_scalars);
  std::copy(fwd.begin(), fwd.end(), cmp.rows.begin());
  cmp.forward_ok = cmp.forward_status == Status::Pass;
  if (cmp.backward_status && api.bench_grads && api.device_grads && !api.grad_magnitude.empty()) {
    cmp.backward_status = detail::rejudge_rows(api.bound_api, detail::value_leaves(*api.bench_grads),
                                               detail::value_leaves(*api.device_grads), api.grad_magnitude,
                                               api.grad_accumulation, cmp.rows, forward_rows,
                                               standards.aggregation, true, standards.error_histograms);
    cmp.backward_ok = cmp.backward_status == Status::Pass;
  }
}

// DECISIONS D15: the rows [first, last) judged by exact equality: every element of the device tensor
// equals the bench's (NaN where NaN, zeros of the same sign). Rows already SKIP and non-tensor leaves keep
// their verdict. Returns the direction's status.
Status exact_rows(const ExactRule& rule, const std::vector<Value>& bench, const std::vector<Value>& device,
                  std::vector<DetailRow>& rows, std::size_t first, std::size_t last, Aggregation how) {
  std::vector<Status> statuses;
  for (std::size_t r = first; r < last; ++r) {
    DetailRow& row = rows[r];
    const std::size_t i = r - first;
    if (row.status != Status::Skip && i < bench.size() && i < device.size() && bench[i].is_tensor() &&
        device[i].is_tensor()) {
      const Tensor &b = bench[i].tensor(), &d = device[i].tensor();
      if (b.shape() != d.shape()) {
        row.status = Status::Error;
        row.message = fmt::format("shape {} where {} has {}; {} (D15)", shape_to_string(d.shape()),
                                  rule.reference, shape_to_string(b.shape()), rule.why);
      } else {
        const std::vector<double> bv = b.to_doubles(), dv = d.to_doubles();
        std::size_t differ = 0, at = 0;
        for (std::size_t k = 0; k < bv.size(); ++k) {
          const bool same = (std::isnan(bv[k]) && std::isnan(dv[k])) ||
                            (bv[k] == dv[k] && std::signbit(bv[k]) == std::signbit(dv[k]));
          if (!same && differ++ == 0) at = k;
        }
        row.status = differ ? Status::Error : Status::Pass;
        row.message = differ ? fmt::format(
                                   "{} of {} elements differ from {}, the first at {}: device {}, "
                                   "expected {}; {} (D15)",
                                   differ, bv.size(), rule.reference,
                                   detail::index_text(static_cast<std::int64_t>(at), b.shape()), dv[at],
                                   bv[at], rule.why)
                             : fmt::format("equal to {} bit for bit; {} (D15)", rule.reference, rule.why);
      }
    }
    statuses.push_back(row.status);
  }
  return aggregate_statuses(statuses, how);
}

// DECISIONS D16: the dataflow verdict joins the API's backward rows: a compared row takes the worse of
// its status and the verdict's, and when every backward row is SKIP (the API's own gradient could not be
// compared) the first one carries the verdict; a Skip verdict only adds its reason.
void dataflow_rows(const DataflowVerdict& v, const std::string& bwd_prefix, const Standards& standards,
                   OutputCompareResult& cmp) {
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < cmp.rows.size(); ++r)
    if (cmp.rows[r].api_name.rfind(bwd_prefix, 0) == 0) rows.push_back(r);
  if (rows.empty()) return;
  auto append = [&](DetailRow& row) {
    row.message = row.message.empty() || row.message == " " ? v.message : row.message + "; " + v.message;
  };
  const bool none_compared = std::all_of(rows.begin(), rows.end(),
                                         [&](std::size_t r) { return cmp.rows[r].status == Status::Skip; });
  if (v.status == Status::Skip) {
    append(cmp.rows[rows[0]]);
    return;
  }
  const std::string old_message = cmp.rows[rows[0]].message;
  if (none_compared) {
    DetailRow& row = cmp.rows[rows[0]];
    row.message = row.message.empty() || row.message == " " ? v.message : v.message + "; " + row.message;
    row.status = v.status;
  } else {
    for (std::size_t r : rows) {
      DetailRow& row = cmp.rows[r];
      if (row.status == Status::Skip) continue;
      row.status = std::max(row.status, v.status);
      append(row);
    }
  }
  std::vector<Status> statuses;
  for (std::size_t r : rows) statuses.push_back(cmp.rows[r].status);
  cmp.backward_status = aggregate_statuses(statuses, standards.aggregation);
  cmp.backward_ok = cmp.backward_status == Status::Pass;
  if (none_compared && cmp.result_message == old_message) cmp.result_message = cmp.rows[rows[0]].message;
}

class PyTorchFormat final : public RunUtFormat {
 public:
  PyTorchFormat() : RunUtFormat(run_ut_layout(Framework::PyTorch)) {}
  CsvRow result_cells(const ResultRow& row) const override { return result_cells_with(row, kSpace); }

  ApiRows skip(const std::string& full, const std::string& message) const override {
    ApiRows r;
    r.name = full;
    DetailRow row;  // every metric blank, status SKIP
    row.api_name = output_row_name(full, ApiDirection::Forward, 0);
    row.message = message;
    r.details.push_back(row.to_csv());
    r.result = ResultRow{full, Status::Skip, Status::Skip, message};
    return r;
  }

  ComparedApi compare(const ApiOutputs& api, const Standards& standards) const override {
    OutputCompareInput in;
    in.full_api_name = api.full_name;
    in.bench_output = Value(api.bench);
    in.device_output = Value(api.device);
    if (api.bench_grads && api.device_grads) {
      in.bench_grad = Value(*api.bench_grads);
      in.device_grad = Value(*api.device_grads);
    }
    in.backward_message = api.backward_skip;
    OutputCompareResult cmp = compare_output(in, standards);
    if (!api.bound_api.empty()) error_bound(api, standards, cmp);
    if (api.exact_forward || api.exact_backward) {
      const std::string fwd_prefix = output_row_prefix(api.full_name, ApiDirection::Forward);
      std::size_t forward_rows = 0;
      while (forward_rows < cmp.rows.size() && cmp.rows[forward_rows].api_name.rfind(fwd_prefix, 0) == 0)
        ++forward_rows;
      if (api.exact_forward) {
        cmp.forward_status =
            exact_rows(*api.exact_forward, detail::value_leaves(api.bench), detail::value_leaves(api.device),
                       cmp.rows, 0, forward_rows, standards.aggregation);
        cmp.forward_ok = cmp.forward_status == Status::Pass;
      }
      if (api.exact_backward && cmp.backward_status && api.bench_grads && api.device_grads) {
        cmp.backward_status = exact_rows(*api.exact_backward, detail::value_leaves(*api.bench_grads),
                                         detail::value_leaves(*api.device_grads), cmp.rows, forward_rows,
                                         cmp.rows.size(), standards.aggregation);
        cmp.backward_ok = cmp.backward_status == Status::Pass;
      }
    }
    if (api.dataflow)
      dataflow_rows(*api.dataflow, output_row_prefix(api.full_name, ApiDirection::Backward), standards, cmp);
    ComparedApi out;
    out.rows.name = api.full_name;
    const std::string bwd_prefix = output_row_prefix(api.full_name, ApiDirection::Backward);
    const bool msprobe = standards.profile() == Profile::MsProbe;
    for (DetailRow row : cmp.rows) {
      // The Bench Dtype column: the probe profile names the dtype probe benched in (float64, D5); the
      // msprobe profile writes what msprobe's raised-precision bench would have.
      if (row.bench_dtype == "torch.float64") {
        if (api.msprobe_bench_dtype)
          row.bench_dtype = std::string(torch_name(*api.msprobe_bench_dtype));
        else if (msprobe && row.device_dtype != kSpace)
          row.bench_dtype = row.device_dtype;
      }
      // Say why an input gradient was not compared (instead of msprobe's "Bench output is None").
      if (row.status == Status::Skip && row.api_name.rfind(bwd_prefix, 0) == 0) {
        std::size_t i = std::stoul(row.api_name.substr(bwd_prefix.size()));
        if (i < api.backward_notes.size() && !api.backward_notes[i].empty())
          row.message = api.backward_notes[i];
      }
      if (row.histogram && (row.status == Status::Error || row.status == Status::Warning))
        out.rows.histograms.emplace_back(row.api_name, *row.histogram);
      out.rows.details.push_back(row.to_csv());
    }
    out.rows.result = ResultRow{api.full_name, cmp.forward_status, cmp.backward_status, cmp.result_message};
    out.forward_ok = cmp.forward_ok;
    out.backward_ok = cmp.backward_ok;
    return out;
  }
};

class MindSporeFormat final : public RunUtFormat {
 public:
  MindSporeFormat() : RunUtFormat(run_ut_layout(Framework::MindSpore)) {}
  CsvRow result_cells(const ResultRow& row) const override { return result_cells_with(row, ""); }

  ApiRows skip(const std::string& full, const std::string& message) const override {
    ApiRows r;
    r.name = full;
    r.result = ResultRow{full, Status::Skip, std::nullopt, message};
    return r;
  }

  ComparedApi compare(const ApiOutputs& api, const Standards& standards) const override {
    ComparedApi out;
    ApiRows& r = out.rows;
    r.name = api.full_name;
    direction(api.full_name, api.bench, api.device, false, standards, r, out.forward_ok);
    if (api.bench_grads && api.device_grads)
      direction(api.full_name, *api.bench_grads, *api.device_grads, true, standards, r, out.backward_ok);
    else
      out.backward_ok = true;
    if (!api.backward_skip.empty()) {
      if (!r.result) r.result = ResultRow{api.full_name, std::nullopt, std::nullopt, ""};
      r.result->backward = Status::Skip;
      *r.result->message += api.backward_skip;
    } else if (r.details.empty()) {
      r.result.reset();  // nothing compared and nothing failed: msprobe writes no result row
    }
    return out;
  }

 private:
  // §7.2-§7.4: the rows of one direction appended to `r`, and its part of the result row.
  static void direction(const std::string& full, const std::vector<Value>& bench,
                        const std::vector<Value>& tested, bool backward, const Standards& standards,
                        ApiRows& r, bool& ok) {
    auto keep = [&](const Value& v) {
      if (v.is_none()) return false;
      return !backward || (v.is_tensor() && is_floating(v.tensor().dtype()));
    };
    std::vector<const Value*> b, t;
    for (const auto& v : bench)
      if (keep(v)) b.push_back(&v);
    for (const auto& v : tested)
      if (keep(v)) t.push_back(&v);
    std::optional<Status> status;
    std::string message;
    std::size_t n = std::min(b.size(), t.size());
    auto dtype_text = [](const Value& v, const Value& like) -> std::string {
      if (v.is_tensor())
        return std::string(mindspore_name(like.is_tensor() ? like.tensor().dtype() : v.tensor().dtype()));
      // MindSpore calls a sequence output a tuple; every other kind keeps Value's own name.
      if (v.kind() == Value::Kind::List) return "tuple";
      return std::string(to_string(v.kind()));
    };
    for (std::size_t i = 0; i < n; ++i) {
      MindSporeRow row = compare_mindspore(*b[i], *t[i], standards);
      // The bench ran in float64 (D5); the CSV names the dtype the API has, as msprobe's same-dtype bench
      // does.
      CsvRow cells = {output_row_name(full, backward ? ApiDirection::Backward : ApiDirection::Forward, i),
                      dtype_text(*b[i], *t[i]),
                      dtype_text(*t[i], *t[i]),
                      b[i]->is_tensor() ? shape_to_string(b[i]->tensor().shape()) : "()",
                      row.cosine.format(),
                      row.max_abs.format(),
                      row.max_rel.format(),
                      std::string(to_string(row.status)),
                      row.message};
      for (int c : {4, 5, 6})
        if (cells[c] == kSpace) cells[c].clear();  // MindSpore writes None as an empty cell
      r.details.push_back(std::move(cells));
      if (row.status != Status::Pass) {
        status = Status::Error;
        message += row.message;
      }
    }
    if (n > 0 && !status) status = Status::Pass;
    ok = status != Status::Error;
    if (!r.result) r.result = ResultRow{full, std::nullopt, std::nullopt, ""};
    (backward ? r.result->backward : r.result->forward) = status;
    if (status == Status::Error) *r.result->message += message;
  }
};

}  // namespace

const RunUtFormat& run_ut_format(Framework fw) {
  static const PyTorchFormat pytorch;
  static const MindSporeFormat mindspore;
  if (fw == Framework::MindSpore) return mindspore;
  return pytorch;
}

void mark_direction_error(const RunUtFormat& format, ApiRows& rows, std::string_view direction,
                          const std::string& message) {
  const CsvRow& header = format.details_header();
  const auto status = std::find(header.begin(), header.end(), "Status") - header.begin();
  const auto text = std::find(header.begin(), header.end(), "Message") - header.begin();
  const std::string prefix = rows.name + "." + std::string(direction) + ".";
  for (CsvRow& row : rows.details)
    if (status < text && text < std::ssize(header) && row.size() == header.size() &&
        row[0].rfind(prefix, 0) == 0) {
      row[static_cast<std::size_t>(status)] = std::string(to_string(Status::Error));
      row[static_cast<std::size_t>(text)] = message;
    }
  if (!rows.result) return;
  (direction == "forward" ? rows.result->forward : rows.result->backward) = Status::Error;
  std::string& m = rows.result->message ? *rows.result->message : rows.result->message.emplace();
  if (m.find(message) == std::string::npos) m = m.empty() || m == kSpace ? message : m + " " + message;
}

}  // namespace rut
}  // namespace probe
