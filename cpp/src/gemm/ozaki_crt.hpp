#pragma once
// The Chinese remainder reconstruction: the moduli's constants, the exact sum of residues times
// them, and the one rounding of the result to float64 (mixed digits up to 16 moduli, limbs beyond).
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "gemm/ozaki_numbers.hpp"
#include "gemm/ozaki_residues.hpp"
#include "gemm/wide_uint.hpp"

namespace ironkernels::detail::ozaki {

/// Constants of the reconstruction: P = Π p_t, P/2 and M_t = (P/p_t)·((P/p_t)^-1 mod p_t) < P.
struct CrtConstants {
  int count = 0;
  WideUint P, half_P, M[20];
};

/// The same constants as L little-endian 32-bit limbs, enough for S = Σ r_t·M_t < count·256·P
/// (crt_limbs(count)). 32-bit limbs because the sum is then one 32×32+64-bit multiply-add per limb and
/// modulus (IMAD.WIDE on the GPU), with the carries propagated once at the end.
/// Mixed digits for P < 2^128 (up to 16 moduli of 8 bits): M_t = a_t·2^s + b_t with s = max(64,
/// bitlen(P) - 41), so a_t < 2^41 and H = Σ r_t·a_t < 16·2^8·2^41 sums exactly in float64; b_t only
/// approximately (B̃ ≈ Σ r_t·b_t); the low 64 bits of S = Σ r_t·M_t exactly in integers (m_lo).
struct CrtMixed {
  bool usable = false;  // P < 2^128
  int s = 0;
  double a[20] = {}, b[20] = {};  // a_t exact, b_t rounded
  std::uint64_t m_lo[20] = {};     // M_t mod 2^64
  double a_P = 0.0, b_P = 0.0;     // P = a_P·2^s + b_P, a_P exact, b_P rounded
  std::uint64_t P_lo = 0;          // P mod 2^64
  double two_s_inv_P = 0.0, inv_P = 0.0;  // 2^s / P and 1 / P, approximately
};

template <int L>
struct CrtTable {
  int count = 0;
  std::uint32_t P[L] = {}, half_P[L] = {}, M[20][L] = {};
  double inv_P = 0.0;  // 1 / P, approximately (the quotient estimate is corrected exactly)
  CrtMixed mixed;
};

/// value · 2^-e rounded to the nearest float64 (ties to even), subnormals and overflow included, for
/// a value held in L little-endian 32-bit limbs. Every array index is a compile-time constant once
/// the loops unroll, so on the GPU the limbs stay in registers: the value is first normalised
/// (whole limbs, then bits) so that its top 64 bits sit in the two highest limbs.
template <int L>
IRONKERNELS_HD double limbs_to_double_scaled(std::uint32_t (&X)[L], int e) {
  static_assert(L >= 3, "two limbs of window plus the sticky rest");
  int zero_limbs = 0;
  IK_UNROLL
  for (int it = 0; it < L - 1; ++it)
    if (X[L - 1] == 0) {
      IK_UNROLL
      for (int l = L - 1; l > 0; --l) X[l] = X[l - 1];
      X[0] = 0;
      ++zero_limbs;
    }
  if (X[L - 1] == 0) return 0.0;
#if defined(__CUDA_ARCH__)
  const int lz = __clz(X[L - 1]);
#else
  const int lz = __builtin_clz(X[L - 1]);
#endif
  if (lz) {
    IK_UNROLL
    for (int l = L - 1; l > 0; --l) X[l] = (X[l] << lz) | (X[l - 1] >> (32 - lz));
    X[0] <<= lz;
  }
  const int len = 32 * (L - zero_limbs) - lz;  // bit length of the value
  const std::uint64_t top = (std::uint64_t(X[L - 1]) << 32) | X[L - 2];  // value = top · 2^(len-64) + rest
  bool rest = false;
  IK_UNROLL
  for (int l = 0; l < L - 2; ++l) rest = rest || X[l] != 0;
  // Bits the result keeps: 53, fewer where it is subnormal.
  int keep = 53;
  const int lowest = len - 1 - e - 52;  // exponent of the last kept bit for a normal result
  if (lowest < -1074) keep = 53 - (-1074 - lowest);
  if (keep < 0) return 0.0;  // below half the smallest subnormal
  const int drop = len - keep;
  if (drop <= 0) return ::ldexp(static_cast<double>(top >> (64 - len)), -e);  // exact: len <= 53
  std::uint64_t mant = keep > 0 ? top >> (64 - keep) : 0;
  const bool half = (top >> (63 - keep)) & 1;
  const bool sticky = (keep < 63 && (top << (keep + 1)) != 0) || rest;
  if (half && (sticky || (mant & 1))) ++mant;
  return ::ldexp(static_cast<double>(mant), drop - e);  // exact, or ±inf on overflow
}

/// X = S - q·P over L limbs, wrapping modulo 2^(32L) (two's complement); true if q·P > S.
template <int L>
IRONKERNELS_HD bool subtract_multiple(const std::uint32_t (&S)[L], const std::uint32_t (&P)[L], std::uint32_t q,
                                      std::uint32_t (&X)[L]) {
  std::uint64_t mul_carry = 0;
  std::int64_t borrow = 0;
  IK_UNROLL
  for (int l = 0; l < L; ++l) {
    const std::uint64_t qp = std::uint64_t(P[l]) * q + mul_carry;
    mul_carry = qp >> 32;
    const std::int64_t d = std::int64_t(S[l]) - std::int64_t(static_cast<std::uint32_t>(qp)) + borrow;
    X[l] = static_cast<std::uint32_t>(d);
    borrow = d < 0 ? -1 : 0;
  }
  return borrow || mul_carry;
}

/// ±window·2^(scale - e) rounded to the nearest float64, where window's lowest bit records any bit of
/// the value below it (round to odd: 64 bits are more than 53 + 2, so the one correctly rounded
/// conversion rounds as the whole value would), or NaN where the result would be subnormal or
/// overflow; the power-of-two scaling after the conversion is exact in the normal range.
IRONKERNELS_HD double window_to_double(std::uint64_t window, int scale, int e, bool negative) {
  const int s = scale - e;
  if (s < -1022 || s > 959) return NAN;  // 2^s normal, and window · 2^s below 2^1023 and normal
#if defined(__CUDA_ARCH__)
  const double magnitude = __ull2double_rn(window) * __hiloint2double((s + 1023) << 20, 0);
#else
  const double magnitude = static_cast<double>(window) * std::ldexp(1.0, s);
#endif
  return negative ? -magnitude : magnitude;
}

/// (Y = S - q·P)·2^-e rounded to the nearest float64 for |Y| < 2^(32L - 2), or NaN where the result
/// would be subnormal or overflow (the caller then takes the general path): Y's magnitude cut to a
/// round-to-odd 64-bit window (window_to_double).
template <int L>
IRONKERNELS_HD double signed_limbs_to_double_fast(const std::uint32_t (&S)[L], const std::uint32_t (&P)[L],
                                                  std::uint32_t q, int e) {
  std::uint32_t Y[L];  // S - q·P in two's complement
  subtract_multiple(S, P, q, Y);
  const bool negative = Y[L - 1] >> 31;
  const std::uint32_t flip = negative ? 0xffffffffu : 0u;
  std::uint32_t M[L];  // |Y|
  std::uint64_t carry = negative ? 1 : 0;
  IK_UNROLL
  for (int l = 0; l < L; ++l) {
    const std::uint64_t v = std::uint64_t(Y[l] ^ flip) + carry;
    M[l] = static_cast<std::uint32_t>(v);
    carry = v >> 32;
  }
  int top = 1;  // highest nonzero limb, at least 1
  IK_UNROLL
  for (int l = 2; l < L; ++l)
    if (M[l] != 0) top = l;
  std::uint64_t window;
  int scale;  // |Y| ≈ window · 2^scale
  if (top == 1) {
    window = (std::uint64_t(M[1]) << 32) | M[0];  // the whole value
    scale = 0;
  } else {
    std::uint32_t a2 = 0, a1 = 0, a0 = 0;  // limbs top, top - 1, top - 2
    bool sticky = false;                   // any bit below limb top - 2
    IK_UNROLL
    for (int l = 2; l < L; ++l)
      if (l == top) a2 = M[l], a1 = M[l - 1], a0 = M[l - 2];
    IK_UNROLL
    for (int l = 0; l + 3 < L; ++l) sticky = sticky || (l + 2 < top && M[l] != 0);
#if defined(__CUDA_ARCH__)
    const int lz = __clz(a2);
    const std::uint32_t hi = __funnelshift_l(a1, a2, lz), lo = __funnelshift_l(a0, a1, lz);
#else
    const int lz = __builtin_clz(a2);
    const std::uint32_t hi = lz ? (a2 << lz) | (a1 >> (32 - lz)) : a2;
    const std::uint32_t lo = lz ? (a1 << lz) | (a0 >> (32 - lz)) : a1;
#endif
    sticky = sticky || (lz ? a0 << lz : a0) != 0;
    window = ((std::uint64_t(hi) << 32) | lo) | (sticky ? 1u : 0u);
    scale = 32 * (top - 1) - lz;
  }
  return window_to_double(window, scale, e, negative);
}

/// (hi·2^64 + lo)·2^-e rounded to the nearest float64 for a signed 128-bit value (hi signed), or NaN
/// where the result would be subnormal or overflow: the magnitude's top 64 bits as a round-to-odd
/// window (window_to_double).
IRONKERNELS_HD double int128_to_double_fast(std::int64_t hi, std::uint64_t lo, int e) {
  const bool negative = hi < 0;
  std::uint64_t mh = static_cast<std::uint64_t>(hi), ml = lo;
  if (negative) {  // two's complement negation of the 128-bit value
    ml = ~lo + 1;
    mh = ~mh + (lo == 0 ? 1 : 0);
  }
  std::uint64_t window = ml;
  int scale = 0;
  if (mh != 0) {
#if defined(__CUDA_ARCH__)
    const int lz = __clzll(static_cast<long long>(mh));
#else
    const int lz = __builtin_clzll(mh);
#endif
    window = lz ? (mh << lz) | (ml >> (64 - lz)) : mh;
    window |= (ml << lz) != 0 ? 1u : 0u;  // sticky: the bits of ml below the window
    scale = 64 - lz;
  }
  return window_to_double(window, scale, e, negative);
}

/// The CRT in mixed digits (CrtMixed), or NaN where it cannot decide (S/P within 0.001 of an odd
/// multiple of 1/2) or the result is subnormal or overflows; the caller then takes the general path.
/// With S = H·2^s + B and q = round(S/P) from H and B̃ (error below 2^-38), X = S - q·P is
/// (H - q·a_P)·2^s + Z, Z = B - q·b_P: the first term exact in one fma (|H - q·a_P| < 2^41), Z known
/// within 2^52 from B̃ and exactly mod 2^64 from the integer sums, hence exactly, as
/// Z mod 2^64 + 2^64·rint((Z̃ - Z mod 2^64)·2^-64). Then X = hi·2^64 + lo with |hi| < 2^63.
/// The sums H, B̃ and S mod 2^64 of N elements at once (residue(t, n): element n's r_t), so that the
/// GPU reads each modulus's constants once for all N; every element sees the same operations in the
/// same order as alone.
template <int COUNT, int N, class Residue>
IRONKERNELS_HD void crt_mixed_sums(const CrtMixed& c, int count, const Residue& residue, double (&H)[N], double (&B)[N],
                                   std::uint64_t (&S_lo)[N]) {
  IK_UNROLL
  for (int n = 0; n < N; ++n) H[n] = 0.0, B[n] = 0.0, S_lo[n] = 0;
  IK_UNROLL
  for (int t = 0; t < (COUNT > 0 ? COUNT : count); ++t) {
    const double a = c.a[t], b = c.b[t];
    const std::uint64_t m = c.m_lo[t];
    IK_UNROLL
    for (int n = 0; n < N; ++n) {
      const std::uint32_t rt = residue(t, n);
#if defined(__CUDA_ARCH__)
      const double r = __hiloint2double(0x43300000, int(rt)) - 0x1p52;  // exact, no conversion unit
#else
      const double r = static_cast<double>(rt);
#endif
      H[n] = ::fma(r, a, H[n]);  // exact: every partial sum is an integer below 2^53
      B[n] = ::fma(r, b, B[n]);
      S_lo[n] += std::uint64_t(rt) * m;  // mod 2^64
    }
  }
}

/// The product from the sums, scaled by 2^-e and rounded once, or NaN (near ±P/2, subnormal or overflow).
IRONKERNELS_HD double crt_mixed_finish(const CrtMixed& c, double H, double B, std::uint64_t S_lo, int e) {
  const double ratio = ::fma(H, c.two_s_inv_P, B * c.inv_P);
  const double q = ::floor(ratio + 0.5);
  if (!(::fabs(ratio - q) < 0.499)) return NAN;
  const double high = ::fma(-q, c.a_P, H);  // exact
  const double z = ::fma(-q, c.b_P, B);     // Z within 2^52
  const std::uint64_t z_lo = S_lo - static_cast<std::uint64_t>(q) * c.P_lo;  // Z mod 2^64
  const double z_hi = ::rint((z - static_cast<double>(z_lo)) * 0x1p-64);
  const std::int64_t hi =
      static_cast<std::int64_t>(high) * (std::int64_t(1) << (c.s - 64)) + static_cast<std::int64_t>(z_hi);
  return int128_to_double_fast(hi, z_lo, e);
}

template <int COUNT, class Residue>
IRONKERNELS_HD double crt_mixed_to_double(const CrtMixed& c, int count, const Residue& residue, int e) {
  double H[1], B[1];
  std::uint64_t S_lo[1];
  crt_mixed_sums<COUNT>(c, count, [&](int t, int) { return residue(t); }, H, B, S_lo);
  return crt_mixed_finish(c, H[0], B[0], S_lo[0], e);
}

/// crt_to_double's general path: S in limbs, the quotient estimated and corrected.
template <int L, int COUNT = 0, class Residue>
IRONKERNELS_HD double crt_limbs_to_double(const CrtTable<L>& c, const Residue& residue, int e) {
  const int count = COUNT > 0 ? COUNT : c.count;
  std::uint64_t acc[L] = {};
  IK_UNROLL
  for (int t = 0; t < count; ++t) {
    const std::uint32_t rt = residue(t);
    IK_UNROLL
    for (int l = 0; l < L; ++l) acc[l] += std::uint64_t(c.M[t][l]) * rt;  // < 20·2^40: no overflow
  }
  std::uint32_t S[L];
  std::uint64_t carry = 0;
  IK_UNROLL
  for (int l = 0; l < L; ++l) {
    const std::uint64_t v = acc[l] + carry;
    S[l] = static_cast<std::uint32_t>(v);
    carry = v >> 32;
  }
  double approx = 0.0;
  IK_UNROLL
  for (int l = L - 1; l >= 0; --l) approx = approx * 0x1p32 + static_cast<double>(S[l]);
  // ratio = S/P within 2^-36 (S/P < 20·2^8 = 2^13, relative error below 2^-49). Fast path (when
  // the mixed-digit one is not usable): when ratio is at least 0.001 from an odd multiple of 1/2,
  // Y = S - round(ratio)·P lies in (-P/2, P/2) and is X, with no exact comparison against P or P/2.
  const double ratio = approx * c.inv_P;
  const double q_near = ::floor(ratio + 0.5);
  if (!c.mixed.usable && ::fabs(ratio - q_near) < 0.499) {
    const double magnitude = signed_limbs_to_double_fast<L>(S, c.P, static_cast<std::uint32_t>(q_near), e);
    if (magnitude == magnitude) return magnitude;  // NaN: out of the fast path's exponent range
  }
  std::uint32_t q = static_cast<std::uint32_t>(ratio);
  std::uint32_t X[L];
  for (;;) {
    if (subtract_multiple(S, c.P, q, X)) {  // q·P > S
      --q;
      continue;
    }
    int order = 0;  // sign of X - P
    IK_UNROLL
    for (int l = L - 1; l >= 0; --l)
      if (order == 0 && X[l] != c.P[l]) order = X[l] < c.P[l] ? -1 : 1;
    if (order >= 0) {
      ++q;
      continue;
    }
    break;
  }
  int half_order = 0;  // sign of X - P/2
  IK_UNROLL
  for (int l = L - 1; l >= 0; --l)
    if (half_order == 0 && X[l] != c.half_P[l]) half_order = X[l] < c.half_P[l] ? -1 : 1;
  const bool negative = half_order > 0;
  if (negative) {  // magnitude P - X
    std::int64_t borrow = 0;
    IK_UNROLL
    for (int l = 0; l < L; ++l) {
      const std::int64_t d = std::int64_t(c.P[l]) - std::int64_t(X[l]) + borrow;
      X[l] = static_cast<std::uint32_t>(d);
      borrow = d < 0 ? -1 : 0;
    }
  }
  const double magnitude = limbs_to_double_scaled<L>(X, e);
  return negative ? -magnitude : magnitude;
}

/// The product from its residues r_t = residue(t), scaled by 2^-e and rounded once: the
/// integer X in (-P/2, P/2] with X ≡ r_t (mod p_t) for every t comes from S = Σ r_t·M_t: for P < 2^128
/// by the mixed digits (crt_mixed_to_double), else or where those give NaN by crt_limbs_to_double. There,
/// unless S/P lies near an odd multiple of 1/2, X = S - round(S/P)·P and signed_limbs_to_double_fast rounds it;
/// otherwise (and for subnormal or overflowing results) X = S - P·floor(S/P), the quotient estimated
/// in double and corrected exactly (at most one step either way), goes to limbs_to_double_scaled.
/// COUNT > 0: the number of moduli as a compile-time constant (the GPU kernels: the loop unrolls and
/// every M_t limb becomes an immediate operand); 0: c.count at run time.
template <int L, int COUNT = 0, class Residue>
IRONKERNELS_HD double crt_to_double(const CrtTable<L>& c, const Residue& residue, int e) {
  if constexpr (COUNT <= 16) {  // P < 2^128 for up to 16 moduli (COUNT = 0: decided at run time)
    if (COUNT > 0 || c.mixed.usable) {
      const double fast = crt_mixed_to_double<COUNT>(c.mixed, COUNT > 0 ? COUNT : c.count, residue, e);
      if (fast == fast) return fast;  // NaN: near ±P/2, subnormal or overflow
    }
  }
  return crt_limbs_to_double<L, COUNT>(c, residue, e);
}

/// The same with the residues at r[t * stride].
template <int L, int COUNT = 0>
IRONKERNELS_HD double crt_to_double(const CrtTable<L>& c, const std::uint8_t* r, std::int64_t stride, int e) {
  return crt_to_double<L, COUNT>(c, [=](int t) { return std::uint32_t(r[t * stride]); }, e);
}

/// The final update of one element of C (the same operations on both backends).
IRONKERNELS_HD double finish(double alpha, double product, double beta, double c) {
  return beta == 0.0 ? alpha * product : ::fma(alpha, product, beta * c);
}

/// (host) P, P/2 and the M_t of the first `count` moduli.
inline CrtConstants crt_constants(const int* moduli, int count) {
  CrtConstants c;
  c.count = count;
  c.P = WideUint::from(1);
  for (int t = 0; t < count; ++t) c.P.mul_add_small(static_cast<std::uint32_t>(moduli[t]), 0);
  c.half_P = c.P.shifted_right(1);
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

/// 32-bit limbs that hold S = Σ r_t·M_t < count·256·P < 2^(8·count + 13) (every p_t ≤ 2^8): 4 for up
/// to 14 moduli, 5 for 15-18, 6 for 19-20; at least 3 (limbs_to_double_scaled's window).
constexpr int crt_limbs(int count) { return (8 * count + 13 + 31) / 32 < 3 ? 3 : (8 * count + 13 + 31) / 32; }

/// Calls fn(std::integral_constant<int, C>{}) for the moduli count C = count (2 … kGemmMaxModuli).
template <int C = 2, class Fn>
decltype(auto) with_moduli_count(int count, Fn&& fn) {
  if constexpr (C >= 20) {
    return fn(std::integral_constant<int, 20>{});
  } else {
    if (count == C) return fn(std::integral_constant<int, C>{});
    return with_moduli_count<C + 1>(count, std::forward<Fn>(fn));
  }
}

template <int L>
CrtTable<L> crt_table(const CrtConstants& c) {
  CrtTable<L> t;
  t.count = c.count;
  t.inv_P = 1.0 / c.P.approx();
  auto split = [](const WideUint& w, std::uint32_t* out) {
    for (int l = 0; l < L; ++l) out[l] = static_cast<std::uint32_t>(w.limb[l / 2] >> (32 * (l % 2)));
  };
  split(c.P, t.P);
  split(c.half_P, t.half_P);
  for (int i = 0; i < c.count; ++i) split(c.M[i], t.M[i]);
  CrtMixed& m = t.mixed;
  m.usable = c.P.bit_length() <= 128;
  if (m.usable) {
    m.s = c.P.bit_length() - 41 > 64 ? c.P.bit_length() - 41 : 64;
    auto bits = [](const WideUint& w, int from, int to) {  // bits [from, to) of w, to - from <= 64
      std::uint64_t v = 0;
      for (int i = from; i < to; ++i) v |= ((w.limb[i / 64] >> (i % 64)) & 1) << (i - from);
      return v;
    };
    // Below 2^s: two 64-bit halves, each converted once (the sum need not be correctly rounded).
    auto low_part = [&](const WideUint& w) {
      return std::ldexp(static_cast<double>(bits(w, 64, m.s)), 64) + static_cast<double>(bits(w, 0, 64));
    };
    for (int i = 0; i < c.count; ++i) {
      m.a[i] = static_cast<double>(bits(c.M[i], m.s, 128));  // < 2^41: exact
      m.b[i] = low_part(c.M[i]);
      m.m_lo[i] = c.M[i].limb[0];
    }
    m.a_P = static_cast<double>(bits(c.P, m.s, 128));
    m.b_P = low_part(c.P);
    m.P_lo = c.P.limb[0];
    m.two_s_inv_P = std::ldexp(1.0, m.s) / c.P.approx();
    m.inv_P = 1.0 / c.P.approx();
  }
  return t;
}

}  // namespace ironkernels::detail::ozaki
