// probe::Tensor: a dense, row-major, contiguous n-d array of one DType over a shared Storage.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "probe/dtype.h"
#include "probe/error.h"
#include "probe/export.h"
#include "probe/scalar_types.h"
#include "probe/storage.h"

namespace probe {

/// Dimensions of a tensor; empty for a 0-d (scalar) tensor.
using Shape = std::vector<std::int64_t>;

/// Number of elements of a shape (1 for 0-d). Throws Format on negative or overflowing dims.
PROBE_API std::int64_t numel(const Shape& shape);
/// Python tuple spelling of a shape: "(2, 3)", "(12,)", "()".
PROBE_API std::string shape_to_string(const Shape& shape);

/// A dense row-major tensor. Copies are cheap and share storage (like torch.Tensor).
class PROBE_API Tensor {
 public:
  /// An empty float32 tensor of shape (0,).
  Tensor();
  /// Zero-filled owned tensor.
  static Tensor zeros(DType dtype, Shape shape);
  /// A view of `storage` starting at `byte_offset`; throws Format if the storage is too small.
  static Tensor from_storage(DType dtype, Shape shape, std::shared_ptr<Storage> storage,
                             std::size_t byte_offset = 0);
  /// Owned tensor holding a copy of `values`; shape defaults to 1-d.
  template <class T>
  static Tensor from_values(std::span<const T> values, Shape shape);
  template <class T>
  static Tensor from_values(std::initializer_list<T> values, Shape shape) {
    return from_values<T>(std::span<const T>(values.begin(), values.size()), std::move(shape));
  }
  template <class T>
  static Tensor from_values(const std::vector<T>& values, Shape shape) {
    return from_values<T>(std::span<const T>(values.data(), values.size()), std::move(shape));
  }
  /// 0-d tensor holding one value.
  template <class T>
  static Tensor scalar(T value) {
    return from_values<T>({value}, Shape{});
  }

  DType dtype() const noexcept { return dtype_; }
  const Shape& shape() const noexcept { return shape_; }
  int ndim() const noexcept { return static_cast<int>(shape_.size()); }
  std::int64_t numel() const noexcept { return numel_; }
  std::size_t nbytes() const noexcept { return static_cast<std::size_t>(numel_) * itemsize(dtype_); }
  /// True when the data lives in a file mapping.
  bool is_mapped() const noexcept { return storage_ && storage_->is_mapped(); }
  const std::shared_ptr<Storage>& storage() const noexcept { return storage_; }
  std::size_t byte_offset() const noexcept { return offset_; }

  const std::byte* bytes() const noexcept { return storage_->data() + offset_; }
  std::byte* mutable_bytes() noexcept { return storage_->data() + offset_; }
  /// Typed element pointer; throws Internal if T does not match dtype().
  template <class T>
  const T* data() const {
    check_type(dtype_of_v<T>);
    return reinterpret_cast<const T*>(bytes());
  }
  template <class T>
  T* mutable_data() {
    check_type(dtype_of_v<T>);
    return reinterpret_cast<T*>(mutable_bytes());
  }

  /// Element i (flat, row-major) converted to double (complex: real part; bool: 0/1).
  double at(std::int64_t i) const;
  /// Converted copy (round-to-nearest-even for narrowing float casts, C++ truncation for float->int,
  /// like torch's .to()). Returns *this when the dtype already matches.
  Tensor to(DType dtype) const;
  /// Deep copy into fresh owned storage.
  Tensor clone() const;
  /// Same data with a new shape of equal element count (shares storage).
  Tensor reshape(Shape shape) const;
  /// All elements as doubles (complex: real part).
  std::vector<double> to_doubles() const;

 private:
  Tensor(DType dtype, Shape shape, std::shared_ptr<Storage> storage, std::size_t offset);
  // Owned storage the caller overwrites in full: no zero-fill (a memset of every byte).
  static Tensor for_overwrite(DType dtype, Shape shape);
  void check_type(DType requested) const;

  DType dtype_ = DType::Float32;
  Shape shape_;
  std::int64_t numel_ = 0;
  std::shared_ptr<Storage> storage_;
  std::size_t offset_ = 0;
};

/// Printer for GoogleTest (found by argument-dependent lookup), so a failed expectation or matcher shows a
/// tensor as `float16 (2, 3) [0.5, 1, -2, ...]`: dtype, shape and the first 8 elements in flat order.
PROBE_API void PrintTo(const Tensor& t, std::ostream* os);

template <class T>
Tensor Tensor::from_values(std::span<const T> values, Shape shape) {
  Tensor t = for_overwrite(dtype_of_v<T>, std::move(shape));
  if (static_cast<std::size_t>(t.numel()) != values.size())
    throw Error(ErrorKind::InvalidArgument, "value count does not match shape " + shape_to_string(t.shape()));
  T* out = t.mutable_data<T>();
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace probe
