// Internal: heap blocks for tensor-sized buffers (owned tensor storages, the runners' float64 buffers).
#pragma once

#include <cstddef>

namespace probe::detail {

/// The transparent huge page size that large buffers and tensor file mappings ask the kernel for.
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

/// `bytes` bytes, 64-byte aligned; a block of 2 MiB or more is 2 MiB aligned and advised MADV_HUGEPAGE, so
/// that with transparent huge pages in "madvise" mode (Debian's default) it faults in 2 MiB at a time
/// instead of 4 KiB. Such blocks are mapped by this file; freed ones stay mapped for reuse (512 MiB at most,
/// least recently freed unmapped first), so their contents are unspecified like those of any new block.
/// Throws std::bad_alloc. Thread-safe; release with free_tensor_bytes.
void* allocate_tensor_bytes(std::size_t bytes);
void free_tensor_bytes(void* block) noexcept;

}  // namespace probe::detail
