// libprobe version.
#pragma once

namespace probe {

/// "MAJOR.MINOR.PATCH" of the linked libprobe.
const char* version() noexcept;

}  // namespace probe
