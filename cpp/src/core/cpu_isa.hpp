#pragma once
// CPU kernels are compiled once per ISA level (see CMakeLists.txt) and picked here at run time.
// IRONKERNELS_CPU_ISA=baseline|avx2|avx512 forces a level (tests run every variant this way).
namespace ironkernels::detail {
enum class CpuIsa { baseline, avx2, avx512 };
CpuIsa active_cpu_isa();
const char* cpu_isa_name(CpuIsa isa);
}  // namespace ironkernels::detail
