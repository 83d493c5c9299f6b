// Internal: call a generic lambda with a value of the C++ element type of a DType.
#pragma once

#include <complex>
#include <cstdint>

#include "probe/dtype.h"
#include "probe/error.h"
#include "probe/scalar_types.h"
#include "support/Bfloat16.h"

namespace probe::detail {

template <class T>
struct TypeTag {
  using type = T;
};

/// visit_dtype(t, [](auto tag) { using T = typename decltype(tag)::type; ... });
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool:
      return f(TypeTag<bool>{});
    case DType::UInt8:
      return f(TypeTag<std::uint8_t>{});
    case DType::Int8:
      return f(TypeTag<std::int8_t>{});
    case DType::Int16:
      return f(TypeTag<std::int16_t>{});
    case DType::Int32:
      return f(TypeTag<std::int32_t>{});
    case DType::Int64:
      return f(TypeTag<std::int64_t>{});
    case DType::UInt16:
      return f(TypeTag<std::uint16_t>{});
    case DType::UInt32:
      return f(TypeTag<std::uint32_t>{});
    case DType::UInt64:
      return f(TypeTag<std::uint64_t>{});
    case DType::Float16:
      return f(TypeTag<float16_t>{});
    case DType::BFloat16:
      return f(TypeTag<bfloat16_t>{});
    case DType::Float32:
      return f(TypeTag<float>{});
    case DType::Float64:
      return f(TypeTag<double>{});
    case DType::Complex64:
      return f(TypeTag<std::complex<float>>{});
    case DType::Complex128:
      return f(TypeTag<std::complex<double>>{});
  }
  throw Error(ErrorKind::Internal, "invalid DType value");
}

/// Element value as double (complex: real part).
template <class T>
inline double as_double(T v) noexcept {
  // bfloat16 inline rather than through to_double(), an exported call per element (5.7% of run_ut on a
  // bfloat16 LLaMA dump, most of it in the runners' widening copy).
  if constexpr (std::is_same_v<T, bfloat16_t>)
    return static_cast<double>(load_bf16(v.bits));
  else if constexpr (std::is_same_v<T, float16_t>)
    return to_double(v);
  else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return static_cast<double>(v.real());
  else
    return static_cast<double>(v);
}

}  // namespace probe::detail
