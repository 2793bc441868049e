#pragma once
// CPU FWT kernels, one set per ISA level (fwt_cpu_kernels.inl compiled several times).
#include <cstdint>

namespace ironkernels::detail {

#define IK_DECLARE_FWT_CPU(isa)                                                                  \
  namespace cpu_##isa {                                                                          \
  /* In place on `rows` contiguous rows of 2^log_n elements, `row_stride` elements apart. */    \
  void fwt_rows(float* x, std::int64_t rows, std::int64_t row_stride, int log_n, float scale);   \
  void fwt_rows(double* x, std::int64_t rows, std::int64_t row_stride, int log_n, double scale); \
  }
IK_DECLARE_FWT_CPU(baseline)
IK_DECLARE_FWT_CPU(avx2)
IK_DECLARE_FWT_CPU(avx512)
#undef IK_DECLARE_FWT_CPU

}  // namespace ironkernels::detail
