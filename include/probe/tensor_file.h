// Loading and saving tensor files: .npy (numpy), .npz members, and .pt (torch.save zip files).
#pragma once

#include <string>

#include "probe/tensor.h"

namespace probe {

/// Loads the tensor in `path`, choosing the format by extension (.npy, .pt/.pth/.bin).
/// Uncompressed data is memory-mapped, not copied. Throws probe::Error naming the file on any problem.
Tensor load_tensor_file(const std::string& path);

/// Writes `tensor` as a .npy file (format 1.0, little endian, C order; bfloat16 is written as
/// numpy has no such dtype: see the implementation note). Replaces the file atomically.
void save_npy(const std::string& path, const Tensor& tensor);

}  // namespace probe
