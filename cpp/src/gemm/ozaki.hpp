#pragma once
// The per-element steps of the Ozaki scheme II that the CPU reference and the CUDA kernels share,
// compiled for both, so the two backends agree bit for bit by construction: every step is exact
// (integer arithmetic, exact floating-point operations) except the one rounding of the result.
// No expression here may be contracted into an FMA differently on host and device: products that
// feed a sum are either exact or explicit fma() calls.
#include <cmath>
#include <cstdint>
#include <type_traits>

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

/// Smallest b >= 0 with 2^b >= k (0 for k <= 1).
IK_HD int ceil_log2(std::int64_t k) {
  if (k <= 1) return 0;
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(k - 1);
#else
  return 64 - __builtin_clzll(static_cast<unsigned long long>(k - 1));
#endif
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
/// fma(-p, n, q) is exact because its result is a small integer; the second leaves |r| <= p. The
/// second quotient is below 2^51, so it is rounded by adding and subtracting 1.5·2^52 (two adds
/// instead of a conversion-pipe rint on the GPU).
IK_HD std::int8_t residue(double q, int p, double inv_p) {
  constexpr double kRound = 6755399441055744.0;  // 1.5 · 2^52
  double r = ::fma(-static_cast<double>(p), ::rint(q * inv_p), q);
  const double n2 = (r * inv_p + kRound) - kRound;
  r = ::fma(-static_cast<double>(p), n2, r);
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

/// The same constants as L little-endian 32-bit limbs, enough for S = Σ r_t·M_t < count·256·P
/// (crt_limbs). 32-bit limbs because the sum is then one 32×32+64-bit multiply-add per limb and
/// modulus (IMAD.WIDE on the GPU), with the carries propagated once at the end.
template <int L>
struct CrtTable {
  int count = 0;
  std::uint32_t P[L] = {}, half_P[L] = {}, M[20][L] = {};
  double P_approx = 0.0;
};

/// The integer X in (-P/2, P/2] with X ≡ r_t (mod p_t) for every t (r_t at r[t * stride]), as sign and
/// magnitude: S = Σ r_t·M_t, then X = S - P·floor(S/P) with the quotient estimated in double and
/// corrected exactly (at most one step either way).
template <int L>
IK_HD WideUint crt_reconstruct(const CrtTable<L>& c, const std::uint8_t* r, std::int64_t stride, bool& negative) {
  std::uint64_t acc[L] = {};
  for (int t = 0; t < c.count; ++t) {
    const std::uint32_t rt = r[t * stride];
    for (int l = 0; l < L; ++l) acc[l] += std::uint64_t(c.M[t][l]) * rt;  // < 20·2^40: no overflow
  }
  std::uint32_t S[L];
  std::uint64_t carry = 0;
  for (int l = 0; l < L; ++l) {
    const std::uint64_t v = acc[l] + carry;
    S[l] = static_cast<std::uint32_t>(v);
    carry = v >> 32;
  }
  double approx = 0.0;
  for (int l = L - 1; l >= 0; --l) approx = ::ldexp(approx, 32) + static_cast<double>(S[l]);
  std::uint32_t q = static_cast<std::uint32_t>(approx / c.P_approx);
  std::uint32_t X[L];
  for (;;) {
    // X = S - q·P, and whether it went negative.
    std::uint64_t mul_carry = 0;
    std::int64_t borrow = 0;
    for (int l = 0; l < L; ++l) {
      const std::uint64_t qp = std::uint64_t(c.P[l]) * q + mul_carry;
      mul_carry = qp >> 32;
      const std::int64_t d = std::int64_t(S[l]) - std::int64_t(static_cast<std::uint32_t>(qp)) + borrow;
      X[l] = static_cast<std::uint32_t>(d);
      borrow = d < 0 ? -1 : 0;
    }
    if (borrow || mul_carry) {  // q·P > S
      --q;
      continue;
    }
    bool below_P = false;  // X < P?
    for (int l = L - 1; l >= 0; --l)
      if (X[l] != c.P[l]) {
        below_P = X[l] < c.P[l];
        break;
      }
    if (!below_P) {
      ++q;
      continue;
    }
    break;
  }
  bool above_half = false;  // X > P/2?
  for (int l = L - 1; l >= 0; --l)
    if (X[l] != c.half_P[l]) {
      above_half = X[l] > c.half_P[l];
      break;
    }
  negative = above_half;
  if (negative) {  // magnitude P - X
    std::int64_t borrow = 0;
    for (int l = 0; l < L; ++l) {
      const std::int64_t d = std::int64_t(c.P[l]) - std::int64_t(X[l]) + borrow;
      X[l] = static_cast<std::uint32_t>(d);
      borrow = d < 0 ? -1 : 0;
    }
  }
  WideUint out;
  for (int l = 0; l < L; ++l) out.limb[l / 2] |= std::uint64_t(X[l]) << (32 * (l % 2));
  return out;
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

/// 32-bit limbs that hold S = Σ r_t·M_t < count·256·P: 4 for up to 14 moduli, 6 for 20.
inline int crt_limbs(const CrtConstants& c) { return (c.P.bit_length() + 13 + 31) / 32; }

template <int L>
CrtTable<L> crt_table(const CrtConstants& c) {
  CrtTable<L> t;
  t.count = c.count;
  t.P_approx = c.P_approx;
  auto split = [](const WideUint& w, std::uint32_t* out) {
    for (int l = 0; l < L; ++l) out[l] = static_cast<std::uint32_t>(w.limb[l / 2] >> (32 * (l % 2)));
  };
  split(c.P, t.P);
  split(c.half_P, t.half_P);
  for (int i = 0; i < c.count; ++i) split(c.M[i], t.M[i]);
  return t;
}

/// Calls fn(std::integral_constant<int, L>{}) with the limb count these constants need.
template <class Fn>
decltype(auto) with_crt_limbs(const CrtConstants& c, Fn&& fn) {
  switch (crt_limbs(c)) {
    case 1: case 2: case 3: return fn(std::integral_constant<int, 3>{});
    case 4: return fn(std::integral_constant<int, 4>{});
    case 5: return fn(std::integral_constant<int, 5>{});
    default: return fn(std::integral_constant<int, 6>{});
  }
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
