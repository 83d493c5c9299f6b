#include "runners/LazyBlas.h"

#if PROBE_HAVE_CBLAS
#include <cblas.h>
#include <dlfcn.h>

#include <type_traits>
#endif

namespace probe::runners {

#if PROBE_HAVE_CBLAS
// DgemmFn is cblas.h's declaration with its enums and blasint spelled as int: check that this is the ABI of
// the library we load (an OpenBLAS built with 64-bit integers fails here rather than corrupting memory at run
// time).
static_assert(std::is_same_v<blasint, int>, "OpenBLAS built with 64-bit integers: DgemmFn would not match");
static_assert(sizeof(CBLAS_ORDER) == sizeof(int) && sizeof(CBLAS_TRANSPOSE) == sizeof(int));
static_assert(CblasRowMajor == kCblasRowMajor && CblasNoTrans == kCblasNoTrans && CblasTrans == kCblasTrans);

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
#else
DgemmFn openblas_dgemm() noexcept { return nullptr; }
#endif

}  // namespace probe::runners
