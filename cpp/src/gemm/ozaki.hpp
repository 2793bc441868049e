#pragma once
// The per-element steps of the Ozaki scheme II that the CPU reference and the CUDA kernels share,
// compiled for both, so the two backends agree bit for bit by construction: every step is exact
// (integer arithmetic, exact floating-point operations) except the one rounding of the result.
// No expression here may be contracted into an FMA differently on host and device: products that
// feed a sum are either exact or explicit fma() calls.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <tuple>
#include <utility>

#include "gemm/wide_uint.hpp"

#if defined(__CUDACC__)
#define IK_HD __host__ __device__ __forceinline__
#else
#define IK_HD inline
#endif
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

/// |x| < 2^exponent_bound(x) for finite nonzero x (ilogb works for subnormals too; on the GPU a normal
/// x reads it from its exponent field).
IK_HD int exponent_bound(double x) {
#if defined(__CUDA_ARCH__)
  const int biased = (__double2hiint(x) >> 20) & 0x7ff;  // 2^(biased - 1023) <= |x| < 2^(biased - 1022)
  if (biased != 0) return biased - 1022;
#endif
  return ::ilogb(x) + 1;
}

/// x·2^n rounded once, as ldexp(x, n): where 2^n is a normal double, one multiplication by it (also
/// correctly rounded, so host and device agree), which on the GPU is a few instructions against
/// ldexp's tens.
IK_HD double scale_by_pow2(double x, int n) {
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
  IK_HD void raise_to(int e) {  // the same sum against 2^max(e, exponent)
    if (e <= exponent) return;
    if (exponent != kNoExponent) sum = scale_by_pow2(sum, 2 * (exponent - e));
    exponent = e;
  }
  IK_HD void add_value(double v) {  // v finite and nonzero
    raise_to(exponent_bound(v));
    const double scaled = scale_by_pow2(v, -exponent);
    sum = ::fma(scaled, scaled, sum);
  }
  IK_HD void add(const ScaledSum& o) {
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

/// The power of two a line is scaled by so that it keeps `bits` bits below its largest element.
IK_HD int line_shift(int exponent, int bits) { return exponent == kNoExponent ? 0 : bits - exponent; }

/// The largest s with largest·2^s <= cap (largest > 0 finite, cap a positive integer-valued double):
/// the line's scaled elements then round to integers of magnitude at most cap. largest·2^s lies in
/// [cap/4, 2·cap), so the comparison is exact.
IK_HD int fitted_shift(double largest, double cap) {
  const int s = exponent_bound(cap) - exponent_bound(largest);
  return scale_by_pow2(largest, s) > cap ? s - 1 : s;
}
/// Bits a line whose largest magnitude is `largest` keeps below its exponent bound under "fast"
/// scaling's cap (fast_bits for an all-zero line, whose shift is 0 whatever its bits).
IK_HD int fitted_bits(double largest, double cap, int fast_bits) {
  return largest == 0.0 ? fast_bits : fitted_shift(largest, cap) + exponent_bound(largest);
}
/// The mantissa of a positive finite x, in [1, 2).
IK_HD double mantissa(double x) { return scale_by_pow2(x, 1 - exponent_bound(x)); }

/// Small-integer upper bound of |x| relative to its line's exponent bound e: ceil(|x|·2^(6-e)) in
/// [0, 64] (6 = kMagnitudeBits), at least 1 for any nonzero x (also where the scaled value underflows).
constexpr int kMagnitudeBits = 6;
IK_HD std::int32_t magnitude_bound(double x, int e) {
  if (x == 0.0 || !finite(x)) return 0;
  const double v = ::ceil(scale_by_pow2(::fabs(x), kMagnitudeBits - e));
  return v < 1.0 ? 1 : static_cast<std::int32_t>(v);
}

/// The scaled element rounded to the nearest integer (ties to even), an integer-valued double: off by
/// at most 1/2, where truncation would be off by up to 1 (the method's only error, halved at no cost).
/// For |v|·2^shift < 2^bits, |q| <= 2^bits (<= 2^62); 0 for Inf/NaN.
IK_HD double scaled_integer(double v, int shift) { return finite(v) ? ::rint(scale_by_pow2(v, shift)) : 0.0; }

/// 1.5 · 2^52: an integer |x| < 2^51 added to it is exact and sits in the low mantissa bits, so the
/// low 32 bits of the sum are x mod 2^32 (2^51 is a multiple of 2^32).
constexpr double kRoundToInteger = 6755399441055744.0;
IK_HD std::uint32_t low_word(double biased) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__double2loint(biased));
#else
  std::uint64_t bits;
  static_assert(sizeof bits == sizeof biased);
  std::memcpy(&bits, &biased, sizeof bits);
  return static_cast<std::uint32_t>(bits);
#endif
}

