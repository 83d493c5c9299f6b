// The AVX2 copy of the fused metrics kernel (no FMA: results must match the scalar path bit for bit), chosen
// at run time on CPUs that have it: see KernelShared.h. Empty where PROBE_KERNEL_ISAS is off.
#include "metrics/KernelShared.h"

#ifdef PROBE_KERNEL_ISAS
#pragma GCC push_options
#pragma GCC target("avx2,f16c,bmi,bmi2,popcnt,lzcnt")
#define PROBE_KERNEL_ISA 1
#include "metrics/KernelIsa.inc"
#pragma GCC pop_options
#endif
