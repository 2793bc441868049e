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

// Fast scaling's bits per count at one k (a[c] = b[c] = 0: none left with c moduli).
struct NativeBits {
  int a[kGemmMaxModuli + 1] = {}, b[kGemmMaxModuli + 1] = {};
};
NativeBits native_bits(std::int64_t k);
// Native DGEMM's bound at inner dimension k: √k · u.
double native_target(std::int64_t k);

// gemm_native_choice's arithmetic, which the CUDA plan also runs on the device: the fewest moduli
// whose bound is within `target`, and that bound. One explicit fma, so host and device round alike.
IK_HD void native_count(double spread_a, double spread_b, double target, const NativeBits& bits, int& moduli,
                        double& bound) {
  constexpr double u = 0x1p-53;
  for (int c = 2; c <= kGemmMaxModuli; ++c) {
    if (bits.a[c] == 0) continue;
    // Rounded to the nearest integer, each element is off by at most half of 2^-bits (its line's units).
    const double ea = ::ldexp(spread_a, -bits.a[c] - 1), eb = ::ldexp(spread_b, -bits.b[c] - 1);
    moduli = c;
    bound = ::fma(ea, eb, ea + eb) + u;
    if (bound <= target) return;
  }
}

// The largest ρ² over the lines holding only finite values and at least one nonzero (1 if none).
double max_spread_squared_cpu(const StridedLines& x);
#if IRONKERNELS_WITH_CUDA
// The same for two sets of lines on a CUDA device (op(A)'s rows, op(B)'s columns), on `stream`,
// waiting for it.
std::pair<double, double> max_spread_squared_cuda(const StridedLines& a, const StridedLines& b, Device device,
                                                  Stream stream);
#endif

}  // namespace ironkernels::detail
