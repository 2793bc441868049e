#pragma once
// CPU FWT kernels, one set per ISA level (fwt_cpu_kernels.inl compiled several times).
#include <cstdint>

#include "ironkernels/core/export.hpp"

namespace ironkernels::detail {

enum class Format16 { float16, bfloat16 };

/// How a row longer than one L1-sized block splits: `blocks` independent blocks (first), then
/// `strips` independent column strips; 0 and 0 for a row that is transformed whole.
struct RowParts {
  std::int64_t blocks, strips;
};

#define IK_DECLARE_ROW_PARTS(T)                                                            \
  RowParts fwt_row_parts(const T*, int log_n);                                             \
  void fwt_row_blocks(T* x, int log_n, std::int64_t begin, std::int64_t end);              \
  void fwt_row_strips(T* x, int log_n, std::int64_t begin, std::int64_t end, T scale);
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
  /* One long row in parts, for threads to share: fwt_row_blocks over [0, blocks), then          */ \
  /* fwt_row_strips over [0, strips) (which scales), after the row_parts of its type and length. */ \
  IK_DECLARE_ROW_PARTS(float) IK_DECLARE_ROW_PARTS(double) IK_DECLARE_ROW_PARTS(std::uint32_t)     \
  IK_DECLARE_ROW_PARTS(std::uint64_t)                                                              \
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
#undef IK_DECLARE_ROW_PARTS

// The variants picked by active_cpu_isa() (defined in fwt.cpp; exported: the tests call them too).
IRONKERNELS_EXPORT void widen_16bit_active(Format16 f, const std::uint16_t* src, float* dst, std::int64_t n);
IRONKERNELS_EXPORT void round_16bit_active(Format16 f, const float* src, std::uint16_t* dst, std::int64_t n);

}  // namespace ironkernels::detail
