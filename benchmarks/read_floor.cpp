// probe_readfloor [--mmap|--pread] [--threads N] FILE...: the least work a process must do to see every
// byte of its input files (page cache warm), as a whole-process floor for `probe metrics` and other
// readers (issue 13). --mmap (default) maps each file, populates its page tables, loads one 8-byte word
// per cache line and releases the pages, N threads each taking an equal share, the way libprobe reads a
// tensor file; --pread copies each share through a 1 MiB buffer per thread instead. Prints the checksum of
// the words it loaded, so that no pass can be optimised away.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kLine = 64;
constexpr std::size_t kBuffer = std::size_t{1} << 20;

struct Input {
  int fd = -1;
  std::size_t size = 0;
  const std::byte* map = nullptr;
};

std::uint64_t sum_lines(const std::byte* p, std::size_t n) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i + sizeof s <= n; i += kLine) {
    std::uint64_t w;
    std::memcpy(&w, p + i, sizeof w);
    s += w;
  }
  return s;
}

// The share [begin, end) of thread t out of n, page aligned.
std::pair<std::size_t, std::size_t> share(std::size_t size, int t, int n) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t per = (size / static_cast<std::size_t>(n) + page - 1) / page * page;
  const std::size_t begin = std::min(size, per * static_cast<std::size_t>(t));
  return {begin, t == n - 1 ? size : std::min(size, begin + per)};
}

[[noreturn]] void fail(const std::string& what, const char* path) {
  std::fprintf(stderr, "probe_readfloor: %s: %s: %s\n", path, what.c_str(), std::strerror(errno));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  bool use_mmap = true;
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  std::vector<const char*> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--mmap") {
      use_mmap = true;
    } else if (arg == "--pread") {
      use_mmap = false;
    } else if (arg == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "-h" || arg == "--help") {
      std::puts("usage: probe_readfloor [--mmap|--pread] [--threads N] FILE...");
      return 0;
    } else {
      paths.push_back(argv[i]);
    }
  }
  if (paths.empty() || threads < 1) {
    std::fputs("usage: probe_readfloor [--mmap|--pread] [--threads N] FILE...\n", stderr);
    return 2;
  }
  std::vector<Input> inputs(paths.size());
  for (std::size_t f = 0; f < paths.size(); ++f) {
    Input& in = inputs[f];
    in.fd = ::open(paths[f], O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (in.fd < 0 || ::fstat(in.fd, &st) != 0) fail("cannot open", paths[f]);
    in.size = static_cast<std::size_t>(st.st_size);
    if (use_mmap && in.size > 0) {
      void* p = ::mmap(nullptr, in.size, PROT_READ, MAP_PRIVATE, in.fd, 0);
      if (p == MAP_FAILED) fail("cannot map", paths[f]);
      in.map = static_cast<const std::byte*>(p);
    }
  }
  std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      // Page aligned: the kernel's copy into a misaligned buffer is several times slower.
      std::byte* buffer = use_mmap ? nullptr : static_cast<std::byte*>(std::aligned_alloc(4096, kBuffer));
      std::uint64_t s = 0;
      for (const Input& in : inputs) {
        const auto [begin, end] = share(in.size, t, threads);
        if (begin == end) continue;
        if (use_mmap) {
          void* at = const_cast<std::byte*>(in.map + begin);
#ifdef MADV_POPULATE_READ
          (void)::madvise(at, end - begin, MADV_POPULATE_READ);
#endif
          s += sum_lines(in.map + begin, end - begin);
          (void)::madvise(at, end - begin, MADV_DONTNEED);
        } else {
          for (std::size_t at = begin; at < end;) {
            const ssize_t got = ::pread(in.fd, buffer, std::min(kBuffer, end - at), static_cast<off_t>(at));
            if (got <= 0) break;
            s += sum_lines(buffer, static_cast<std::size_t>(got));
            at += static_cast<std::size_t>(got);
          }
        }
      }
      std::free(buffer);
      sums[static_cast<std::size_t>(t)] = s;
    });
  }
  std::uint64_t total = 0;
  for (int t = 0; t < threads; ++t) {
    pool[static_cast<std::size_t>(t)].join();
    total += sums[static_cast<std::size_t>(t)];
  }
  std::printf("%016llx\n", static_cast<unsigned long long>(total));
  return 0;
}
