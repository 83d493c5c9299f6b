// Public entry points of the tensor-file component.
#include <cstring>

#include "io/TensorIo.h"
#include "probe/tensor_file.h"

namespace probe {
namespace io {

namespace {
// Bytes of a deflated member inflated to read its .npy header: numpy writes headers of at most a few
// hundred bytes (np.load refuses above 10000 by default).
constexpr std::size_t kNpyHeaderPrefix = 64 << 10;
}  // namespace

std::vector<NamedTensor> parse_npz(const std::shared_ptr<Storage>& buf, const std::string& file,
                                   const std::string& only) {
  ZipReader zip(buf, file);
  std::vector<NamedTensor> out;
  for (const ZipEntry& e : zip.entries()) {
    if (!e.name.empty() && e.name.back() == '/') continue;  // directory entries
    std::string member = e.name;
    if (member.size() > 4 && member.compare(member.size() - 4, 4, ".npy") == 0)
      member.resize(member.size() - 4);
    if (!only.empty() && member != only) continue;
    if (!e.stored) {
      // numpy writes a member of exactly its header and data: one claiming more is refused from its
      // header before inflating the rest (a decompression bomb), as storage records of a .pt are.
      const std::string head = zip.read_prefix(e, kNpyHeaderPrefix);
      const std::uint64_t declared = npy_declared_size(reinterpret_cast<const std::byte*>(head.data()),
                                                       head.size(), file + ":" + e.name);
      if (e.size > declared)
        throw Error(ErrorKind::Format,
                    "member claims to inflate to " + std::to_string(e.size) + " bytes but its npy header " +
                        "declares " + std::to_string(declared) +
                        "; refusing to inflate it (decompression bomb?)",
                    file, e.name);
    }
    std::size_t off;
    auto bytes = zip.read(e, off);
    out.push_back({member, parse_npy(bytes, off, static_cast<std::size_t>(e.size), file + ":" + e.name)});
  }
  return out;
}

}  // namespace io

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Tensor single_tensor(std::vector<NamedTensor> all, const std::string& path) {
  if (all.size() != 1)
    throw Error(ErrorKind::Format, "holds " + std::to_string(all.size()) + " tensors where one was expected",
                path);
  return std::move(all.front().tensor);
}

}  // namespace

Tensor load_npy(const std::string& path) {
  auto buf = map_file(path);
  return io::parse_npy(buf, 0, buf->size(), path);
}

std::vector<NamedTensor> load_npz(const std::string& path) { return io::parse_npz(map_file(path), path); }

Tensor load_npz_member(const std::string& path, const std::string& member) {
  std::string want = ends_with(member, ".npy") ? member.substr(0, member.size() - 4) : member;
  auto all = io::parse_npz(map_file(path), path, want);
  if (all.empty()) throw Error(ErrorKind::Format, "no member '" + want + "' in the archive", path);
  return std::move(all.front().tensor);
}

std::vector<NamedTensor> load_pt(const std::string& path) { return io::parse_pt(map_file(path), path); }

Tensor load_tensor_file(const std::string& path) {
  if (ends_with(path, ".npy")) return load_npy(path);
  if (ends_with(path, ".pt") || ends_with(path, ".pth") || ends_with(path, ".bin"))
    return single_tensor(load_pt(path), path);
  // Unknown extension: go by the magic bytes.
  auto buf = map_file(path);
  const char* d = reinterpret_cast<const char*>(buf->data());
  if (buf->size() >= 6 && std::memcmp(d, "\x93NUMPY", 6) == 0)
    return io::parse_npy(buf, 0, buf->size(), path);
  if (buf->size() >= 4 && std::memcmp(d, "PK\x03\x04", 4) == 0)
    return single_tensor(io::parse_pt(buf, path), path);
  throw Error(ErrorKind::Unsupported, "not a .npy or torch.save file", path);
}

TensorHeader read_tensor_header(const std::string& path) {
  auto buf = map_file_lazily(path);
  const char* d = reinterpret_cast<const char*>(buf->data());
  const bool npy = ends_with(path, ".npy") ||
                   (!ends_with(path, ".pt") && !ends_with(path, ".pth") && !ends_with(path, ".bin") &&
                    buf->size() >= 6 && std::memcmp(d, "\x93NUMPY", 6) == 0);
  if (npy) return io::parse_npy_header(buf, 0, buf->size(), path);
  const bool pt = ends_with(path, ".pt") || ends_with(path, ".pth") || ends_with(path, ".bin") ||
                  (buf->size() >= 4 && std::memcmp(d, "PK\x03\x04", 4) == 0);
  if (!pt) throw Error(ErrorKind::Unsupported, "not a .npy or torch.save file", path);
  auto all = io::parse_pt_headers(buf, path);
  if (all.size() != 1)
    throw Error(ErrorKind::Format, "holds " + std::to_string(all.size()) + " tensors where one was expected",
                path);
  return std::move(all.front().second);
}

void save_npy(const std::string& path, const Tensor& tensor) {
  // DECISIONS-style note: numpy has no bfloat16; MindSpore's dump writes bf16 as float32 ('<f4'),
  // which is exact, so probe does the same rather than invent a non-standard descr.
  Tensor t = tensor.dtype() == DType::BFloat16 ? tensor.to(DType::Float32) : tensor;
  const std::string header = io::npy_header(t.dtype(), t.shape());
  io::write_file_atomically(path,
                            {header, std::string_view(reinterpret_cast<const char*>(t.bytes()), t.nbytes())});
}

}  // namespace probe
