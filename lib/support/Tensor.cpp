#include "probe/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>

#include "probe/number_format.h"
#include "support/Dispatch.h"
#include "support/UninitStorage.h"

namespace probe {

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw Error(ErrorKind::Format, "negative dimension in shape " + shape_to_string(shape));
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
      throw Error(ErrorKind::Format, "shape " + shape_to_string(shape) + " has too many elements");
    n *= d;
  }
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  s += ")";
  return s;
}

void PrintTo(const Tensor& t, std::ostream* os) {
  constexpr std::int64_t kShown = 8;
  std::string s = std::string(name(t.dtype())) + " " + shape_to_string(t.shape()) + " [";
  for (std::int64_t i = 0; i < t.numel() && i < kShown; ++i) {
    const double v = t.at(i);
    s += (i ? ", " : "") + (is_floating(t.dtype()) || !std::isfinite(v)
                                ? python_repr(v)
                                : std::to_string(static_cast<long long>(v)));
  }
  *os << s << (t.numel() > kShown ? ", ...]" : "]");
}

Tensor::Tensor() : Tensor(DType::Float32, Shape{0}, make_owned_storage(0), 0) {}

Tensor::Tensor(DType dtype, Shape shape, std::shared_ptr<Storage> storage, std::size_t offset)
    : dtype_(dtype),
      shape_(std::move(shape)),
      numel_(probe::numel(shape_)),
      storage_(std::move(storage)),
      offset_(offset) {}

namespace {
std::size_t checked_nbytes(DType dtype, const Shape& shape) {
  std::int64_t n = probe::numel(shape);
  std::size_t size = itemsize(dtype);
  if (n > 0 && static_cast<std::uint64_t>(n) > std::numeric_limits<std::size_t>::max() / size)
    throw Error(ErrorKind::Format, "tensor of shape " + shape_to_string(shape) + " is too large");
  return static_cast<std::size_t>(n) * size;
}
}  // namespace

Tensor Tensor::zeros(DType dtype, Shape shape) {
  const std::size_t bytes = checked_nbytes(dtype, shape);
  return Tensor(dtype, std::move(shape), make_owned_storage(bytes), 0);
}

Tensor detail::uninitialized_tensor(DType dtype, Shape shape) {
  const std::size_t bytes = checked_nbytes(dtype, shape);
  return Tensor::from_storage(dtype, std::move(shape), make_uninitialized_storage(bytes));
}

Tensor Tensor::for_overwrite(DType dtype, Shape shape) {
  return detail::uninitialized_tensor(dtype, std::move(shape));
}

Tensor Tensor::from_storage(DType dtype, Shape shape, std::shared_ptr<Storage> storage,
                            std::size_t byte_offset) {
  std::int64_t n = probe::numel(shape);
  std::size_t avail = storage->size() >= byte_offset ? storage->size() - byte_offset : 0;
  if (static_cast<std::uint64_t>(n) > avail / itemsize(dtype) || byte_offset > storage->size())
    throw Error(ErrorKind::Format, "storage of " + std::to_string(storage->size()) +
                                       " bytes is too small for a " + std::string(name(dtype)) +
                                       " tensor of shape " + shape_to_string(shape) + " at offset " +
                                       std::to_string(byte_offset));
  Tensor view(dtype, std::move(shape), std::move(storage), byte_offset);
  // Typed access needs natural alignment; a file may place data anywhere, so copy when it does.
  std::size_t align = std::min<std::size_t>(itemsize(dtype), alignof(std::max_align_t));
  if (reinterpret_cast<std::uintptr_t>(view.bytes()) % align != 0) return view.clone();
  return view;
}

void Tensor::check_type(DType requested) const {
  if (requested != dtype_)
    throw Error(ErrorKind::Internal, "tensor of dtype " + std::string(name(dtype_)) + " accessed as " +
                                         std::string(name(requested)));
}

double Tensor::at(std::int64_t i) const {
  if (i < 0 || i >= numel_) throw Error(ErrorKind::InvalidArgument, "element index out of range");
  return detail::visit_dtype(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    std::memcpy(&v, bytes() + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    return detail::as_double(v);
  });
}

namespace {

template <class Out>
constexpr bool kIsComplex =
    std::is_same_v<Out, std::complex<float>> || std::is_same_v<Out, std::complex<double>>;

// Converts one element. Float-to-integer casts truncate like C++/PyTorch; values that C++
// would leave undefined (NaN, out of range) saturate, NaN becomes 0.
template <class Out, class In>
Out convert(In v) {
  if constexpr (std::is_same_v<Out, In>) {
    return v;
  } else if constexpr (kIsComplex<Out>) {
    using R = typename Out::value_type;
    if constexpr (kIsComplex<In>)
      return Out(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    else
      return Out(static_cast<R>(detail::as_double(v)), R(0));
  } else {
    double d = detail::as_double(v);
    if constexpr (std::is_same_v<Out, bool>) {
      if constexpr (kIsComplex<In>)
        return v.real() != 0 || v.imag() != 0;
      else
        return d != 0;
    } else if constexpr (std::is_same_v<Out, float16_t>) {
      if constexpr (std::is_same_v<In, float>)
        return to_float16(v);
      else
        return to_float16(d);
    } else if constexpr (std::is_same_v<Out, bfloat16_t>) {
      if constexpr (std::is_same_v<In, float>)
        return to_bfloat16(v);
      else
        return to_bfloat16(d);
    } else if constexpr (std::is_floating_point_v<Out>) {
      if constexpr (std::is_integral_v<In>)
        return static_cast<Out>(v);
      else
        return static_cast<Out>(d);
    } else {
      if constexpr (std::is_integral_v<In>) {
        return static_cast<Out>(v);  // modular, as PyTorch integer casts
      } else {
        if (std::isnan(d)) return Out(0);
        constexpr double lo = static_cast<double>(std::numeric_limits<Out>::lowest());
        constexpr double hi = static_cast<double>(std::numeric_limits<Out>::max());
        if (d <= lo) return std::numeric_limits<Out>::lowest();
        if (d >= hi) return std::numeric_limits<Out>::max();
        return static_cast<Out>(d);
      }
    }
  }
}

}  // namespace

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return *this;
  Tensor out = detail::uninitialized_tensor(dtype, shape_);
  detail::visit_dtype(dtype_, [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    detail::visit_dtype(dtype, [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      const In* src = reinterpret_cast<const In*>(bytes());
      Out* dst = reinterpret_cast<Out*>(out.mutable_bytes());
      for (std::int64_t i = 0; i < numel_; ++i) dst[i] = convert<Out, In>(src[i]);
    });
  });
  return out;
}

Tensor Tensor::clone() const {
  Tensor out = detail::uninitialized_tensor(dtype_, shape_);
  if (nbytes()) std::memcpy(out.mutable_bytes(), bytes(), nbytes());
  return out;
}

Tensor Tensor::reshape(Shape shape) const {
  if (probe::numel(shape) != numel_)
    throw Error(ErrorKind::InvalidArgument,
                "cannot reshape " + shape_to_string(shape_) + " to " + shape_to_string(shape));
  return Tensor(dtype_, std::move(shape), storage_, offset_);
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<double> out(static_cast<std::size_t>(numel_));
  detail::visit_dtype(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = reinterpret_cast<const T*>(bytes());
    for (std::int64_t i = 0; i < numel_; ++i) out[static_cast<std::size_t>(i)] = detail::as_double(src[i]);
  });
  return out;
}

}  // namespace probe
