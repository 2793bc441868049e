#pragma once
// What a plan's workspace holds besides its arrays, shared by the plan that sizes it (gemm_plan.cu)
// and the kernels that write it: the run's counters, the certificate's histogram bins, and the
// spread pass's per-chunk parts.
#include <cstdint>

#include "gemm/certificate.hpp"
#include "gemm/ozaki.hpp"

namespace ironkernels::detail {

// counters[0], [1]: non-finite rows / columns; [2], [3]: fewest bits kept by a row / a column.
constexpr int kCounters = 4;

// Lines by the count their elements need (certify::CountHistogram: [0, kNoCount], then non-finite).
constexpr int kHistogramBins = certify::kNoCount + 2;

// Positions per chunk of the lines' scan and spread pass (the canonical order's chunks).
constexpr int kScanChunk = ozaki::kLineSumChunk;

// One chunk of one line from the spread pass: its ScaledSum's parts, largest magnitude, nonzeros,
// lowest set bit and non-finite mark.
struct SpreadPart {
  double sum, largest;
  int exponent, nonzeros;  // exponent ozaki::kNoExponent: no nonzero
  int lowest_bit;          // certify::lowest_bit_exponent over the nonzeros (INT_MAX: none)
  int nonfinite;           // 1: an Inf/NaN
};

}  // namespace ironkernels::detail
