// The operator library with the bug, shared by the LibTorch examples (libtorch_training, online_precheck):
// a GELU registered with TORCH_LIBRARY as probe_example::gelu whose CPU kernel forgets the Phi(x) factor for
// negative inputs (x/2 instead of x*Phi(x)), and LibraryGelu, its autograd wrapper. Include it in one
// translation unit per program: it registers the library.
#pragma once

#include <torch/torch.h>

#include <cmath>
#include <cstdint>

namespace probe_example {

inline at::Tensor buggy_gelu_cpu(const at::Tensor& x) {
  at::Tensor in = x.contiguous();
  at::Tensor out = at::empty_like(in);
  const float* src = in.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  for (std::int64_t i = 0; i < in.numel(); ++i) {
    const float v = src[i];
    dst[i] = v >= 0 ? 0.5f * v * (1.0f + std::erf(v * float(M_SQRT1_2))) : 0.5f * v;  // bug: Phi(x) -> 1/2
  }
  return out;
}

TORCH_LIBRARY(probe_example, m) { m.def("gelu(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(probe_example, CPU, m) { m.impl("gelu", buggy_gelu_cpu); }

// Autograd for the library op: its derivative (written with aten ops, and correct) is Phi(x) + x phi(x).
struct LibraryGelu : torch::autograd::Function<LibraryGelu> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("probe_example::gelu", "")
                               .typed<at::Tensor(const at::Tensor&)>();
    ctx->save_for_backward({x});
    return op.call(x);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    const torch::Tensor x = ctx->get_saved_variables()[0];
    const torch::Tensor cdf = 0.5 * (1 + torch::erf(x * M_SQRT1_2));
    const torch::Tensor pdf = torch::exp(-0.5 * x * x) * (0.5 * M_2_SQRTPI * M_SQRT1_2);
    return {grad[0] * (cdf + x * pdf)};
  }
};

}  // namespace probe_example
