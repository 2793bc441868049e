#pragma once
// Exact floating-point building blocks of the Ozaki scheme II, compiled for host and device alike
// (IRONKERNELS_HD): exponent bounds, scaling by powers of two, and each line's sum of squares in the one order
// every backend adds it in.
#include <cmath>
#include <cstdint>

#include "core/host_device.hpp"
// Full unrolling in device code; the host compiler decides for itself (GCC has no bare "unroll").
#if defined(__CUDA_ARCH__)
#define IK_UNROLL _Pragma("unroll")
#else
#define IK_UNROLL
#endif

namespace ironkernels::detail::ozaki {

constexpr int kNoExponent = -2147483647 - 1;  // exponent of an all-zero line
constexpr std::int64_t kChunkK = std::int64_t(1) << 16;  // INT32 dot products stay exact over 2^16 terms
constexpr int kMaxBits = 62;  // bits a scaled line keeps at most (|A'| <= 2^62 fits int64 and double)

IRONKERNELS_HD bool finite(double x) {
#if defined(__CUDA_ARCH__)
  return isfinite(x);
#else
  return std::isfinite(x);
#endif
}

/// Smallest b >= 0 with 2^b >= k (0 for k <= 1).
IRONKERNELS_HD int ceil_log2(std::int64_t k) {
  if (k <= 1) return 0;
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(k - 1);
#else
  return 64 - __builtin_clzll(static_cast<unsigned long long>(k - 1));
#endif
}

/// |x| < 2^exponent_bound(x) for finite nonzero x (ilogb works for subnormals too; on the GPU a normal
/// x reads it from its exponent field).
IRONKERNELS_HD int exponent_bound(double x) {
#if defined(__CUDA_ARCH__)
  const int biased = (__double2hiint(x) >> 20) & 0x7ff;  // 2^(biased - 1023) <= |x| < 2^(biased - 1022)
  if (biased != 0) return biased - 1022;
#endif
  return ::ilogb(x) + 1;
}

/// x·2^n rounded once, as ldexp(x, n): where 2^n is a normal double, one multiplication by it (also
/// correctly rounded, so host and device agree), which on the GPU is a few instructions against
/// ldexp's tens.
IRONKERNELS_HD double scale_by_pow2(double x, int n) {
  if (n < -1022 || n > 1023) return ::ldexp(x, n);
#if defined(__CUDA_ARCH__)
  return x * __hiloint2double((n + 1023) << 20, 0);
#else
  return x * ::ldexp(1.0, n);
#endif
}

/// Σ (x·2^-e)² over a line's finite nonzero values, e the largest exponent bound seen so far (the sum
/// rescaled by a power of four when a larger one comes). Powers of two scale exactly and each square
/// is added by one explicit fma, so adding the same values in the same order gives the same double on
/// every backend; add() is commutative.
struct ScaledSum {
  double sum = 0.0;
  int exponent = kNoExponent;
  IRONKERNELS_HD void raise_to(int e) {  // the same sum against 2^max(e, exponent)
    if (e <= exponent) return;
    if (exponent != kNoExponent) sum = scale_by_pow2(sum, 2 * (exponent - e));
    exponent = e;
  }
  IRONKERNELS_HD void add_value(double v) {  // v finite and nonzero
    raise_to(exponent_bound(v));
    const double scaled = scale_by_pow2(v, -exponent);
    sum = ::fma(scaled, scaled, sum);
  }
  IRONKERNELS_HD void add(const ScaledSum& o) {
    if (o.exponent == kNoExponent) return;
    raise_to(o.exponent);
    sum += scale_by_pow2(o.sum, 2 * (o.exponent - exponent));
  }
};
/// The one order in which every backend sums a line (so that its norm, and what depends on it, is the
/// same bits whatever the backend and the matrix layout): chunks of kLineSumChunk positions in order;
/// within a chunk kLineSumLanes lanes, lane v adding positions v, v + 32, … in order, then combined
/// pairwise over the lane bits from the highest (lane v with lane v xor 16, then 8, 4, 2, 1: a
/// butterfly, which warp shuffles do in one step each); each chunk's sum added to the line's in order.
constexpr int kLineSumChunk = 1024, kLineSumLanes = 32;

}  // namespace ironkernels::detail::ozaki
