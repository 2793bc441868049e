#pragma once
// CPU kernels are compiled once per ISA level (see CMakeLists.txt) and picked here at run time.
// IRONKERNELS_CPU_ISA=baseline|avx2|avx512 forces a level (tests run every variant this way).
#include "ironkernels/core/export.hpp"

namespace ironkernels::detail {
enum class CpuIsa { baseline, avx2, avx512 };
// Exported for the ISA tests (tests/cpp/test_half.cpp), like the two calls in fwt/fwt_cpu.hpp.
IRONKERNELS_EXPORT CpuIsa active_cpu_isa();
IRONKERNELS_EXPORT const char* cpu_isa_name(CpuIsa isa);
}  // namespace ironkernels::detail
