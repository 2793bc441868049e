#pragma once
// CPU FWT kernels, one set per ISA level (fwt_cpu_kernels.inl compiled several times).
#include <cstdint>

namespace ironkernels::detail {

enum class Format16 { float16, bfloat16 };

#define IK_DECLARE_FWT_CPU(isa)                                                                  \
  namespace cpu_##isa {                                                                          \
  /* In place on `rows` contiguous rows of 2^log_n elements, `row_stride` elements apart. */    \
  void fwt_rows(float* x, std::int64_t rows, std::int64_t row_stride, int log_n, float scale);   \
  void fwt_rows(double* x, std::int64_t rows, std::int64_t row_stride, int log_n, double scale); \
  /* Integers as unsigned: sums, differences and the scale wrap modulo 2^32 / 2^64. */           \
  void fwt_rows(std::uint32_t* x, std::int64_t rows, std::int64_t row_stride, int log_n,         \
                std::uint32_t scale);                                                            \
  void fwt_rows(std::uint64_t* x, std::int64_t rows, std::int64_t row_stride, int log_n,         \
                std::uint64_t scale);                                                            \
  /* 16-bit rows: each row widened to float32, transformed, rounded back once (to nearest even). */ \
  /* x and y rows are x_stride / y_stride elements apart; y may be x (in place). */               \
  void fwt_rows_16bit(Format16 f, const std::uint16_t* x, std::int64_t x_stride, std::uint16_t* y, \
                      std::int64_t y_stride, std::int64_t rows, int log_n, float scale);          \
  /* The row conversions it uses: bit for bit those of core/half.hpp for every input. */          \
  void widen_16bit(Format16 f, const std::uint16_t* src, float* dst, std::int64_t n);              \
  void round_16bit(Format16 f, const float* src, std::uint16_t* dst, std::int64_t n);              \
  }
IK_DECLARE_FWT_CPU(baseline)
IK_DECLARE_FWT_CPU(avx2)
IK_DECLARE_FWT_CPU(avx512)
#undef IK_DECLARE_FWT_CPU

// The variants picked by active_cpu_isa() (defined in fwt.cpp; the tests call them too).
void widen_16bit_active(Format16 f, const std::uint16_t* src, float* dst, std::int64_t n);
void round_16bit_active(Format16 f, const float* src, std::uint16_t* dst, std::int64_t n);

}  // namespace ironkernels::detail
