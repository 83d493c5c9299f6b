#pragma once
// OpenBLAS's dgemm, loaded on first use instead of linked: OpenBLAS's load-time constructor probes the CPU
// and starts its thread pool (3.6 ms of every process start on a 2-core machine), and most probe commands
// (metrics, compare, api_precision_compare, --help) never multiply matrices.

namespace probe::runners {

/// The signature of cblas_dgemm (row/column order and transposes as CBLAS's enum values, 32-bit sizes).
using DgemmFn = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, double alpha,
                         const double* a, int lda, const double* b, int ldb, double beta, double* c, int ldc);

/// CBLAS's enum values for the arguments order, trans_a and trans_b.
inline constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112;

/// cblas_dgemm of the OpenBLAS the build found (PROBE_OPENBLAS_SONAME), loaded once per process; nullptr when
/// probe was built without OpenBLAS or the library cannot be loaded (callers then use Eigen's GEMM).
/// Thread-safe.
DgemmFn openblas_dgemm() noexcept;

/// cblas_dgemm of OpenBLAS's single-threaded build (PROBE_OPENBLAS_SERIAL_PATH), loaded once per process with
/// its own symbols (not those of an OpenBLAS the host program loaded); nullptr when absent. Thread-safe.
DgemmFn openblas_serial_dgemm() noexcept;

/// The dgemm this thread's float64 GEMMs use: openblas_serial_dgemm() while a SerialBlasScope is alive on
/// this thread (and the serial build loads), else openblas_dgemm(); nullptr means Eigen's GEMM.
DgemmFn thread_dgemm() noexcept;

/// While alive, this thread's float64 GEMMs run single-threaded on this thread: for probe's workers inside
/// another program's process, whose own multi-threaded BLAS calls must not queue behind probe's (OpenBLAS's
/// threaded build runs one threaded GEMM of the process at a time). Nests; affects only this thread.
class SerialBlasScope {
 public:
  SerialBlasScope() noexcept;
  ~SerialBlasScope();
  SerialBlasScope(const SerialBlasScope&) = delete;
  SerialBlasScope& operator=(const SerialBlasScope&) = delete;

 private:
  bool previous_;
};

}  // namespace probe::runners
