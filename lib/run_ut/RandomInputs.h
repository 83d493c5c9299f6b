// Internal: tensors generated from a statistics dump's descriptor (precheck §6.5.1), deterministic
// under a seed and independent of thread scheduling.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "probe/tensor.h"

namespace probe::rut {

/// What a descriptor says about the tensor to generate. `low`/`high` are Min/Max, or the
/// *_except_inf_nan values when the dump has them; the origins are always Min/Max.
struct RandomSpec {
  DType dtype = DType::Float32;
  Shape shape;
  std::optional<double> low, high;  ///< nullopt: not a number in the dump
  std::optional<double> low_origin, high_origin;
  std::string min_text = "None", max_text = "None";  ///< for the error message
};

/// A seed for one tensor of one API: mixes the run seed with the API's full name and the
/// tensor's place in the entry, so results do not depend on which thread generates it.
std::uint64_t derive_seed(std::uint64_t run_seed, std::string_view api, std::string_view field);

/// Generates the tensor as msprobe's gen_random_tensor does (bounds, NaN/Inf handling, first/last
/// element pinned to Min/Max). Throws Error(InvalidArgument) with msprobe's message when Min/Max
/// are not numbers, Unsupported for complex dtypes.
Tensor random_tensor(const RandomSpec& spec, std::uint64_t seed);

}  // namespace probe::rut
