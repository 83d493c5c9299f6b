// The one explicit list of built-in runners (no self-registering static initialisers): a runner file
// exposes register_<group>_runners(RunnerRegistry&) and is called from here.
#include "runners/Builtins.h"

#include "probe/error.h"
#include "runners/RunnerKit.h"

namespace probe::runners {

namespace {
// torch.<fn>_ functions (torch.exp_(x), ...) that msprobe hooks: the same in-place runner as Tensor.<fn>_.
void register_torch_inplace_aliases(RunnerRegistry& reg) {
  for (const char* fn :
       {"abs_",       "acos_",  "acosh_",   "arccos_",     "arccosh_", "arcsin_",   "arcsinh_", "arctan_",
        "arctanh_",   "asin_",  "asinh_",   "atan_",       "atanh_",   "ceil_",     "clamp_",   "clamp_max_",
        "clamp_min_", "clip_",  "cos_",     "cosh_",       "deg2rad_", "erf_",      "erfc_",    "exp2_",
        "exp_",       "expm1_", "fix_",     "floor_",      "frac_",    "ldexp_",    "log10_",   "log1p_",
        "log2_",      "log_",   "logit_",   "nan_to_num_", "neg_",     "negative_", "rad2deg_", "reciprocal_",
        "round_",     "rsqrt_", "sigmoid_", "sin_",        "sinc_",    "sinh_",     "sqrt_",    "square_",
        "tan_",       "tanh_",  "trunc_",   "xlogy_"}) {
    const std::string tensor_name = std::string("Tensor.") + fn, torch_name = std::string("Torch.") + fn;
    for (RunnerRole role : {RunnerRole::Bench, RunnerRole::Device}) {
      const Runner* r = reg.find(Framework::PyTorch, tensor_name, role);
      if (!r) throw Error(ErrorKind::Internal, "no runner " + tensor_name + " to alias as " + torch_name);
      reg.add(Framework::PyTorch, torch_name, *r, role);
    }
  }
}
}  // namespace

void register_builtin_runners(RunnerRegistry& reg) {
  register_elementwise_runners(reg);
  register_activation_runners(reg);
  register_reduction_runners(reg);
  register_view_runners(reg);
  register_indexing_runners(reg);
  register_joining_runners(reg);
  register_creation_runners(reg);
  register_linalg_runners(reg);
  // ---- neural-network runners ----
  register_conv_runners(reg);
  register_pooling_runners(reg);
  register_norm_runners(reg);
  register_loss_runners(reg);
  register_attention_runners(reg);
  // ---- end of neural-network runners ----
  register_torch_inplace_aliases(reg);
}

}  // namespace probe::runners
