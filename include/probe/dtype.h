// Element types of tensors, and their names in PyTorch, numpy and MindSpore.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "probe/export.h"

namespace probe {

/// Element type of a probe::Tensor.
enum class DType {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
  Complex128,
};

/// Number of dtypes, for tables indexed by DType.
inline constexpr int kDTypeCount = 15;

/// Bytes per element.
PROBE_API std::size_t itemsize(DType t) noexcept;
PROBE_API bool is_floating(DType t) noexcept;  ///< float16/bfloat16/float32/float64
PROBE_API bool is_complex(DType t) noexcept;
PROBE_API bool is_integral(DType t) noexcept;  ///< signed or unsigned integer, not bool
PROBE_API bool is_signed(DType t) noexcept;

/// Canonical short name: "float32", "bfloat16", "bool", ...
PROBE_API std::string_view name(DType t) noexcept;
/// PyTorch spelling: "torch.float32"; unsigned types beyond uint8 as "torch.uint16" etc.
PROBE_API std::string_view torch_name(DType t) noexcept;
/// MindSpore spelling: "Float32", "BFloat16", "Bool", ...
PROBE_API std::string_view mindspore_name(DType t) noexcept;
/// numpy dtype name as str(np.dtype) prints it: "float32", "bool", ... (bfloat16 has none: "bfloat16").
PROBE_API std::string_view numpy_name(DType t) noexcept;

/// Parses any of the spellings above ("torch.float16", "Float16", "float16", "torch.half", "bool_").
PROBE_API std::optional<DType> parse_dtype(std::string_view text) noexcept;

}  // namespace probe
