// The baseline (SSE2 on x86-64) copy of the fused metrics kernel: see KernelShared.h.
#include "metrics/KernelShared.h"

#define PROBE_KERNEL_ISA 0
#include "metrics/KernelIsa.inc"
