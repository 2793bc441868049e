#pragma once
// Contract.native()'s per-call statistics, the exponent spread ρ = √nnz · 2^E / ‖line‖₂ of every row
// of op(A) and column of op(B), and the count they give (see gemm_native_contract in
// ironkernels/gemm.hpp).
#include <cstdint>
#include <utility>

#include "gemm/ozaki.hpp"
#include "ironkernels/core/array.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels::detail {

// `lines` lines of `positions` float64 values: value l of line r at data[r·line_stride + l·position_stride].
struct StridedLines {
  const double* data;
  std::int64_t lines, positions, line_stride, position_stride;
};

// One line's statistics: its ScaledSum in the canonical order (ozaki::kLineSumChunk), largest finite
// magnitude, nonzeros and whether it holds Inf/NaN (then the sum is of no use).
struct LineStats {
  ozaki::ScaledSum sum;
  double largest = 0.0;
  std::int64_t nonzeros = 0;
  bool nonfinite = false;
};
LineStats line_stats_cpu(const double* line, std::int64_t positions, std::int64_t stride);

// Fast scaling at one k, by count c (a[c] = b[c] = 0: no bits left with c moduli): the bits every
// line keeps at least, and the bins of the lines that keep one more. A line keeps bits + 1 where its
// largest element's mantissa is at most its side's cap's (ozaki::Budget); `edges[side]` holds those
// cap mantissas over the counts, distinct and ascending, and edge[side][c] the index of count c's.
// A line's bin is how many edges lie below its mantissa: with c moduli, the lines of bins above
// edge[side][c] keep `bits`, the others bits + 1.
struct NativeBits {
  int a[kGemmMaxModuli + 1] = {}, b[kGemmMaxModuli + 1] = {};
  int edge[2][kGemmMaxModuli + 1] = {};
  double edges[2][kGemmMaxModuli] = {};
  int edge_count[2] = {};
};
constexpr int kNativeBins = kGemmMaxModuli;  // at most kGemmMaxModuli - 1 edges
NativeBits native_bits(std::int64_t k);
// Native DGEMM's bound at inner dimension k: √k · u.
double native_target(std::int64_t k);

// The bin of a line (side 0: op(A)'s rows, 1: op(B)'s columns) whose largest magnitude is `largest`.
IK_HD int native_bin(const NativeBits& bits, int side, double largest) {
  const double m = ozaki::mantissa(largest);
  int bin = 0;
  while (bin < bits.edge_count[side] && bits.edges[side][bin] < m) ++bin;
  return bin;
}

// The largest ρ² by side and bin over the lines holding only finite values and at least one
// nonzero; the top bin starts at 1 (the spread of no line at all), every other at 0.
struct NativeSpreads {
  double worst[2][kNativeBins] = {};
};
IK_HD void init_native_spreads(NativeSpreads& s) {
  for (int side = 0; side < 2; ++side)
    for (int bin = 0; bin < kNativeBins; ++bin) s.worst[side][bin] = bin == kNativeBins - 1 ? 1.0 : 0.0;
}

// gemm_native_choice's arithmetic, which the CUDA plan also runs on the device: the fewest moduli
// whose bound is within `target`, and that bound. A line keeping `bits` rounds each element to a
// multiple of 2^(E - bits), off by at most half of it, so ε_side = ρ·2^-(bits+1) for the worst
// line keeping `bits` and ρ·2^-(bits+2) for one keeping bits + 1. One explicit fma, so host and
// device round alike.
IK_HD double native_bound(const NativeSpreads& s, const NativeBits& bits, int c) {  // c moduli, bits.a[c] > 0
  constexpr double u = 0x1p-53;
  double eps[2];
  for (int side = 0; side < 2; ++side) {
    double fewer = 0.0, more = 0.0;  // ρ² of the lines keeping bits / bits + 1
    for (int bin = 0; bin < kNativeBins; ++bin) {
      double& w = bin > bits.edge[side][c] ? fewer : more;
      w = w > s.worst[side][bin] ? w : s.worst[side][bin];
    }
    const double worst = fewer > 0.25 * more ? fewer : 0.25 * more;
    eps[side] = ::ldexp(::sqrt(worst), -(side == 0 ? bits.a[c] : bits.b[c]) - 1);
  }
  return ::fma(eps[0], eps[1], eps[0] + eps[1]) + u;
}
IK_HD void native_count(const NativeSpreads& s, double target, const NativeBits& bits, int& moduli, double& bound) {
  for (int c = 2; c <= kGemmMaxModuli; ++c) {
    if (bits.a[c] == 0) continue;
    moduli = c, bound = native_bound(s, bits, c);
    if (bound <= target) return;
  }
}

// The choice from both sides' spreads (the reported spreads: the largest ρ over all lines).
GemmNativeChoice native_choice(const NativeSpreads& s, std::int64_t k, const NativeBits& bits);
// A finite, nonzero line's ρ² = nnz / Σ into its bin on `side` of `s` (the largest per bin).
void add_line_spread(const LineStats& line, const NativeBits& bits, int side, NativeSpreads& s);
// Both sides' spreads on the CPU (op(A)'s rows, op(B)'s columns).
NativeSpreads native_spreads_cpu(const StridedLines& a, const StridedLines& b, const NativeBits& bits);
#if IRONKERNELS_WITH_CUDA
// The same on a CUDA device, on `stream`, waiting for it.
NativeSpreads native_spreads_cuda(const StridedLines& a, const StridedLines& b, const NativeBits& bits, Device device,
                                  Stream stream);
#endif

}  // namespace ironkernels::detail
