// The one explicit list of built-in runners (no self-registering static initialisers): a runner file
// exposes register_<group>_runners(RunnerRegistry&) and is called from here.
#include "runners/Builtins.h"

#include "runners/RunnerKit.h"

namespace probe::runners {

void register_builtin_runners(RunnerRegistry& reg) {
  register_elementwise_runners(reg);
  register_activation_runners(reg);
  register_reduction_runners(reg);
  register_shape_runners(reg);
  register_linalg_runners(reg);
  // ---- neural-network runners ----
  register_conv_runners(reg);
  register_pooling_runners(reg);
  register_norm_runners(reg);
  register_loss_runners(reg);
  register_attention_runners(reg);
  // ---- end of neural-network runners ----
}

}  // namespace probe::runners
