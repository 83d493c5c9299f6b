// Uses only the installed public headers.
#include <cstdio>

#include "probe/tensor.h"
#include "probe/version.h"

int main() {
  probe::Tensor t = probe::Tensor::zeros(probe::DType::Float32, {2, 3});
  std::printf("probe %s %s %s\n", probe::version(), std::string(probe::name(t.dtype())).c_str(),
              probe::shape_to_string(t.shape()).c_str());
  return 0;
}
