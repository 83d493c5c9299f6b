#include "probe/storage.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "probe/error.h"
#include "support/LargeAlloc.h"
#include "support/ThreadPool.h"
#include "support/UninitStorage.h"

namespace probe {
namespace {

class OwnedStorage final : public Storage {
 public:
  OwnedStorage(std::size_t size, bool zero) : size_(size) {
    data_ = static_cast<std::byte*>(detail::allocate_tensor_bytes(size));
    if (zero) std::memset(data_, 0, size);
  }
  ~OwnedStorage() override { detail::free_tensor_bytes(data_); }
  std::byte* data() noexcept override { return data_; }
  std::size_t size() const noexcept override { return size_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_;
};

// Page-table work (filling, tearing down) is the kernel's, page by page: advice for a large mapping is given
// in 8 MiB pieces by the calling thread and the thread pool (inline when called from a pool thread).
constexpr std::size_t kAdvicePiece = std::size_t{8} << 20;  // a multiple of the page size
void advise_in_pieces(void* addr, std::size_t size, int advice) {
  const auto pieces = static_cast<std::int64_t>((size + kAdvicePiece - 1) / kAdvicePiece);
  detail::parallel_for(0, pieces, 1, [&](std::int64_t p0, std::int64_t p1, int) {
    const std::size_t begin = static_cast<std::size_t>(p0) * kAdvicePiece;
    const std::size_t end = std::min(size, static_cast<std::size_t>(p1) * kAdvicePiece);
    (void)::madvise(static_cast<std::byte*>(addr) + begin, end - begin, advice);
  });
}

// Tearing down the page tables of a 192 MiB mapping took 11-14 ms on one thread, serial at munmap or at exit.
// Dropping the pages first with MADV_DONTNEED, which
// only needs the mapping lock for reading, spreads it over the thread pool; munmap then has nothing left to
// walk. The file's pages stay in the page cache.
void release_pages_in_parallel(void* addr, std::size_t size) {
  if (size >= 2 * kAdvicePiece) advise_in_pieces(addr, size, MADV_DONTNEED);
}

class MappedStorage final : public Storage {
 public:
  MappedStorage(void* addr, std::size_t size) : addr_(addr), size_(size) {}
  ~MappedStorage() override {
    if (!addr_ || !size_) return;
    release_pages_in_parallel(addr_, size_);
    ::munmap(addr_, size_);
  }
  std::byte* data() noexcept override { return static_cast<std::byte*>(addr_); }
  std::size_t size() const noexcept override { return size_; }
  bool is_mapped() const noexcept override { return true; }

 private:
  void* addr_;
  std::size_t size_;
};

}  // namespace

std::shared_ptr<Storage> make_owned_storage(std::size_t size) {
  return std::make_shared<OwnedStorage>(size, true);
}

namespace detail {
std::shared_ptr<Storage> make_uninitialized_storage(std::size_t size) {
  return std::make_shared<OwnedStorage>(size, false);
}
}  // namespace detail

namespace {

// Readers walk every byte of a tensor file: mapping it all up front (MADV_POPULATE_READ, Linux 5.14+)
// replaces a page fault per 4 KiB. Older kernels refuse
// the advice (EINVAL) and the pages fault in on first touch as before.
//
// Before that, MADV_HUGEPAGE: pages not yet cached are then read ahead into 2 MiB page-cache folios (file
// systems with large folios: ext4 since Linux 6.16, xfs), which the populate maps with one page-table entry
// per 2 MiB instead of 512, and which the metrics kernel then reads with far fewer TLB misses. Pages already
// cached keep their size; kernels without THP refuse the advice.
void populate([[maybe_unused]] void* addr, [[maybe_unused]] std::size_t size) {
#ifdef MADV_HUGEPAGE
  if (size >= detail::kHugePageBytes) (void)::madvise(addr, size, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_READ
  advise_in_pieces(addr, size, MADV_POPULATE_READ);
#endif
}

std::shared_ptr<Storage> map_whole_file(const std::string& path, bool prefault) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::Io, std::string("cannot open: ") + std::strerror(errno), path);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorKind::Io, "not a regular file", path);
  }
  std::size_t size = static_cast<std::size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return make_owned_storage(0);
  }
  // MAP_PRIVATE: tensors may be modified in place without touching the dump on disk.
  void* addr = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  int saved = errno;
  ::close(fd);
  if (addr == MAP_FAILED)
    throw Error(ErrorKind::Io, std::string("cannot map: ") + std::strerror(saved), path);
  if (prefault && size >= (std::size_t{1} << 20)) populate(addr, size);
  return std::make_shared<MappedStorage>(addr, size);
}

}  // namespace

std::shared_ptr<Storage> map_file(const std::string& path) { return map_whole_file(path, true); }

std::shared_ptr<Storage> map_file_lazily(const std::string& path) { return map_whole_file(path, false); }

}  // namespace probe
