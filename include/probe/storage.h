// Byte buffers behind tensors: owned heap memory, or a read-only-on-disk file mapping.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "probe/export.h"

namespace probe {

/// A contiguous byte buffer shared by tensors (several tensors may view one storage).
class PROBE_API Storage {
 public:
  virtual ~Storage() = default;
  virtual std::byte* data() noexcept = 0;
  virtual std::size_t size() const noexcept = 0;
  const std::byte* data() const noexcept { return const_cast<Storage*>(this)->data(); }
  /// True when the bytes come from a file mapping rather than the heap.
  virtual bool is_mapped() const noexcept { return false; }
};

/// A zero-initialised, 64-byte aligned heap buffer of `size` bytes.
PROBE_API std::shared_ptr<Storage> make_owned_storage(std::size_t size);

/// Maps a whole file copy-on-write (writes never reach the file) and reads it in, in 2 MiB pages if not yet
/// cached. Throws probe::Error (Io) naming the file when it cannot be opened or mapped.
PROBE_API std::shared_ptr<Storage> map_file(const std::string& path);
/// As map_file, but the pages are read only when touched: for readers of a few header bytes.
PROBE_API std::shared_ptr<Storage> map_file_lazily(const std::string& path);

}  // namespace probe
