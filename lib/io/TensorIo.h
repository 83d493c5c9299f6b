// Internal: format parsers over an in-memory byte buffer (a file mapping or an inflated zip member),
// shared by the public loaders, the fuzzers and the tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probe/export.h"
#include "probe/storage.h"
#include "probe/tensor.h"
#include "probe/tensor_file.h"

namespace probe::io {

/// Parses the .npy held in bytes [begin, begin+size) of `buf`; the result may view `buf`.
Tensor parse_npy(const std::shared_ptr<Storage>& buf, std::size_t begin, std::size_t size,
                 const std::string& file);

/// The exact bytes numpy.save writes before the data of an array of this dtype and shape.
std::string npy_header(DType dtype, const Shape& shape);

/// Reads the .npy header held at `begin` of `buf` (checking that the data it declares is present)
/// without touching the data.
TensorHeader parse_npy_header(const std::shared_ptr<Storage>& buf, std::size_t begin, std::size_t size,
                              const std::string& file);

/// The size of the .npy whose first `size` bytes are at `p` (at least its header), as its header declares:
/// header + shape x itemsize. Throws Format/Unsupported as parse_npy does for a bad header.
std::uint64_t npy_declared_size(const std::byte* p, std::size_t size, const std::string& file);

/// Parses a torch.save zip archive held in `buf`.
std::vector<NamedTensor> parse_pt(const std::shared_ptr<Storage>& buf, const std::string& file);

/// The dtype and shape of every tensor of a torch.save zip archive held in `buf`, read from data.pkl
/// and the zip directory: no storage record is read or inflated.
std::vector<std::pair<std::string, TensorHeader>> parse_pt_headers(const std::shared_ptr<Storage>& buf,
                                                                   const std::string& file);

/// Parses every member of a .npz archive held in `buf` (only `only` if not empty).
std::vector<NamedTensor> parse_npz(const std::shared_ptr<Storage>& buf, const std::string& file,
                                   const std::string& only = {});

/// Copies the strided view (element strides >= 0, checked against the storage by the caller) into a
/// fresh C-order tensor. Exported for the LibTorch adapter (libprobe_torch).
PROBE_API Tensor materialise(DType dtype, const Shape& shape, const std::vector<std::int64_t>& strides,
                             const std::byte* base);

/// Returns `t` with every bool byte 0 or 1 (copying only if some byte is neither), so that reading it
/// as C++ bool is defined.
Tensor normalise_bool(Tensor t);

/// Byte-swaps every element of an owned tensor in place (complex: each half separately).
void byteswap_inplace(Tensor& t);

/// Writes `parts` to `path` through a temporary file in the same directory and rename().
void write_file_atomically(const std::string& path, const std::vector<std::string_view>& parts);

/// One member of a zip archive.
struct ZipEntry {
  std::string name;
  std::uint64_t index = 0;
  std::uint64_t size = 0;         ///< uncompressed bytes (central directory)
  std::uint64_t comp_size = 0;    ///< compressed bytes
  bool stored = false;            ///< method 0 (no compression)
  std::uint64_t data_offset = 0;  ///< for stored entries: offset of the data in the archive
};

/// A read-only zip archive over a byte buffer (libzip for the directory and inflating; the local
/// headers are read directly to find where stored data lies, so it can be mapped instead of copied).
class ZipReader {
 public:
  ZipReader(std::shared_ptr<Storage> buf, std::string file);
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  const std::vector<ZipEntry>& entries() const noexcept { return entries_; }
  /// The bytes of entry `e`: a view of the archive buffer when stored, else a bounded inflated copy.
  /// Sets `offset` to where they start inside the returned storage.
  std::shared_ptr<Storage> read(const ZipEntry& e, std::size_t& offset) const;
  /// The first min(max_bytes, e.size) bytes of entry `e`, inflating no more than that.
  std::string read_prefix(const ZipEntry& e, std::size_t max_bytes) const;

  /// Largest size a deflated member may claim (zip bombs): deflate expands at most ~1032x.
  static constexpr std::uint64_t kMaxInflateRatio = 1032;
  static constexpr std::uint64_t kMaxInflatedBytes = std::uint64_t{16} << 30;

 private:
  void check_inflate_bound(const ZipEntry& e) const;
  std::shared_ptr<Storage> buf_;
  std::string file_;
  void* zip_ = nullptr;  // zip_t*, kept out of this header
  std::vector<ZipEntry> entries_;
};

}  // namespace probe::io

namespace probe::io {

/// Where a storage record's bytes live (`size` bytes at `offset` inside `buf`).
struct StorageBytes {
  std::shared_ptr<Storage> buf;
  std::size_t offset = 0;
  std::size_t size = 0;
};
/// Returns the bytes of storage record `key` (torch's {archive}/data/{key}); throws if missing.
/// `needed_bytes` is what the pickle says the storage holds (numel x itemsize): a loader must not
/// spend more than that on a record (a compressed record claiming more is refused before inflating).
using StorageLoader = std::function<StorageBytes(const std::string& key, std::uint64_t needed_bytes)>;

/// Bounds of one data.pkl, refused beyond before any object is built. Sized from real files: a dumped
/// tensor's pickle is ~150 bytes and 37 operations, a 7B-parameter state_dict's (291 tensors) 35 KB and
/// 9.2K operations; the limits leave 100x room above a 3000-tensor state_dict while keeping what a
/// hostile pickle can make the VM allocate to a few hundred MB (~500 bytes per object).
inline constexpr std::uint64_t kMaxPickleBytes = std::uint64_t{16} << 20;   // inflated size of data.pkl
inline constexpr std::uint64_t kMaxPickleOps = std::uint64_t{1} << 21;      // opcodes up to STOP
inline constexpr std::uint64_t kMaxPickleObjects = std::uint64_t{1} << 20;  // opcodes that create an object

/// Runs torch's pickle (data.pkl) on an allow-listed VM (DECISIONS D10) and returns every tensor of
/// the unpickled object, named by its path of keys/indices.
std::vector<NamedTensor> unpickle_tensors(std::string_view pickle, const StorageLoader& load,
                                          const std::string& file);

/// As unpickle_tensors, for a loader that only checks storage records (returns a null `buf` with the
/// record's size): the dtype and shape of every tensor, with no tensor data read.
std::vector<std::pair<std::string, TensorHeader>> unpickle_tensor_headers(std::string_view pickle,
                                                                          const StorageLoader& load,
                                                                          const std::string& file);

/// The data.pkl bytes torch.save writes for one contiguous tensor stored as record "0".
std::string torch_pickle_for(const Tensor& t);

}  // namespace probe::io
