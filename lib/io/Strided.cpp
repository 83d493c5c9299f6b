// Helpers shared by the tensor-file readers and writers.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "io/TensorIo.h"
#include "support/UninitStorage.h"

namespace probe::io {
namespace {

template <std::size_t N>
void copy_strided_row(std::byte* dst, const std::byte* src, std::int64_t n, std::int64_t stride_bytes) {
  for (std::int64_t i = 0; i < n; ++i, dst += N, src += stride_bytes) std::memcpy(dst, src, N);
}

void copy_row(std::byte* dst, const std::byte* src, std::int64_t n, std::int64_t stride_bytes,
              std::size_t es) {
  if (stride_bytes == static_cast<std::int64_t>(es)) {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * es);
    return;
  }
  switch (es) {
    case 1:
      return copy_strided_row<1>(dst, src, n, stride_bytes);
    case 2:
      return copy_strided_row<2>(dst, src, n, stride_bytes);
    case 4:
      return copy_strided_row<4>(dst, src, n, stride_bytes);
    case 8:
      return copy_strided_row<8>(dst, src, n, stride_bytes);
    default:
      return copy_strided_row<16>(dst, src, n, stride_bytes);
  }
}

}  // namespace

Tensor materialise(DType dtype, const Shape& shape, const std::vector<std::int64_t>& strides,
                   const std::byte* base) {
  Tensor out = detail::uninitialized_tensor(dtype, shape);  // every row is copied below
  if (out.numel() == 0) return out;
  const std::size_t es = itemsize(dtype);
  std::byte* dst = out.mutable_bytes();
  if (shape.empty()) {
    std::memcpy(dst, base, es);
    return out;
  }
  const std::size_t nd = shape.size();
  const std::int64_t inner = shape[nd - 1];
  const std::int64_t inner_stride = strides[nd - 1] * static_cast<std::int64_t>(es);
  const std::size_t row_bytes = static_cast<std::size_t>(inner) * es;
  std::vector<std::int64_t> idx(nd, 0);
  const std::int64_t rows = out.numel() / inner;
  std::int64_t src_off = 0;  // element offset of the current row start
  for (std::int64_t r = 0; r < rows; ++r) {
    copy_row(dst, base + src_off * static_cast<std::int64_t>(es), inner, inner_stride, es);
    dst += row_bytes;
    // Odometer over the outer dimensions.
    for (std::size_t d = nd - 1; d-- > 0;) {
      if (++idx[d] < shape[d]) {
        src_off += strides[d];
        break;
      }
      src_off -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
  return out;
}

Tensor normalise_bool(Tensor t) {
  if (t.dtype() != DType::Bool) return t;
  const auto* p = reinterpret_cast<const std::uint8_t*>(t.bytes());
  const std::size_t n = t.nbytes();
  if (std::all_of(p, p + n, [](std::uint8_t b) { return b <= 1; })) return t;
  Tensor out = Tensor::zeros(DType::Bool, t.shape());
  auto* q = reinterpret_cast<std::uint8_t*>(out.mutable_bytes());
  for (std::size_t i = 0; i < n; ++i) q[i] = p[i] != 0;  // numpy and torch treat nonzero as True
  return out;
}

void byteswap_inplace(Tensor& t) {
  std::size_t w = itemsize(t.dtype());
  if (is_complex(t.dtype())) w /= 2;
  if (w == 1) return;
  std::byte* p = t.mutable_bytes();
  const std::size_t n = t.nbytes() / w;
  for (std::size_t i = 0; i < n; ++i, p += w) std::reverse(p, p + w);
}

void write_file_atomically(const std::string& path, const std::vector<std::string_view>& parts) {
  std::string tmp = path + ".tmpXXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    throw Error(ErrorKind::Io, std::string("cannot create temporary file: ") + std::strerror(errno), path);
  auto fail = [&](const char* what) {
    int saved = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(ErrorKind::Io, std::string(what) + std::strerror(saved), path);
  };
  for (std::string_view part : parts) {
    const char* p = part.data();
    std::size_t left = part.size();
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail("cannot write: ");
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  // mkstemp creates 0600; dumps are meant to be shared like numpy/torch-written files. (Reading the
  // umask would need umask(), which is process-wide and racy.)
  if (::fchmod(fd, 0644) != 0) fail("cannot set permissions: ");
  if (::close(fd) != 0) {
    int saved = errno;
    ::unlink(tmp.c_str());
    throw Error(ErrorKind::Io, std::string("cannot write: ") + std::strerror(saved), path);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(tmp.c_str());
    throw Error(ErrorKind::Io, std::string("cannot replace file: ") + std::strerror(saved), path);
  }
}

}  // namespace probe::io
