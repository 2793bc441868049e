#pragma once
// The per-element steps of the Ozaki scheme II that the CPU reference and the CUDA kernels share,
// compiled for both, so the two backends agree bit for bit by construction: every step is exact
// (integer arithmetic, exact floating-point operations) except the one rounding of the result.
// No expression here may be contracted into an FMA differently on host and device: products that
// feed a sum are either exact or explicit fma() calls.
#include <cmath>
#include <cstdint>

#include "gemm/wide_uint.hpp"

#if defined(__CUDACC__)
#define IK_HD __host__ __device__ __forceinline__
#else
#define IK_HD inline
#endif

namespace ironkernels::detail::ozaki {

constexpr int kNoExponent = -2147483647 - 1;  // exponent of an all-zero line
constexpr std::int64_t kChunkK = std::int64_t(1) << 16;  // INT32 dot products stay exact over 2^16 terms
constexpr int kMaxBits = 62;  // bits a scaled line keeps at most (|A'| < 2^62 fits int64 and double)

IK_HD bool finite(double x) {
#if defined(__CUDA_ARCH__)
  return isfinite(x);
#else
  return std::isfinite(x);
#endif
}

IK_HD int ceil_log2(std::int64_t k) {
  int b = 0;
  while ((std::int64_t(1) << b) < k) ++b;
  return b;
}

/// |x| < 2^exponent_bound(x) for finite nonzero x (ilogb works for subnormals too).
IK_HD int exponent_bound(double x) { return ::ilogb(x) + 1; }

/// The power of two a line is scaled by so that it keeps `bits` bits below its largest element.
IK_HD int line_shift(int exponent, int bits) { return exponent == kNoExponent ? 0 : bits - exponent; }

/// Small-integer upper bound of |x| relative to its line's exponent bound e: ceil(|x|·2^(6-e)) in
/// [0, 64], at least 1 for any nonzero x (also where the scaled value underflows).
IK_HD std::int32_t magnitude_bound(double x, int e) {
  if (x == 0.0 || !finite(x)) return 0;
  const double v = ::ceil(::ldexp(::fabs(x), 6 - e));
  return v < 1.0 ? 1 : static_cast<std::int32_t>(v);
}

/// The scaled, truncated element: an integer-valued double, |q| < 2^62 (0 for Inf/NaN).
IK_HD double scaled_integer(double v, int shift) { return finite(v) ? ::trunc(::ldexp(v, shift)) : 0.0; }

/// Residue of an integer-valued |q| < 2^62 modulo p in [-floor(p/2), ceil(p/2) - 1] (fits int8).
/// Two reduction steps with the rounded reciprocal: the first quotient is off by at most ~2^9, and
/// fma(-p, n, q) is exact because its result is a small integer; the second leaves |r| <= p.
IK_HD std::int8_t residue(double q, int p, double inv_p) {
  double r = ::fma(-static_cast<double>(p), ::rint(q * inv_p), q);
  r = ::fma(-static_cast<double>(p), ::rint(r * inv_p), r);
  int x = static_cast<int>(r);
  if (x < -(p / 2)) x += p;
  if (x > (p + 1) / 2 - 1) x -= p;
  return static_cast<std::int8_t>(x);
}

/// Constants of the reconstruction: P = Π p_t, P/2 and M_t = (P/p_t)·((P/p_t)^-1 mod p_t) < P.
struct CrtConstants {
  int count = 0;
  WideUint P, half_P, M[20];
  double P_approx = 0.0;
};

/// The integer X in (-P/2, P/2] with X ≡ r_t (mod p_t) for every t, as sign and magnitude:
/// S = Σ r_t·M_t < count·256·P, then X = S - P·floor(S/P) with the quotient estimated in double and
/// corrected exactly.
IK_HD WideUint crt_reconstruct(const CrtConstants& c, const std::uint8_t* r, std::int64_t stride, bool& negative) {
  WideUint S = WideUint::from(0);
  for (int t = 0; t < c.count; ++t) S.add_mul_small(c.M[t], r[t * stride]);
  std::uint64_t q = static_cast<std::uint64_t>(S.approx() / c.P_approx);
  WideUint X;
  for (;;) {  // at most one step either way
    const WideUint qP = c.P.times_small(q);
    if (S < qP) {
      --q;
      continue;
    }
    X = S - qP;
    if (!(X < c.P)) {
      ++q;
      continue;
    }
    break;
  }
  negative = c.half_P < X;
  return negative ? c.P - X : X;
}

/// "accurate" scaling: with Ā = magnitude_bound(A), B̄ likewise and C̄ = Ā·B̄ exact,
/// Σ_l |a_il||b_lj| <= 2^(-σ_i-τ_j)·C̄_ij (σ_i = 6 - e_i, τ_j = 6 - f_j), so row i and column j may keep
/// α_i + β_j <= G_ij = top + 12 - ceil_log2(C̄_ij) bits and still Σ|A'||B'| <= 2^top < P/2.
IK_HD int accurate_pair_budget(int top, std::int64_t bound) { return top + 12 - ceil_log2(bound); }

/// The final update of one element of C (the same operations on both backends).
IK_HD double finish(double alpha, double product, double beta, double c) {
  return beta == 0.0 ? alpha * product : ::fma(alpha, product, beta * c);
}

/// (host) P, P/2 and the M_t of the first `count` moduli.
inline CrtConstants crt_constants(const int* moduli, int count) {
  CrtConstants c;
  c.count = count;
  c.P = WideUint::from(1);
  for (int t = 0; t < count; ++t) c.P.mul_add_small(static_cast<std::uint32_t>(moduli[t]), 0);
  c.half_P = c.P.shifted_right(1);
  c.P_approx = c.P.approx();
  for (int t = 0; t < count; ++t) {
    const int p = moduli[t];
    WideUint others = WideUint::from(1);
    int others_mod_p = 1;
    for (int u = 0; u < count; ++u)
      if (u != t) {
        others.mul_add_small(static_cast<std::uint32_t>(moduli[u]), 0);
        others_mod_p = others_mod_p * (moduli[u] % p) % p;
      }
    int inverse = 1;
    while (others_mod_p * inverse % p != 1) ++inverse;
    c.M[t] = others.times_small(static_cast<std::uint64_t>(inverse));
  }
  return c;
}

/// The bits every row of op(A) / column of op(B) keeps under "fast" scaling, and the exponent of
/// the bound "accurate" scaling works against (`top`: Σ|A'||B'| <= 2^top <= P/2).
struct Budget {
  int top = 0, bits_a = 0, bits_b = 0;
};
inline Budget budget(const CrtConstants& c, std::int64_t k) {
  // With |A'| < 2^ba and |B'| < 2^bb, Σ_l |A'||B'| < k·2^(ba+bb) <= 2^(bitlen(P)-2) <= P/2.
  Budget b;
  b.top = c.P.bit_length() - 2;
  const int total = b.top - ceil_log2(k > 1 ? k : 1);
  b.bits_a = total / 2 < kMaxBits ? total / 2 : kMaxBits;
  b.bits_b = total - total / 2 < kMaxBits ? total - total / 2 : kMaxBits;
  if (total < 2) b.bits_a = b.bits_b = 0;  // the caller raises: no bits left
  return b;
}

}  // namespace ironkernels::detail::ozaki
