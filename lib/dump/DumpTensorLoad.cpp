// Loading a descriptor's tensor. Kept apart from the model so that programs which only read dump.json
// metadata do not link the tensor-file readers.
#include "probe/dump.h"
#include "probe/error.h"
#include "probe/tensor_file.h"

namespace probe {

Tensor Dump::load_tensor(const DumpEntry& entry, const TensorInfo& info) const {
  const std::string file = tensor_path(entry, info);
  try {
    return load_tensor_file(file);
  } catch (const Error& e) {
    throw e.with_context(file, {}, entry.key);
  }
}

}  // namespace probe
