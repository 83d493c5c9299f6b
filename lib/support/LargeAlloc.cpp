#include "support/LargeAlloc.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>

namespace probe::detail {
namespace {

// Freed blocks of 2 MiB or more kept mapped for reuse, at most this many bytes (least recently freed
// first out). A fresh block costs the kernel a zeroed page per fault; the tensors of consecutive APIs and of
// a forward and its backward have the same sizes, so most blocks come back from here. A block serves requests
// down to half its size: a tighter fit or a smaller cache leaves most blocks fresh on a model dump, and the
// cache still keeps peak RSS below what unmapping every block gives.
constexpr std::size_t kCacheBytes = std::size_t{512} << 20;

struct Cached {
  void* block;
  std::size_t bytes;
};

// Every 2 MiB block this file mapped, and the freed ones kept for reuse. Never destroyed: tensors may
// be freed during static destruction.
class HugeBlocks {
 public:
  // A block of at least `bytes` (a multiple of kHugePageBytes), or nullptr.
  void* reuse(std::size_t bytes) {
    std::lock_guard lock(m_);
    auto it = by_size_.lower_bound(bytes);
    if (it == by_size_.end() || it->first / 2 > bytes) return nullptr;  // at most twice the request
    void* block = it->second->block;
    cached_ -= it->first;
    lru_.erase(it->second);
    by_size_.erase(it);
    return block;
  }
  void track(void* block, std::size_t bytes) {
    std::lock_guard lock(m_);
    mapped_.emplace(block, bytes);
  }
  // Takes back a block of this file (false: not one of them): cached, or unmapped if it does not fit.
  bool release(void* block) noexcept {
    std::lock_guard lock(m_);
    const auto it = mapped_.find(block);
    if (it == mapped_.end()) return false;
    const std::size_t bytes = it->second;
    if (bytes <= kCacheBytes) {
      while (cached_ + bytes > kCacheBytes) {
        const Cached old = lru_.back();
        evict(old);
        mapped_.erase(old.block);
        ::munmap(old.block, old.bytes);
      }
      try {
        lru_.push_front({block, bytes});
        try {
          by_size_.emplace(bytes, lru_.begin());
        } catch (...) {
          lru_.pop_front();
          throw;
        }
        cached_ += bytes;
        return true;
      } catch (...) {  // no memory for the bookkeeping: the block goes back to the kernel
      }
    }
    mapped_.erase(block);
    ::munmap(block, bytes);
    return true;
  }

 private:
  void evict(const Cached& c) {
    for (auto [it, end] = by_size_.equal_range(c.bytes); it != end; ++it)
      if (it->second->block == c.block) {
        lru_.erase(it->second);
        by_size_.erase(it);
        break;
      }
    cached_ -= c.bytes;
  }

  std::mutex m_;
  std::unordered_map<void*, std::size_t> mapped_;  // live and cached blocks -> mapped bytes
  std::list<Cached> lru_;                          // cached blocks, most recently freed first
  std::multimap<std::size_t, std::list<Cached>::iterator> by_size_;
  std::size_t cached_ = 0;
};

HugeBlocks& huge_blocks() {
  static HugeBlocks* blocks = new HugeBlocks;
  return *blocks;
}

// `bytes` (a multiple of kHugePageBytes) of fresh zero pages, kHugePageBytes aligned, or nullptr.
void* map_huge(std::size_t bytes) {
  const std::size_t span = bytes + kHugePageBytes;
  if (span < bytes) return nullptr;
  void* raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (aligned > start) ::munmap(raw, aligned - start);
  if (const std::uintptr_t end = start + span, used = aligned + bytes; end > used)
    ::munmap(reinterpret_cast<void*>(used), end - used);
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  // Advice only: a kernel without transparent huge pages refuses it and 4 KiB pages are used as before.
  (void)::madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

}  // namespace

void* allocate_tensor_bytes(std::size_t bytes) {
  // Large fresh buffers come in 2 MiB pages: one fault (and one zeroed page) per 2 MiB instead of 512.
  if (bytes < kHugePageBytes) {
    void* p = std::aligned_alloc(64, bytes == 0 ? 64 : (bytes + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return p;
  }
  const std::size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (rounded < bytes) throw std::bad_alloc();  // overflow
  HugeBlocks& blocks = huge_blocks();
  if (void* p = blocks.reuse(rounded)) return p;
  void* p = map_huge(rounded);
  if (!p) throw std::bad_alloc();
  try {
    blocks.track(p, rounded);
  } catch (...) {
    ::munmap(p, rounded);
    throw std::bad_alloc();
  }
  return p;
}

void free_tensor_bytes(void* block) noexcept {
  if (!block) return;
  // Only a 2 MiB aligned address can be a mapped block; anything else came from aligned_alloc.
  if (reinterpret_cast<std::uintptr_t>(block) % kHugePageBytes == 0 && huge_blocks().release(block)) return;
  std::free(block);
}

}  // namespace probe::detail
