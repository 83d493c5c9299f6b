#include "probe/version.h"

namespace probe {

const char* version() noexcept { return PROBE_VERSION_STRING; }

}  // namespace probe
