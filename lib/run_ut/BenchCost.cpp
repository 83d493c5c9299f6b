#include "run_ut/BenchCost.h"

#include <algorithm>
#include <array>
#include <vector>

namespace probe::rut {

namespace {

// The call's tensors in argument order (positional first, then keywords), nested lists skipped.
std::vector<const Tensor*> tensors_of(const ApiCall& call) {
  std::vector<const Tensor*> out;
  for (const Value& v : call.args)
    if (v.is_tensor()) out.push_back(&v.tensor());
  for (const auto& [name, v] : call.kwargs)
    if (v.is_tensor()) out.push_back(&v.tensor());
  return out;
}

double dim(const Tensor& t, int from_end) {
  const auto& s = t.shape();
  const auto n = static_cast<int>(s.size());
  return from_end <= n ? static_cast<double>(s[static_cast<std::size_t>(n - from_end)]) : 1.0;
}

double batch(const Tensor& t) {  // product of the dimensions before the last two
  double b = 1;
  for (std::size_t i = 0; i + 2 < t.shape().size(); ++i) b *= static_cast<double>(t.shape()[i]);
  return b;
}

// a @ b with numpy/torch broadcasting: 2 * batch * M * N * K, the batch taken as the larger side's
// (an upper bound when both sides broadcast).
double matmul_flops(const Tensor& a, const Tensor& b) {
  const double k = dim(a, 1);
  const double m = a.shape().size() >= 2 ? dim(a, 2) : 1.0;
  const double n = b.shape().size() >= 2 ? dim(b, 1) : 1.0;
  return 2.0 * std::max(batch(a), batch(b)) * m * n * k;
}

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::optional<double> estimated_bench_flops(std::string_view api, const ApiCall& call) {
  const auto t = tensors_of(call);
  if (one_of(api, {"matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "mv", "dot", "inner"})) {
    if (t.size() < 2) return std::nullopt;
    return api == "__rmatmul__" ? matmul_flops(*t[1], *t[0]) : matmul_flops(*t[0], *t[1]);
  }
  if (one_of(api, {"addmm", "addbmm", "baddbmm", "addmv"})) {  // (input, mat1, mat2)
    if (t.size() < 3) return std::nullopt;
    return matmul_flops(*t[1], *t[2]);
  }
  if (api == "linear") {  // input [..., K], weight [N, K]
    if (t.size() < 2) return std::nullopt;
    return 2.0 * static_cast<double>(t[0]->numel()) * dim(*t[1], 2);
  }
  if (one_of(api,
             {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"})) {
    // input [N, C, *spatial], weight [C_out, C_in/groups, *kernel] (transposed: [C_in, C_out/groups, ...]):
    // each weight element meets each input position once at stride 1, an upper bound for any stride.
    // An unbatched input has no N: [C, *spatial].
    if (t.size() < 2 || t[0]->shape().size() < 2) return std::nullopt;
    const std::size_t channel_axis = t[0]->shape().size() == t[1]->shape().size() ? 1 : 0;
    const auto channels = static_cast<double>(t[0]->shape()[channel_axis]);
    if (channels == 0) return 0.0;
    return 2.0 * static_cast<double>(t[0]->numel()) / channels * static_cast<double>(t[1]->numel());
  }
  if (api == "scaled_dot_product_attention") {  // q [..., L, E], k [..., S, E]: QK^T and PV
    if (t.size() < 3) return std::nullopt;
    return 4.0 * static_cast<double>(t[0]->numel()) * dim(*t[1], 2);
  }
  return std::nullopt;
}

}  // namespace probe::rut
