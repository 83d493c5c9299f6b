// Loading and saving tensor files: .npy (numpy), .npz archives, and .pt (torch.save zip files).
#pragma once

#include <string>
#include <vector>

#include "probe/export.h"
#include "probe/tensor.h"

namespace probe {

/// One tensor of a multi-tensor file, with its name (npz member without ".npy"; for .pt the
/// path of keys/indices inside the saved object joined by '.', empty for a bare tensor).
struct PROBE_API NamedTensor {
  std::string name;
  Tensor tensor;
};

/// What a tensor file says of its tensor, read without the data.
struct PROBE_API TensorHeader {
  DType dtype = DType::Float32;
  Shape shape;
};

/// Reads the dtype and shape of the single tensor in `path` (formats as load_tensor_file) without reading
/// its data: a .pt's storage records are checked against the zip directory, never inflated. Thread-safe.
PROBE_API TensorHeader read_tensor_header(const std::string& path);

/// Loads the tensor in `path`, choosing the format by extension (.npy, .pt/.pth/.bin).
/// Uncompressed data is memory-mapped, not copied. Throws probe::Error naming the file on any problem.
PROBE_API Tensor load_tensor_file(const std::string& path);

/// Loads a .npy file (format 1.0/2.0/3.0, either byte order, C or Fortran order; result is C order).
/// numpy has no bfloat16: such tensors are stored as float32 (see save_npy), so none is ever returned.
PROBE_API Tensor load_npy(const std::string& path);

/// Loads every member of a .npz archive (stored or deflated), in archive order.
PROBE_API std::vector<NamedTensor> load_npz(const std::string& path);
/// Loads one member of a .npz archive; `member` may be given with or without ".npy".
PROBE_API Tensor load_npz_member(const std::string& path, const std::string& member);

/// Loads every tensor of a torch.save'd object (a tensor, or lists/tuples/dicts of them) through an
/// allow-listed unpickler that never runs code (DECISIONS D10); views are materialised as C order.
PROBE_API std::vector<NamedTensor> load_pt(const std::string& path);

/// Writes `tensor` as a .npy file (format 1.0 unless the header needs 2.0, little endian, C order),
/// byte-identical to numpy.save. bfloat16 is widened to float32 ('<f4'), as MindSpore dumps store it.
/// Replaces the file atomically.
PROBE_API void save_npy(const std::string& path, const Tensor& tensor);

/// Writes `tensor` as a torch.save zip file (pickle protocol 2, one stored 64-byte aligned storage
/// record) that torch.load(weights_only=True) and load_pt read. Replaces the file atomically.
PROBE_API void save_pt(const std::string& path, const Tensor& tensor);

}  // namespace probe
