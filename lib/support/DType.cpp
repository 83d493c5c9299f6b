#include "probe/dtype.h"

#include <array>

namespace probe {
namespace {

struct DTypeInfo {
  DType type;
  std::size_t size;
  std::string_view name, torch, mindspore, numpy;
};

// Indexed by the enum's value.
constexpr std::array<DTypeInfo, kDTypeCount> kInfo{{
    {DType::Bool, 1, "bool", "torch.bool", "Bool", "bool"},
    {DType::UInt8, 1, "uint8", "torch.uint8", "UInt8", "uint8"},
    {DType::Int8, 1, "int8", "torch.int8", "Int8", "int8"},
    {DType::Int16, 2, "int16", "torch.int16", "Int16", "int16"},
    {DType::Int32, 4, "int32", "torch.int32", "Int32", "int32"},
    {DType::Int64, 8, "int64", "torch.int64", "Int64", "int64"},
    {DType::UInt16, 2, "uint16", "torch.uint16", "UInt16", "uint16"},
    {DType::UInt32, 4, "uint32", "torch.uint32", "UInt32", "uint32"},
    {DType::UInt64, 8, "uint64", "torch.uint64", "UInt64", "uint64"},
    {DType::Float16, 2, "float16", "torch.float16", "Float16", "float16"},
    {DType::BFloat16, 2, "bfloat16", "torch.bfloat16", "BFloat16", "bfloat16"},
    {DType::Float32, 4, "float32", "torch.float32", "Float32", "float32"},
    {DType::Float64, 8, "float64", "torch.float64", "Float64", "float64"},
    {DType::Complex64, 8, "complex64", "torch.complex64", "Complex64", "complex64"},
    {DType::Complex128, 16, "complex128", "torch.complex128", "Complex128", "complex128"},
}};

const DTypeInfo& info(DType t) noexcept { return kInfo[static_cast<int>(t)]; }

}  // namespace

std::size_t itemsize(DType t) noexcept { return info(t).size; }

bool is_floating(DType t) noexcept {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
bool is_complex(DType t) noexcept { return t == DType::Complex64 || t == DType::Complex128; }
bool is_integral(DType t) noexcept { return t != DType::Bool && !is_floating(t) && !is_complex(t); }
bool is_signed(DType t) noexcept {
  return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64 || is_floating(t) ||
         is_complex(t);
}

std::string_view name(DType t) noexcept { return info(t).name; }
std::string_view torch_name(DType t) noexcept { return info(t).torch; }
std::string_view mindspore_name(DType t) noexcept { return info(t).mindspore; }
std::string_view numpy_name(DType t) noexcept { return info(t).numpy; }

std::optional<DType> parse_dtype(std::string_view text) noexcept {
  for (const auto& i : kInfo)
    if (text == i.name || text == i.torch || text == i.mindspore) return i.type;
  struct Alias {
    std::string_view text;
    DType type;
  };
  static constexpr Alias kAliases[] = {
      {"torch.half", DType::Float16},
      {"torch.float", DType::Float32},
      {"torch.double", DType::Float64},
      {"torch.int", DType::Int32},
      {"torch.long", DType::Int64},
      {"torch.short", DType::Int16},
      {"torch.cfloat", DType::Complex64},
      {"torch.cdouble", DType::Complex128},
      {"bool_", DType::Bool},
      {"half", DType::Float16},
      {"float", DType::Float32},
      {"double", DType::Float64},
      {"mindspore.float16", DType::Float16},
      {"mindspore.float32", DType::Float32},
      {"mindspore.bfloat16", DType::BFloat16},
      {"mindspore.float64", DType::Float64},
      {"mindspore.int32", DType::Int32},
      {"mindspore.int64", DType::Int64},
      {"mindspore.bool_", DType::Bool},
  };
  for (const auto& a : kAliases)
    if (text == a.text) return a.type;
  return std::nullopt;
}

}  // namespace probe
