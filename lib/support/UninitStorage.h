// Internal: owned buffers and tensors whose contents start unspecified, for producers that write every
// byte before anything reads it. Zero-filling a large fresh buffer first costs a page fault per 4 KiB on
// top of the writes.
#pragma once

#include <cstddef>
#include <memory>

#include "probe/storage.h"
#include "probe/tensor.h"

namespace probe::detail {

/// A 64-byte aligned heap buffer of `size` bytes with unspecified contents. Thread-safe.
std::shared_ptr<Storage> make_uninitialized_storage(std::size_t size);

/// An owned tensor with unspecified contents; throws Format like Tensor::zeros for oversized shapes.
Tensor uninitialized_tensor(DType dtype, Shape shape);

}  // namespace probe::detail
