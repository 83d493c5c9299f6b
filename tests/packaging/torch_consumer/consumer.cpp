// A program built against an installed probe with find_package(probe COMPONENTS torch). It includes only
// probe/torch.h (which includes no LibTorch header), so it also shows that header stands alone; linking
// probe::torch brings LibTorch's libraries.
#include <cstdio>
#include <string>

#include "probe/torch.h"

int main() {
  probe::torch::CheckScope scope(probe::torch::CheckScopeOptions{});  // count only: no op runs here
  const std::string text = probe::torch::to_string(scope.summary());
  std::printf("%s", text.c_str());
  return text.rfind("aten ops: 0 checked", 0) == 0 ? 0 : 1;
}