/// An integer-valued |q| <= 2^62 as q = hi·2^32 + lo with 0 <= lo < 2^32 (both exact doubles): the
/// residues of every modulus then come from hi·(2^32 mod p) + lo < 2^39 without another rounding.
/// hi_word and lo_word: hi mod 2^32 and lo as integers, for that sum's low word in integer arithmetic.
struct SplitInteger {
  double hi, lo;
  std::uint32_t hi_word, lo_word;
};
IK_HD SplitInteger split_integer(double q) {
  const double hi = ::floor(q * 0x1p-32);
  const double lo = ::fma(-hi, 0x1p32, q);  // exact: an integer below 2^32
  return {hi, lo, low_word(hi + kRoundToInteger), low_word(lo + kRoundToInteger)};
}

/// What residue_bits() and product_residue() need of one modulus p (odd, or 256), computed once on the
/// host: pow32 = 2^32 mod p (as a double and as an integer), inv_p = 1/p rounded, neg_p = -p mod 2^32;
/// bias, magic and shift as product_residue() says.
struct ResidueConstants {
  double pow32, inv_p;
  int p, shift;
  std::uint32_t pow32_word, neg_p, bias, magic;
};

/// An INT32 product of one K chunk of residues (each in [-128, 127]): |x| <= 2^16 · 128^2 = 2^30.
constexpr std::int64_t kMaxProduct = kChunkK * 128 * 128;

inline ResidueConstants residue_constants(int p) {
  if (p < 3 || p > 256 || (p % 2 == 0 && p != 256))
    throw std::logic_error("residue_constants: the modulus must be odd (3 ... 255) or 256");
  const std::uint32_t pow32 = static_cast<std::uint32_t>((std::uint64_t(1) << 32) % std::uint64_t(p));
  ResidueConstants c{static_cast<double>(pow32), 1.0 / p, p, 0, pow32, 0u - std::uint32_t(p), 0, 0};
  // bias: the smallest multiple of p >= kMaxProduct, so u = x + bias is in [0, 2^31 + p). magic =
  // ceil(2^(32+shift) / p) < 2^32 with the largest such shift, and it must divide exactly:
  // floor(u·magic / 2^(32+shift)) = floor(u/p) while u·(magic·p - 2^(32+shift)) < 2^(32+shift).
  const std::uint64_t bias = (std::uint64_t(kMaxProduct) + p - 1) / p * p, u_max = bias + std::uint64_t(kMaxProduct);
  c.bias = static_cast<std::uint32_t>(bias);
  for (int shift = 31; shift >= 0; --shift) {
    const unsigned __int128 two = static_cast<unsigned __int128>(1) << (32 + shift);
    const unsigned __int128 magic = (two + p - 1) / p;
    if (magic >= (static_cast<unsigned __int128>(1) << 32) || u_max * (magic * p - two) >= two) continue;
    c.shift = shift, c.magic = static_cast<std::uint32_t>(magic);
    return c;
  }
  throw std::logic_error("residue_constants: no exact 32-bit reciprocal of the modulus");
}

