// runners::gemm, the float64 GEMM under matmul/linear/conv (OpenBLAS or Eigen by build option), with its
// transposed and accumulating forms. Expected values: the defining triple loop, on small integers so that
// every product and sum is exact in float64 whatever order the library sums in.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "common/RunCli.h"
#include "runners/Autograd.h"
#include "runners/LazyBlas.h"

namespace probe::runners {
namespace {

// C[i][j] (+)= sum_p op(A)[i][p] op(B)[p][j], A stored [m, k] or [k, m], B stored [k, n] or [n, k].
std::vector<double> reference(const std::vector<double>& a, const std::vector<double>& b,
                              std::vector<double> c, std::int64_t m, std::int64_t k, std::int64_t n, bool ta,
                              bool tb, bool acc) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t p = 0; p < k; ++p)
        s += a[static_cast<std::size_t>(ta ? p * m + i : i * k + p)] *
             b[static_cast<std::size_t>(tb ? j * k + p : p * n + j)];
      auto& out = c[static_cast<std::size_t>(i * n + j)];
      out = acc ? out + s : s;
    }
  return c;
}

std::vector<double> ints(std::size_t n, int seed) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<double>(static_cast<int>((i * 7 + seed * 13) % 11) - 5);
  return v;
}

TEST(Gemm, MatchesTheDefinitionForEveryTransposeAndAccumulate) {
  // Shapes past the libraries' small-matrix paths and with odd edges.
  for (auto [m, k, n] : {std::array<std::int64_t, 3>{3, 5, 2}, {37, 65, 19}, {128, 9, 130}}) {
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool acc : {false, true}) {
          const auto a = ints(static_cast<std::size_t>(m * k), 1),
                     b = ints(static_cast<std::size_t>(k * n), 2);
          const auto c0 = ints(static_cast<std::size_t>(m * n), 3);
          std::vector<double> c = c0;
          gemm(a.data(), b.data(), c.data(), m, k, n, ta, tb, acc);
          EXPECT_EQ(c, reference(a, b, c0, m, k, n, ta, tb, acc))
              << "m=" << m << " k=" << k << " n=" << n << " ta=" << ta << " tb=" << tb << " acc=" << acc;
        }
  }
}

TEST(Gemm, EmptyInnerDimensionGivesZerosOrLeavesTheSum) {
  std::vector<double> c{1, 2, 3, 4};
  gemm(nullptr, nullptr, c.data(), 2, 0, 2, false, false, true);
  EXPECT_EQ(c, (std::vector<double>{1, 2, 3, 4}));
  gemm(nullptr, nullptr, c.data(), 2, 0, 2);
  EXPECT_EQ(c, (std::vector<double>{0, 0, 0, 0}));
}

#if PROBE_EXPECT_OPENBLAS
// Built with OpenBLAS, the GEMM must really reach it: a wrong SONAME would fall back to Eigen unnoticed.
TEST(Gemm, TheOpenBlasOfTheBuildIsLoadedOnFirstUse) { EXPECT_NE(openblas_dgemm(), nullptr); }

// The single-threaded build (tools/bootstrap.sh installs it) is a library of its own: not the threaded one
// under another name.
TEST(Gemm, TheSingleThreadedOpenBlasIsLoadedApart) {
  ASSERT_NE(openblas_serial_dgemm(), nullptr);
  EXPECT_NE(openblas_serial_dgemm(), openblas_dgemm());
}
#endif

// A SerialBlasScope switches this thread's GEMMs to the single-threaded build, nests, and leaves other
// threads alone; the products are the same.
TEST(Gemm, SerialScopeSwitchesOnlyThisThread) {
  const DgemmFn threaded = openblas_dgemm();
  const DgemmFn serial = openblas_serial_dgemm() ? openblas_serial_dgemm() : threaded;
  EXPECT_EQ(thread_dgemm(), threaded);
  {
    const SerialBlasScope outer;
    EXPECT_EQ(thread_dgemm(), serial);
    {
      const SerialBlasScope inner;
      EXPECT_EQ(thread_dgemm(), serial);
    }
    EXPECT_EQ(thread_dgemm(), serial);
    DgemmFn other = nullptr;
    std::thread([&] { other = thread_dgemm(); }).join();
    EXPECT_EQ(other, threaded);
    const std::int64_t m = 37, k = 65, n = 19;
    const auto a = ints(static_cast<std::size_t>(m * k), 1), b = ints(static_cast<std::size_t>(k * n), 2);
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
        gemm(a.data(), b.data(), c.data(), m, k, n, ta, tb, false);
        EXPECT_EQ(c, reference(a, b, std::vector<double>(c.size(), 0.0), m, k, n, ta, tb, false));
      }
  }
  EXPECT_EQ(thread_dgemm(), threaded);
}

// OpenBLAS is loaded on the first GEMM, never at process start (its constructor costs every command
// milliseconds): glibc's loader names each library it maps under LD_DEBUG=libs.
TEST(Gemm, TheCliDoesNotLoadOpenBlasWhenItMultipliesNoMatrix) {
  ASSERT_EQ(::setenv("LD_DEBUG", "libs", 1), 0);
  const auto r = testing::run_cli("metrics --help");
  ::unsetenv("LD_DEBUG");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("calling init"), std::string::npos) << "LD_DEBUG had no effect:\n" << r.out;
  EXPECT_EQ(r.out.find("libopenblas"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace probe::runners
