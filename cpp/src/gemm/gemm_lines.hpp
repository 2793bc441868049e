#pragma once
// Per-line statistics of the rows of op(A) and the columns of op(B), from one pass over each: what
// norm scaling (each line's 2-norm) and the certificate (nonzeros, lowest set bit) read.
#include <climits>
#include <cstdint>

#include "gemm/ozaki.hpp"

namespace ironkernels::detail {

// One line's statistics: its ScaledSum in the canonical order (ozaki::kLineSumChunk), largest finite
// magnitude, nonzeros, the exponent of the lowest set bit over its nonzeros (certify::
// lowest_bit_exponent; INT_MAX for none) and whether it holds Inf/NaN.
struct LineStats {
  ozaki::ScaledSum sum;
  double largest = 0.0;
  std::int64_t nonzeros = 0;
  int lowest_bit = INT_MAX;
  bool nonfinite = false;
};
LineStats line_stats_cpu(const double* line, std::int64_t positions, std::int64_t stride);

}  // namespace ironkernels::detail
