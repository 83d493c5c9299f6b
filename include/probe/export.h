// PROBE_API marks what libprobe exports. The library is compiled with hidden visibility, so a shared
// libprobe exposes exactly the public API (include/probe/) and nothing of its internals.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
/// On a public function or class: exported from a shared libprobe (harmless in the static one).
#define PROBE_API __attribute__((visibility("default")))
#else
#define PROBE_API
#endif
