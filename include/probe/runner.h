// API runners: what probe executes for a dumped API call. A RunnerRegistry maps dumped API names
// ("Functional.softmax", "Tensor.__add__", "Aten.add.Tensor", "Mint.add") to a bench (float64
// reference) runner and, optionally, a device runner (an operator library under test, or the
// built-in low-precision emulation). Arguments are bound to a PyTorch-style schema string.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probe/api_name.h"  // ApiName, parse_api_name: the registry keys by ApiName::key()
#include "probe/dtype.h"
#include "probe/dump.h"
#include "probe/export.h"
#include "probe/value.h"

namespace probe {

// probe::Framework (dump.h): API names mean different functions in each framework. The registry has a
// PyTorch and a MindSpore table; MindTorch and Unknown dumps use the PyTorch table.

/// One dumped call: positional args and keyword args in dump order.
struct PROBE_API ApiCall {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
};

/// A runner's parsed signature, e.g. "softmax(Tensor input, int dim, ScalarType? dtype=None) -> Tensor".
struct PROBE_API Schema {
  /// Parameter type as written: kind, `?` (optional), `[]`/`[N]` (list) and `...` (varargs).
  enum class Kind { Tensor, Scalar, Int, Float, Bool, Str, DType, Any };
  struct Param {
    std::string name;
    Kind kind = Kind::Any;
    bool optional = false, is_list = false, varargs = false, keyword_only = false;
    std::optional<Value> default_value;  ///< nullopt: required
  };
  std::string name;  ///< "softmax", "add.Tensor"
  std::vector<Param> params;
  std::string returns;  ///< text after "->", e.g. "Tensor", "(Tensor, Tensor)"
  std::string text;     ///< the original string
  /// Index of a parameter by name, or -1.
  int index_of(std::string_view param) const noexcept;
};
/// Parses a schema string; throws Error(InvalidArgument) naming the schema on bad syntax.
PROBE_API Schema parse_schema(std::string_view text);

/// Arguments bound to a schema: one Value per parameter (defaults filled in, dtype strings parsed).
class PROBE_API BoundArgs {
 public:
  BoundArgs(std::shared_ptr<const Schema> schema, std::vector<Value> values,
            std::vector<std::string> origins);
  const Schema& schema() const noexcept { return *schema_; }
  std::size_t size() const noexcept { return values_.size(); }
  const Value& at(std::size_t i) const { return values_.at(i); }
  /// Value of a parameter; throws Error(Internal) if the schema has no such parameter.
  const Value& operator[](std::string_view param) const;
  /// Where the caller passed parameter i: "input.0", "input.1" (positional), "kwargs.dim", or "" (default).
  const std::string& origin(std::size_t i) const { return origins_.at(i); }

 private:
  std::shared_ptr<const Schema> schema_;
  std::vector<Value> values_;
  std::vector<std::string> origins_;
};
/// Binds a call to a schema like Python would (positional, keyword-only, varargs, defaults); throws
/// Error(InvalidArgument) for a missing, unexpected or ill-typed argument.
PROBE_API BoundArgs bind(std::shared_ptr<const Schema> schema, const ApiCall& call);

/// What a runner returns: the dumped `output` array (a single tensor is a 1-element list), with the
/// dtype the API produces on the device for every tensor, depth-first. Bench runners return floating
/// tensors as float64 data (integers and bools exact, in their own dtype); device runners return the
/// device dtype itself.
struct PROBE_API ApiResult {
  std::vector<Value> outputs;
  std::vector<DType> device_dtypes;
};

/// A gradient the backward pass produced for one tensor input, named like the dump's tensor files
/// (dump-and-compare §1.3): "input.0", "input.1.2" (positional, nested), "kwargs.weight".
struct PROBE_API InputGradient {
  std::string path;
  Tensor grad;         ///< float64 for a bench runner
  DType device_dtype;  ///< dtype of the input on the device (= dtype of its gradient)
};

/// Bench (float64 reference) or device (the side under test).
enum class RunnerRole { Bench, Device };

/// How probe runs one API. forward is required; backward is empty when the API is not differentiable.
/// A device runner the caller adds may leave backward empty (a forward-only operator library): its
/// backward is then the built-in device runner's backward of the same API (the low-precision emulation),
/// and run_backward(..., RunnerRole::Device) is Error(Unsupported) only when probe has none either.
struct PROBE_API Runner {
  using Forward = std::function<ApiResult(const BoundArgs& args)>;
  /// Vector-Jacobian product: given one gradient per forward output (None for outputs without one),
  /// returns one Value per schema parameter: a Tensor gradient, a list for Tensor[] params, or None.
  using Backward =
      std::function<std::vector<Value>(const BoundArgs& args, const std::vector<Value>& grad_outputs)>;
  /// A forward evaluation that kept what its backward needs: `backward` is the Backward of this very
  /// evaluation (same contract), so forward + backward evaluate the forward once.
  struct Taped {
    ApiResult result;
    std::function<std::vector<Value>(const std::vector<Value>& grad_outputs)> backward;
  };
  /// Forward keeping its tape. `args` outlives the returned Taped (and every call of its backward).
  using TapedForward = std::function<Taped(const BoundArgs& args)>;
  std::string schema;  ///< PyTorch-style schema string (see Schema)
  Forward forward;
  Backward backward;
  /// Optional; without it, run_forward_taped runs forward, then backward evaluates the forward again.
  TapedForward taped_forward;
};

/// A forward pass of one call whose backward can follow without evaluating the forward again
/// (RunnerRegistry::run_forward_taped). Not thread-safe: use from one thread.
class PROBE_API TapedCall {
 public:
  const ApiResult& result() const noexcept { return result_; }
  /// run_backward's result for this call, from the kept forward. Throws like run_backward.
  std::vector<InputGradient> backward(const std::vector<Value>& grad_outputs) const;

