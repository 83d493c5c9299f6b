#include "runners/NdIndex.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <xtensor/xadapt.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xtensor.hpp>

namespace probe::runners::nd {

namespace {

using Dims = std::vector<std::size_t>;

// Calls fn(std::integral_constant<std::size_t, N>) for the rank r in [1, kMaxRank].
template <class F>
void with_rank(std::size_t r, F&& fn) {
  switch (r) {
    case 1:
      return fn(std::integral_constant<std::size_t, 1>{});
    case 2:
      return fn(std::integral_constant<std::size_t, 2>{});
    case 3:
      return fn(std::integral_constant<std::size_t, 3>{});
    case 4:
      return fn(std::integral_constant<std::size_t, 4>{});
    case 5:
      return fn(std::integral_constant<std::size_t, 5>{});
    default:
      static_assert(kMaxRank == 6);
      return fn(std::integral_constant<std::size_t, 6>{});
  }
}

template <std::size_t N>
std::array<std::size_t, N> to_array(const Dims& v) {
  std::array<std::size_t, N> a{};
  std::copy_n(v.begin(), N, a.begin());
  return a;
}

// Sum over every other dim of a merged shape (reduced and kept dims alternate after merging), starting
// with dim 0 when FirstReduced. xtensor's immediate reducer walks the input once in memory order and adds
// each element to its output (starting from 0), except that it sums a contiguous innermost block first and
// adds that partial sum to the output; sum_axes only calls it when that block is the only reduced one.
template <std::size_t N, bool FirstReduced>
void sum_fixed(const double* in, std::size_t n, const Dims& shape, double* out) {
  constexpr std::size_t K = FirstReduced ? (N + 1) / 2 : N / 2;
  std::array<std::size_t, K> axes{};
  for (std::size_t k = 0; k < K; ++k) axes[k] = 2 * k + (FirstReduced ? 0 : 1);
  const auto a = xt::adapt(in, n, xt::no_ownership(), to_array<N>(shape));
  const auto r = xt::sum(a, axes, xt::evaluation_strategy::immediate);
  std::copy(r.data(), r.data() + r.size(), out);
}

template <std::size_t N>
void permute_fixed(const double* in, std::size_t n, const Dims& shape, const Dims& perm, double* out) {
  const auto sh = to_array<N>(shape), p = to_array<N>(perm);
  std::array<std::size_t, N> osh{};
  for (std::size_t i = 0; i < N; ++i) osh[i] = sh[p[i]];
  const auto a = xt::adapt(in, n, xt::no_ownership(), sh);
  auto o = xt::adapt(out, n, xt::no_ownership(), osh);
  xt::noalias(o) = xt::transpose(a, p);
}

}  // namespace

bool sum_axes(const double* in, const Shape& shape, const std::vector<bool>& reduced, double* out) {
  std::size_t total = 1, outputs = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    total *= static_cast<std::size_t>(shape[d]);
    if (!reduced[d]) outputs *= static_cast<std::size_t>(shape[d]);
  }
  if (total == 0) {
    std::fill_n(out, outputs, 0.0);
    return true;
  }
  // Size-1 dims do not change the order of the elements; neighbouring dims of the same kind merge.
  Dims merged;
  std::vector<bool> red;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!red.empty() && red.back() == reduced[d]) {
      merged.back() *= static_cast<std::size_t>(shape[d]);
    } else {
      merged.push_back(static_cast<std::size_t>(shape[d]));
      red.push_back(reduced[d]);
    }
  }
  const std::size_t r = merged.size();
  const auto n_reduced = static_cast<std::size_t>(std::count(red.begin(), red.end(), true));
  if (n_reduced == 0) {  // nothing summed: each output is one element (0.0 + x, as the loop computes it)
    for (std::size_t i = 0; i < total; ++i) out[i] = 0.0 + in[i];
    return true;
  }
  if (r > static_cast<std::size_t>(kMaxRank) || (red.back() && n_reduced > 1)) return false;
  with_rank(r, [&](auto rank) {
    constexpr std::size_t N = decltype(rank)::value;
    if (red.front())
      sum_fixed<N, true>(in, total, merged, out);
    else if constexpr (N > 1)
      sum_fixed<N, false>(in, total, merged, out);
  });
  return true;
}

bool permute(const double* in, const Shape& shape, std::span<const std::int64_t> dims, double* out) {
  std::size_t total = 1;
  for (std::int64_t d : shape) total *= static_cast<std::size_t>(d);
  if (total == 0) return true;
  // Drop size-1 dims, then merge output dims that are neighbours, in order, in the input too.
  std::vector<std::size_t> compact(shape.size(), 0);
  Dims sh;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) {
      compact[d] = sh.size();
      sh.push_back(static_cast<std::size_t>(shape[d]));
    }
  Dims order;  // input dims (compact) in output order
  for (std::int64_t d : dims)
    if (shape[static_cast<std::size_t>(d)] != 1) order.push_back(compact[static_cast<std::size_t>(d)]);
  std::vector<std::pair<std::size_t, std::size_t>> runs;  // (first input dim, number of dims), output order
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (!runs.empty() && runs.back().first + runs.back().second == order[i])
      ++runs.back().second;
    else
      runs.push_back({order[i], 1});
  }
  const std::size_t r = runs.size();
  if (r <= 1) {  // the identity permutation, after merging: the same bytes
    std::copy_n(in, total, out);
    return true;
  }
  if (r > static_cast<std::size_t>(kMaxRank)) return false;
  // Merged input dims are numbered by where their run starts in the input.
  std::vector<std::size_t> by_input(r);
  for (std::size_t i = 0; i < r; ++i) by_input[i] = i;
  std::sort(by_input.begin(), by_input.end(),
            [&](std::size_t a, std::size_t b) { return runs[a].first < runs[b].first; });
  Dims mshape(r), perm(r);
  for (std::size_t j = 0; j < r; ++j) {
    const auto& [first, len] = runs[by_input[j]];
    mshape[j] = 1;
    for (std::size_t k = first; k < first + len; ++k) mshape[j] *= sh[k];
    perm[by_input[j]] = j;
  }
  with_rank(r, [&](auto rank) {
    constexpr std::size_t N = decltype(rank)::value;
    permute_fixed<N>(in, total, mshape, perm, out);
  });
  return true;
}

}  // namespace probe::runners::nd
