// Internal: how built-in runners are written. A runner is a function from a Ctx (the bound arguments,
// converted to autograd Vars on request) to its outputs; def() turns it into a public probe::Runner
// whose forward evaluates without a graph and whose backward re-evaluates with one and back-propagates.
// See DEVELOPERS.md "Writing a runner".
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/runner.h"
#include "runners/Autograd.h"

namespace probe::runners {

/// One top-level output (the dump's output[i]): a tensor, a list of tensors, or a plain value.
struct Out {
  Out(Var v) : var(std::move(v)) {}
  Out(std::vector<Var> vs) : vars(std::move(vs)), is_list(true) {}
  Out(Value v) : value(std::make_shared<Value>(std::move(v))), is_value(true) {}
  Var var;
  std::vector<Var> vars;
  std::shared_ptr<Value> value;  // (a pointer: keeps Out cheap and GCC's uninitialised-variant warnings away)
  bool is_list = false, is_value = false;
};
using Outs = std::vector<Out>;

/// The arguments of one evaluation, with typed accessors that throw probe::Error naming the parameter.
class Ctx {
 public:
  explicit Ctx(const BoundArgs& args);
  const BoundArgs& args;

  const Value& operator[](std::string_view p) const { return args[p]; }
  bool none(std::string_view p) const { return args[p].is_none(); }
  /// A Tensor parameter as a Var (created once per parameter; floating leaves track gradients in backward).
  /// A Python number becomes a wrapped 0-d value (type promotion treats it as PyTorch does).
  Var t(std::string_view p);
  std::optional<Var> opt_t(std::string_view p);
  /// A Tensor[] parameter.
  std::vector<Var> ts(std::string_view p);
  std::int64_t i(std::string_view p) const;
  std::optional<std::int64_t> opt_i(std::string_view p) const;
  double f(std::string_view p) const;
  bool b(std::string_view p) const;
  std::string s(std::string_view p) const;
  std::vector<std::int64_t> ints(std::string_view p) const;  ///< int[] (a single int is a 1-list)
  std::optional<DType> dtype(std::string_view p) const;
  /// A value (tensor or number) as a Var, for arguments declared Any/Scalar.
  Var var_of(const Value& v);

  /// Gradients of every parameter after backward(): Tensor / list / None per schema parameter.
  std::vector<Value> grads() const;

 private:
  int index(std::string_view p) const;
  std::vector<std::optional<Var>> leaf_;
  std::vector<std::optional<std::vector<Var>>> list_leaf_;
};

/// Throws Error(InvalidArgument, message): a call torch itself rejects (the runners' one spelling of it).
[[noreturn]] void invalid(const std::string& message);

/// A tuple result: one dump output per tensor.
Outs spread(std::vector<Var> xs);

using KitFn = std::function<Outs(Ctx&)>;

/// Registers `fn` under every API name in `apis` for bench and emulated device roles. Names are
/// "Prefix.name" for PyTorch or "ms:Prefix.name" for MindSpore. Names of in-place variants ("Tensor.add_",
/// "Tensor.__iadd__") cast the result to the dtype of the first argument; reflected dunders
/// ("Tensor.__radd__") bind the first two positional arguments swapped. `differentiable=false` gives
/// no backward.
void def(RunnerRegistry& reg, const std::vector<std::string>& apis, std::string_view schema, KitFn fn,
         bool differentiable = true);

/// Which API families a function name is registered under (see names()).
enum NameSet : unsigned {
  kTorch = 1u << 0,           ///< Torch.fn
  kTensor = 1u << 1,          ///< Tensor.fn
  kInplace = 1u << 2,         ///< Tensor.fn_
  kFunctional = 1u << 3,      ///< Functional.fn (torch.nn.functional)
  kAten = 1u << 4,            ///< Aten.fn.default
  kMint = 1u << 5,            ///< ms:Mint.fn
  kMintFunctional = 1u << 6,  ///< ms:MintFunctional.fn
  kMsTensor = 1u << 7,        ///< ms:Tensor.fn
  kMsOps = 1u << 8,           ///< ms:Functional.fn (mindspore.ops)
};
/// API names for `fn` in the given families, plus `extra` names verbatim.
std::vector<std::string> names(std::string_view fn, unsigned sets,
                               std::initializer_list<std::string_view> extra = {});

// Registration functions of the runner files; called from the one explicit list in Builtins.cpp.
void register_elementwise_runners(RunnerRegistry& reg);
void register_reduction_runners(RunnerRegistry& reg);
void register_view_runners(RunnerRegistry& reg);      // Shape.cpp (views and reshapes)
void register_indexing_runners(RunnerRegistry& reg);  // Indexing.cpp
void register_joining_runners(RunnerRegistry& reg);   // Joining.cpp
void register_creation_runners(RunnerRegistry& reg);  // Creation.cpp
void register_linalg_runners(RunnerRegistry& reg);
void register_activation_runners(RunnerRegistry& reg);
// ---- neural-network runners (Conv.cpp, Pooling.cpp, Norms.cpp, Losses.cpp, Attention.cpp) ----
void register_conv_runners(RunnerRegistry& reg);
void register_pooling_runners(RunnerRegistry& reg);
void register_norm_runners(RunnerRegistry& reg);
void register_loss_runners(RunnerRegistry& reg);
void register_attention_runners(RunnerRegistry& reg);
// ---- end of neural-network runners ----

}  // namespace probe::runners
