// libprobe version: the macros are the version of these headers (the one place it is written; CMake's
// project() reads it from here), version() the version of the library actually linked.
#pragma once

#include "probe/export.h"

#define PROBE_VERSION_MAJOR 0
#define PROBE_VERSION_MINOR 1
#define PROBE_VERSION_PATCH 0
/// One comparable number: MAJOR * 10000 + MINOR * 100 + PATCH.
#define PROBE_VERSION (PROBE_VERSION_MAJOR * 10000 + PROBE_VERSION_MINOR * 100 + PROBE_VERSION_PATCH)

namespace probe {

/// "MAJOR.MINOR.PATCH" of the linked libprobe. Thread-safe.
PROBE_API const char* version() noexcept;

}  // namespace probe
