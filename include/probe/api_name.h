// A dumped API name and its parts, the one parser every component uses (precheck §6.3).
// PyTorch: `Functional.conv2d.3.forward`, `Tensor.__add__.0`, `Torch.linalg.vector_norm.1.backward`,
// `Aten.add.Tensor.0`, `NPU.npu_rms_norm.2`, `Distributed.all_reduce.0.forward`; MindSpore:
// `Mint.add.0.forward`, `MintFunctional.relu.1`, `Primitive.MatMul.0`, `Jit.f.0.forward`; and the
// registry's keys without counter or direction (`Functional.softmax`, `Aten.add.Tensor`).
// Module/Cell keys (`Module.conv1.Conv2d.forward.0`) are layers, not API names: the dump model sorts
// them out before anything parses an API name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "probe/export.h"

namespace probe {

/// Which pass of a call a dumped name belongs to; None for names without the suffix.
enum class ApiDirection { None, Forward, Backward };

/// An API name split into its parts: "Torch.linalg.vector_norm.12.backward" -> prefix "Torch", name
/// "linalg.vector_norm", call_index 12, direction Backward. A plain value type (thread-safe to copy).
struct PROBE_API ApiName {
  std::string prefix;                      ///< the API family: "Functional", "Tensor", "Aten", "Mint", ...
  std::string name;                        ///< between prefix and counter: "conv2d", "add.Tensor"
  std::optional<std::int64_t> call_index;  ///< the dump's call counter; nullopt for registry keys
  ApiDirection direction = ApiDirection::None;

  /// "Prefix.name", the runner registry's key: "Torch.linalg.vector_norm".
  std::string key() const { return prefix + "." + name; }
  /// "Prefix.name.counter", the API's name in run_ut's rows ("Torch.linalg.vector_norm.12"); key() when
  /// the name has no counter.
  std::string counted_name() const;
  /// The whole name back: counted_name() plus ".forward"/".backward" when it has a direction.
  std::string dump_key() const;
  /// The name's first segment, i.e. the operator without its aten overload: "add" for "add.Tensor".
  std::string_view op() const noexcept { return std::string_view(name).substr(0, name.find('.')); }
  /// Number of '.'-separated segments of `name` (1 for "relu", 2 for "add.Tensor").
  std::size_t name_segments() const noexcept;
  /// run_ut's PyTorch form (precheck §6.3): a counted name of 3 or 4 segments, i.e. a call counter and a
  /// name of one segment or an operator with one overload/sub-module segment.
  bool run_ut_form() const noexcept { return call_index.has_value() && name_segments() <= 2; }
};

/// Splits "Prefix.name[.counter][.forward|.backward]". The counter is the last segment before the
/// direction when it is all digits and at least prefix and one name segment precede it. nullopt for a
/// name without prefix, with an empty segment ("Functional..0") or with a counter that does not fit
/// in int64. Pure function, thread-safe.
PROBE_API std::optional<ApiName> parse_api_name(std::string_view full_name);

/// The direction's spelling in dump keys: "forward", "backward"; "" for None.
PROBE_API std::string_view to_string(ApiDirection direction) noexcept;

/// Whether `segment` is an API family dumps name as the first segment: PyTorch "Functional", "Tensor",
/// "Torch", "Aten", "NPU", "Distributed", "VF"; MindSpore "Mint", "MintFunctional", "Primitive", "Jit".
PROBE_API bool is_api_prefix(std::string_view segment) noexcept;

/// The name msprobe's API lists use (precheck §6.3), from any spelling of an API: "Torch.matmul",
/// "Torch.matmul.0.forward" and "matmul" give "matmul"; "Aten.add.Tensor" gives "add.Tensor";
/// "Torch.linalg.vector_norm.0" gives "linalg.vector_norm". A name whose first segment is no API family
/// (is_api_prefix) is already a list name and comes back unchanged.
PROBE_API std::string api_list_name(std::string_view api);

/// The name of a details row (§3.4): "<counted api>.<direction>.output.<index>", e.g.
/// "Functional.conv2d.3.forward.output.0". `direction` must not be None.
PROBE_API std::string output_row_name(std::string_view counted_api, ApiDirection direction,
                                      std::size_t index);
/// The part of output_row_name() before the index: "Functional.conv2d.3.forward.output.".
PROBE_API std::string output_row_prefix(std::string_view counted_api, ApiDirection direction);

}  // namespace probe
