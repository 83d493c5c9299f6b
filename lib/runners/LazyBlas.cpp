#include "runners/LazyBlas.h"

#if PROBE_HAVE_CBLAS
#include <cblas.h>
#include <dlfcn.h>

#include <type_traits>
#endif

namespace probe::runners {
namespace {
thread_local bool serial_blas = false;
}  // namespace

#if PROBE_HAVE_CBLAS
// DgemmFn is cblas.h's declaration with its enums and blasint spelled as int: check that this is the ABI of
// the library we load (an OpenBLAS built with 64-bit integers fails here rather than corrupting memory at run
// time).
static_assert(std::is_same_v<blasint, int>, "OpenBLAS built with 64-bit integers: DgemmFn would not match");
static_assert(sizeof(CBLAS_ORDER) == sizeof(int) && sizeof(CBLAS_TRANSPOSE) == sizeof(int));
static_assert(CblasRowMajor == kCblasRowMajor && CblasNoTrans == kCblasNoTrans && CblasTrans == kCblasTrans);

// The sanitizers' runtimes refuse dlopen's RTLD_DEEPBIND.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

DgemmFn openblas_dgemm() noexcept {
  // A function-local static: initialised once, concurrently callable. The handle is never closed: OpenBLAS's
  // threads live until the process exits.
  static const DgemmFn fn = []() -> DgemmFn {
    void* lib = dlopen(PROBE_OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    return reinterpret_cast<DgemmFn>(dlsym(lib, "cblas_dgemm"));
  }();
  return fn;
}

DgemmFn openblas_serial_dgemm() noexcept {
  static const DgemmFn fn = []() -> DgemmFn {
    constexpr const char* path = PROBE_OPENBLAS_SERIAL_PATH;
    if (path[0] == '\0') return nullptr;
    // Both builds carry the SONAME libopenblas.so.0, and glibc answers a later load by that name with an
    // already-loaded library of that SONAME: the threaded build goes first, so that such loads (probe's
    // own, a Python extension's) get it and not this one.
    openblas_dgemm();
    // Both builds export the same names (cblas_dgemm, its drivers and kernels, its buffer allocator), and
    // OpenBLAS binds its own calls through the dynamic linker: a host program that loaded the threaded
    // build first would otherwise lend it those symbols. RTLD_DEEPBIND binds the serial build to itself.
    // Sanitized builds load it plainly (its entry point is still its own, and it never starts threads).
    constexpr int kDeep = kSanitized ? 0 : RTLD_DEEPBIND;
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | kDeep);
    if (lib == nullptr) return nullptr;
    return reinterpret_cast<DgemmFn>(dlsym(lib, "cblas_dgemm"));
  }();
  return fn;
}
#else
DgemmFn openblas_dgemm() noexcept { return nullptr; }
DgemmFn openblas_serial_dgemm() noexcept { return nullptr; }
#endif

DgemmFn thread_dgemm() noexcept {
  if (serial_blas)
    if (DgemmFn fn = openblas_serial_dgemm()) return fn;
  return openblas_dgemm();
}

SerialBlasScope::SerialBlasScope() noexcept : previous_(serial_blas) { serial_blas = true; }
SerialBlasScope::~SerialBlasScope() { serial_blas = previous_; }

}  // namespace probe::runners