 private:
  friend class RunnerRegistry;
  ApiResult result_;
  std::function<std::vector<InputGradient>(const std::vector<Value>&)> backward_;
};

/// Maps (framework, "Prefix.name") to runners. Copyable; lookups are const and thread-safe.
class PROBE_API RunnerRegistry {
 public:
  /// An empty registry.
  RunnerRegistry();
  /// A registry holding probe's built-in float64 bench runners and the emulated device runners.
  static RunnerRegistry with_builtins();

  /// Whether add() may take a key no built-in runner names.
  enum class ApiKey {
    Known,  ///< the key must name an API probe knows (a typo such as "Functional.gleu" is an error)
    New     ///< a genuinely new API (an operator of the caller's library): any "Prefix.name" key
  };
  /// Adds or replaces the runner of `api_key` ("Functional.relu") for `role`. Throws Error(InvalidArgument)
  /// if the schema does not parse, and, with ApiKey::Known, if the key names no API probe knows: no built-in
  /// runner has that key or that API under another prefix ("Torch.gelu" is known through
  /// "Functional.gelu"); the message names the closest known key.
  void add(Framework fw, std::string_view api_key, Runner runner, RunnerRole role = RunnerRole::Bench,
           ApiKey key = ApiKey::Known);
  /// The runner for an API key or a full dump name ("Functional.relu.0.forward"); nullptr when none.
  const Runner* find(Framework fw, std::string_view api, RunnerRole role = RunnerRole::Bench) const;
  /// Sorted registry keys that have a runner for `role`.
  std::vector<std::string> keys(Framework fw, RunnerRole role = RunnerRole::Bench) const;

  /// Binds `call` and runs the forward pass. Throws Error(Unsupported, "... has no bench runner") for an
  /// API without runner, and Error(Unsupported) when the runner cannot evaluate this call (e.g. train-mode
  /// dropout); other errors name the API. A runner added with add() that throws something other than
  /// probe::Error, or returns no outputs, a device_dtypes list that does not match its tensors, or (bench)
  /// a floating tensor that is not float64, raises Error(Runner) naming the API and the runner.
  ApiResult run_forward(Framework fw, std::string_view api, const ApiCall& call,
                        RunnerRole role = RunnerRole::Bench) const;
  /// Runs the backward pass with one gradient per forward output; returns the gradients of every tensor
  /// input that has one (floating inputs reached by the computation), in call order. A caller's device
  /// runner without backward uses the built-in device backward of its API (see Runner).
  std::vector<InputGradient> run_backward(Framework fw, std::string_view api, const ApiCall& call,
                                          const std::vector<Value>& grad_outputs,
                                          RunnerRole role = RunnerRole::Bench) const;
  /// run_forward that keeps the evaluation for one later backward (run_ut with a backward entry: the
  /// forward is evaluated once, not once per direction). result() equals run_forward's; backward()
  /// equals run_backward's. Throws as run_forward, and Error(Unsupported) from backward() when the API
  /// is not differentiable.
  TapedCall run_forward_taped(Framework fw, std::string_view api, const ApiCall& call,
                              RunnerRole role = RunnerRole::Bench) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

/// The README table of a registry: one row per bench API key (PyTorch, then MindSpore) with its schema,
/// forward/backward availability and whether a device runner exists.
PROBE_API std::string runners_markdown(const RunnerRegistry& registry);

}  // namespace probe
