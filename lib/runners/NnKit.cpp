#include "runners/NnKit.h"

#include <fmt/format.h>

#include "probe/error.h"
#include "runners/Ops.h"

namespace probe::runners::nn {

std::vector<std::int64_t> expand_ints(const std::vector<std::int64_t>& v, std::size_t n, const char* what) {
  if (v.size() == 1) return std::vector<std::int64_t>(n, v[0]);
  if (v.size() != n)
    invalid(fmt::format("expected {} to be a single integer value or a list of {} values", what, n));
  return v;
}

void need_floating(const Var& x, const std::string& fn) {
  if (!is_floating(x.dtype())) invalid(fmt::format("\"{}\" not implemented for '{}'", fn, name(x.dtype())));
}

std::string reduction_of(Ctx& c) {
  const Value& sa = c["size_average"];
  const Value& re = c["reduce"];
  if (sa.is_none() && re.is_none()) return c.s("reduction");
  const bool size_average = sa.is_none() ? true : sa.as_bool();
  const bool reduce = re.is_none() ? true : re.as_bool();
  if (!reduce) return "none";
  return size_average ? "mean" : "sum";
}

void check_alloc(double elements, const char* fn) {
  constexpr double kMaxElements = 2147483648.0;
  if (!(elements <= kMaxElements))
    throw Error(
        ErrorKind::Unsupported,
        fmt::format("{}: the result would need {:.4g} float64 elements, more than the reference's limit of "
                    "2^31",
                    fn, elements));
}

Var reduce_loss(const Var& loss, const std::string& reduction) {
  if (reduction == "none") return loss;
  if (reduction == "mean") return ops::mean(loss);
  if (reduction == "sum") return ops::sum(loss);
  invalid(fmt::format("{} is not a valid value for reduction", reduction));
}

Var apply_map(const Var& x, const SparseMap& m, Shape out_shape, double fill) {
  const auto n_out = static_cast<std::size_t>(probe::numel(out_shape));
  if (m.offset.size() != n_out + 1)
    throw Error(ErrorKind::Internal, "apply_map: map does not match the shape");
  const Buffer& xd = x.data();
  Buffer y(n_out);
  for (std::size_t o = 0; o < n_out; ++o) {
    const auto b = static_cast<std::size_t>(m.offset[o]), e = static_cast<std::size_t>(m.offset[o + 1]);
    if (b == e) {
      y[o] = fill;
      continue;
    }
    double acc = 0;
    for (std::size_t j = b; j < e; ++j) acc += m.weight[j] * xd[static_cast<std::size_t>(m.index[j])];
    y[o] = acc;
  }
  detail::maybe_round_f32(y, x.dtype());
  VjpFn vjp;
  if (GradMode::enabled() && x.requires_grad())
    vjp = [m, n = xd.size()](const Buffer& g) {
      Buffer gx(n, 0.0);
      for (std::size_t o = 0; o + 1 < m.offset.size(); ++o)
        for (auto j = static_cast<std::size_t>(m.offset[o]); j < static_cast<std::size_t>(m.offset[o + 1]);
             ++j)
          gx[static_cast<std::size_t>(m.index[j])] += m.weight[j] * g[o];
      return std::vector<Buffer>{std::move(gx)};
    };
  return make_result(std::move(out_shape), std::move(y), x.dtype(), {x}, std::move(vjp));
}

}  // namespace probe::runners::nn
