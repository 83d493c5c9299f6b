#include "Commands.h"
#include "probe/error.h"

namespace probe::cli {

int run_info(Args) {
  throw Error(ErrorKind::Unsupported, "'info' needs the dump reader, which is not built yet");
}

}  // namespace probe::cli