/// An INT32 product x (|x| <= kMaxProduct) mod p, in [0, p), in four integer operations, with no
/// conversion and no correction: u = x + bias >= 0, q = floor(u·magic / 2^(32+shift)) = floor(u/p),
/// r = u - q·p.
IK_HD std::uint32_t product_residue(std::int32_t x, const ResidueConstants& c) {
  const std::uint32_t u = static_cast<std::uint32_t>(x) + c.bias;
#if defined(__CUDA_ARCH__)
  const std::uint32_t q = __umulhi(u, c.magic) >> c.shift;
#else
  const std::uint32_t q = static_cast<std::uint32_t>((std::uint64_t(u) * c.magic) >> 32) >> c.shift;
#endif
  return u - q * static_cast<std::uint32_t>(c.p);
}

/// Residue modulo p of q = hi·2^32 + lo in [-h, p-1-h], h = floor(p/2), in the low byte of the
/// result (as int8). x = hi·pow32 + lo is an exact integer, |x| < 2^39, and r = x - p·N with
/// N = round(x/p): for odd p, x/p = N + j/p with |j| <= h, at least 1/(2p) >= 2^-9 from a tie, and
/// x·inv_p is off by less than 2^-14, so fma(x, inv_p, 1.5·2^52) rounds it to N once and leaves
/// N mod 2^32 in its low word. For p = 256 (inv_p exact) a tie may round either way, r = ±128, the
/// same byte. x mod 2^32 = hi_word·pow32 + lo_word mod 2^32, so r mod 2^32 is two 32-bit
/// multiply-adds: two floating-point operations and two integer ones, no conversion. The residue is
/// unique, so host and device agree.
IK_HD std::uint32_t residue_bits(const SplitInteger& q, const ResidueConstants& c) {
  const double x = ::fma(q.hi, c.pow32, q.lo);
  const std::uint32_t n = low_word(::fma(x, c.inv_p, kRoundToInteger));
  return q.lo_word + q.hi_word * c.pow32_word + n * c.neg_p;
}
IK_HD int residue(const SplitInteger& q, const ResidueConstants& c) {
  return static_cast<std::int8_t>(residue_bits(q, c));
}

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
IK_HD double limbs_to_double_scaled(std::uint32_t (&X)[L], int e) {
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
IK_HD bool subtract_multiple(const std::uint32_t (&S)[L], const std::uint32_t (&P)[L], std::uint32_t q,
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
IK_HD double window_to_double(std::uint64_t window, int scale, int e, bool negative) {
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
IK_HD double signed_limbs_to_double_fast(const std::uint32_t (&S)[L], const std::uint32_t (&P)[L], std::uint32_t q,
                                         int e) {
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
IK_HD double int128_to_double_fast(std::int64_t hi, std::uint64_t lo, int e) {
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
IK_HD void crt_mixed_sums(const CrtMixed& c, int count, const Residue& residue, double (&H)[N], double (&B)[N],
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
IK_HD double crt_mixed_finish(const CrtMixed& c, double H, double B, std::uint64_t S_lo, int e) {
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
IK_HD double crt_mixed_to_double(const CrtMixed& c, int count, const Residue& residue, int e) {
  double H[1], B[1];
  std::uint64_t S_lo[1];
  crt_mixed_sums<COUNT>(c, count, [&](int t, int) { return residue(t); }, H, B, S_lo);
  return crt_mixed_finish(c, H[0], B[0], S_lo[0], e);
}

/// crt_to_double's general path: S in limbs, the quotient estimated and corrected.
template <int L, int COUNT = 0, class Residue>
IK_HD double crt_limbs_to_double(const CrtTable<L>& c, const Residue& residue, int e) {
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
IK_HD double crt_to_double(const CrtTable<L>& c, const Residue& residue, int e) {
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
IK_HD double crt_to_double(const CrtTable<L>& c, const std::uint8_t* r, std::int64_t stride, int e) {
  return crt_to_double<L, COUNT>(c, [=](int t) { return std::uint32_t(r[t * stride]); }, e);
}

/// The bits every row of op(A) / column of op(B) keeps at least under "fast" scaling, its caps, and
/// the exponent of the bound "accurate" scaling works against (`top`: Σ|A'||B'| <= 2^top < P/2).
/// "fast" scales each line by the largest power of two that leaves its largest magnitude at most
/// its side's cap (fitted_shift): cap_a = floor(2^bits_a·μ), cap_b = floor(2^bits_b·μ), μ in [1, 2)
/// (20 fractional bits) the largest with k·cap_a·cap_b < P/2. Rounded, every |A'| <= cap_a and |B'| <=
/// cap_b, so Σ_l |A'||B'| < P/2. A line keeps bits_a bits, or bits_a + 1 where its largest element's
/// mantissa is at most cap_a's: the part of P/2 that whole powers of two leave unused (up to ~2 bits
/// of the pair) goes to the lines it fits.
struct Budget {
  int top = 0, bits_a = 0, bits_b = 0;
  double cap_a = 0, cap_b = 0;
};

/// "accurate" scaling bounds Σ_l |a_il||b_lj| with one small INT8 product over groups of
/// kBoundGroup consecutive positions (the last one zero padded): Â_iG = max_{l∈G} Ā_il,
/// B̂_Gj = ceil(Σ_{l∈G} B̄_lj / kBoundGroup) (Ā = magnitude_bound(A), B̄ likewise, both <= 64), and
/// C̄_ij = Σ_G Â_iG·B̂_Gj <= 2^10·k (exact in INT32 for k <= 2^20). Then
/// Σ_l Ā_il·B̄_lj <= kBoundGroup·C̄_ij.
/// A row keeping α_i >= kMagnitudeBits = 6 bits has |A'_il| <= 2^(α_i - 6)·Ā_il: the scaled element is
/// at most 2^(α_i - 6)·Ā_il, an integer, so rounding it to the nearest integer cannot pass it. Row i and
/// column j may then keep α_i + β_j <= G_ij = top + 12 - log2(kBoundGroup) - ceil_log2(C̄_ij) bits and
/// still Σ|A'||B'| <= 2^top < P/2; G_ij >= top - ceil_log2(k), the "fast" budget. Where fast keeps
/// fewer than kMagnitudeBits bits on a side (a handful of moduli for a long k), G_ij is fast's budget.
/// The grouping makes the product a quarter of a residue product; on the φ = 0.5 and φ = 2 families
/// it costs about one bit of a line's budget against the per-position bound
/// (docs/history/bench-notes.md, gemm sections).
constexpr int kBoundGroupLog2 = 2, kBoundGroup = 1 << kBoundGroupLog2;
IK_HD std::uint32_t bound_group_max(const std::uint32_t (&v)[kBoundGroup]) {
  std::uint32_t r = v[0];
  for (int e = 1; e < kBoundGroup; ++e) r = r > v[e] ? r : v[e];
  return r;
}
IK_HD std::uint32_t bound_group_mean(const std::uint32_t (&v)[kBoundGroup]) {
  std::uint32_t r = 0;
  for (int e = 0; e < kBoundGroup; ++e) r += v[e];
  return (r + kBoundGroup - 1) >> kBoundGroupLog2;
}
/// Whether G_ij is fast's budget whatever C̄_ij (a side keeps fewer than kMagnitudeBits bits).
IK_HD bool flat_pair_budget(const Budget& b) { return b.bits_a < kMagnitudeBits || b.bits_b < kMagnitudeBits; }
IK_HD int accurate_pair_budget(const Budget& b, std::int64_t bound) {
  if (flat_pair_budget(b)) return b.bits_a + b.bits_b;
  return b.top + 2 * kMagnitudeBits - kBoundGroupLog2 - ceil_log2(bound);
}
/// A line's bits under accurate or norm scaling: its fast bits (`fitted`), raised to what the bound
/// allows it (`allowed`) where that is more (at most kMaxBits). Accurate: a pair of lines neither of
/// which is raised is within the fast caps; any other pair keeps α_i + β_j <= G_ij: a column takes
/// half of its least slack G_ij - f_i - f_j over the rows, a row what G_ij leaves beside every
/// column's bits.
IK_HD int raised_line_bits(int fitted, int allowed) {
  return allowed > fitted ? (allowed < kMaxBits ? allowed : (fitted > kMaxBits ? fitted : kMaxBits)) : fitted;
}

/// "norm" scaling, from Cauchy–Schwarz: Σ_l |A'_il||B'_lj| <= ‖A'_i‖₂‖B'_j‖₂, so rows whose rounded
/// 2-norms stay within √k·cap_a and columns within √k·cap_b keep every |C'_ij| <= k·cap_a·cap_b < P/2.
/// A line of fast's bits meets it (‖A'_i‖₂ <= √nnz·cap_a); a line keeps the most bits α with
/// 2^α·‖a‖₂/2^E + √nnz/2 <= √k·cap (rounding moves each element by at most 1/2), never fewer than
/// fast's (`fitted`). `sum` is the line's ScaledSum in the canonical order, within (k + 1)·u of
/// Σ (x·2^-E)² (every term positive; k <= 2^20), so ‖a‖₂ <= 2^E·√sum·(1 + 2^-30); the other
/// roundings (a few units in the last place each) are inside the 2^-50 margins.
IK_HD int norm_line_bits(double sum, std::int64_t nonzeros, double cap, std::int64_t k, int fitted) {
  if (nonzeros == 0) return fitted;
  const double norm = ::sqrt(sum) * (1.0 + 0x1p-30);
  // One explicit fma: nvcc would contract the difference of two products into one otherwise.
  const double room = ::fma(::sqrt(double(k)) * cap, 1.0 - 0x1p-50, -(::sqrt(double(nonzeros)) * (0.5 + 0x1p-50)));
  if (!(room > 0.0)) return fitted;
  return raised_line_bits(fitted, exponent_bound(room / norm * (1.0 - 0x1p-50)) - 1);  // 2^α <= the ratio
}

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

/// (host) The budget of P's moduli at inner dimension k.
inline Budget budget(const CrtConstants& c, std::int64_t k) {
  // With |A'| <= 2^ba and |B'| <= 2^bb, Σ_l |A'||B'| <= k·2^(ba+bb) <= 2^(bitlen(P)-2) < P/2 (P, a
  // product of at least two coprime moduli, is no power of two: P > 2^(bitlen(P)-1)): μ = 1 fits.
  Budget b;
  const std::int64_t k1 = k > 1 ? k : 1;
  b.top = c.P.bit_length() - 2;
  const int total = b.top - ceil_log2(k1);
  b.bits_a = total / 2 < kMaxBits ? total / 2 : kMaxBits;
  b.bits_b = total - total / 2 < kMaxBits ? total - total / 2 : kMaxBits;
  if (total < 2) {  // the caller raises: no bits left
    b.bits_a = b.bits_b = 0;
    return b;
  }
  auto caps = [&](double mu) {
    return std::pair{std::floor(std::ldexp(mu, b.bits_a)), std::floor(std::ldexp(mu, b.bits_b))};
  };
  auto fits = [&](double mu) {  // 2k·cap_a·cap_b < P, exactly
    const auto [ca, cb] = caps(mu);
    return WideUint::from(std::uint64_t(ca)).times_small(std::uint64_t(cb)).times_small(2 * std::uint64_t(k1)) < c.P;
  };
  double mu = 1.0;
  if (b.bits_a < kMaxBits && b.bits_b < kMaxBits) {  // at kMaxBits, |A'| <= 2^62 is the limit
    // From an estimate a little above the largest μ that fits (room is in [1, 4)), down to it.
    const double room = c.P.approx() / std::ldexp(2.0 * double(k1), b.bits_a + b.bits_b);
    mu = std::min(std::floor(std::sqrt(room) * 0x1p20) + 2.0, 0x1p21 - 1.0) * 0x1p-20;
    while (mu > 1.0 && !fits(mu)) mu -= 0x1p-20;
  }
  std::tie(b.cap_a, b.cap_b) = caps(mu);
  return b;
}

}  // namespace ironkernels::detail::ozaki
