#pragma once
// How many bits each row of op(A) and column of op(B) keeps: the budget the moduli leave at k, and
// the fast, accurate and norm rules that spend it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <utility>

#include "gemm/ozaki_crt.hpp"
#include "gemm/ozaki_numbers.hpp"

namespace ironkernels::detail::ozaki {

/// The power of two a line is scaled by so that it keeps `bits` bits below its largest element.
IRONKERNELS_HD int line_shift(int exponent, int bits) { return exponent == kNoExponent ? 0 : bits - exponent; }

/// The largest s with largest·2^s <= cap (largest > 0 finite, cap a positive integer-valued double):
/// the line's scaled elements then round to integers of magnitude at most cap. largest·2^s lies in
/// [cap/4, 2·cap), so the comparison is exact.
IRONKERNELS_HD int fitted_shift(double largest, double cap) {
  const int s = exponent_bound(cap) - exponent_bound(largest);
  return scale_by_pow2(largest, s) > cap ? s - 1 : s;
}
/// Bits a line whose largest magnitude is `largest` keeps below its exponent bound under "fast"
/// scaling's cap (fast_bits for an all-zero line, whose shift is 0 whatever its bits).
IRONKERNELS_HD int fitted_bits(double largest, double cap, int fast_bits) {
  return largest == 0.0 ? fast_bits : fitted_shift(largest, cap) + exponent_bound(largest);
}
/// The mantissa of a positive finite x, in [1, 2).
IRONKERNELS_HD double mantissa(double x) { return scale_by_pow2(x, 1 - exponent_bound(x)); }

/// Small-integer upper bound of |x| relative to its line's exponent bound e: ceil(|x|·2^(6-e)) in
/// [0, 64] (6 = kMagnitudeBits), at least 1 for any nonzero x (also where the scaled value underflows).
constexpr int kMagnitudeBits = 6;
IRONKERNELS_HD std::int32_t magnitude_bound(double x, int e) {
  if (x == 0.0 || !finite(x)) return 0;
  const double v = ::ceil(scale_by_pow2(::fabs(x), kMagnitudeBits - e));
  return v < 1.0 ? 1 : static_cast<std::int32_t>(v);
}

/// The scaled element rounded to the nearest integer (ties to even), an integer-valued double: off by
/// at most 1/2, where truncation would be off by up to 1 (the method's only error, halved at no cost).
/// For |v|·2^shift < 2^bits, |q| <= 2^bits (<= 2^62); 0 for Inf/NaN.
IRONKERNELS_HD double scaled_integer(double v, int shift) { return finite(v) ? ::rint(scale_by_pow2(v, shift)) : 0.0; }

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
/// The grouping makes the product a quarter of a residue product; against the per-position bound it
/// costs a line's budget 1 bit at φ = 0.5 and 0–0.2 bit at φ = 2 (NumPy model, k = 16384; groups of 8
/// rejected: bench/DECISIONS.md, gemm).
constexpr int kBoundGroupLog2 = 2, kBoundGroup = 1 << kBoundGroupLog2;
IRONKERNELS_HD std::uint32_t bound_group_max(const std::uint32_t (&v)[kBoundGroup]) {
  std::uint32_t r = v[0];
  for (int e = 1; e < kBoundGroup; ++e) r = r > v[e] ? r : v[e];
  return r;
}
IRONKERNELS_HD std::uint32_t bound_group_mean(const std::uint32_t (&v)[kBoundGroup]) {
  std::uint32_t r = 0;
  for (int e = 0; e < kBoundGroup; ++e) r += v[e];
  return (r + kBoundGroup - 1) >> kBoundGroupLog2;
}
/// Whether G_ij is fast's budget whatever C̄_ij (a side keeps fewer than kMagnitudeBits bits).
IRONKERNELS_HD bool flat_pair_budget(const Budget& b) { return b.bits_a < kMagnitudeBits || b.bits_b < kMagnitudeBits; }
IRONKERNELS_HD int accurate_pair_budget(const Budget& b, std::int64_t bound) {
  if (flat_pair_budget(b)) return b.bits_a + b.bits_b;
  return b.top + 2 * kMagnitudeBits - kBoundGroupLog2 - ceil_log2(bound);
}
/// A line's bits under accurate or norm scaling: its fast bits (`fitted`), raised to what the bound
/// allows it (`allowed`) where that is more (at most kMaxBits). Accurate: a pair of lines neither of
/// which is raised is within the fast caps; any other pair keeps α_i + β_j <= G_ij: a column takes
/// half of its least slack G_ij - f_i - f_j over the rows, a row what G_ij leaves beside every
/// column's bits.
IRONKERNELS_HD int raised_line_bits(int fitted, int allowed) {
  return allowed > fitted ? (allowed < kMaxBits ? allowed : (fitted > kMaxBits ? fitted : kMaxBits)) : fitted;
}

/// "norm" scaling, from Cauchy–Schwarz: Σ_l |A'_il||B'_lj| <= ‖A'_i‖₂‖B'_j‖₂, so rows whose rounded
/// 2-norms stay within √k·cap_a and columns within √k·cap_b keep every |C'_ij| <= k·cap_a·cap_b < P/2.
/// A line of fast's bits meets it (‖A'_i‖₂ <= √nnz·cap_a); a line keeps the most bits α with
/// 2^α·‖a‖₂/2^E + √nnz/2 <= √k·cap (rounding moves each element by at most 1/2), never fewer than
/// fast's (`fitted`). `sum` is the line's ScaledSum in the canonical order, within (k + 1)·u of
/// Σ (x·2^-E)² (every term positive; k <= 2^20), so ‖a‖₂ <= 2^E·√sum·(1 + 2^-30); the other
/// roundings (a few units in the last place each) are inside the 2^-50 margins.
IRONKERNELS_HD int norm_line_bits(double sum, std::int64_t nonzeros, double cap, std::int64_t k, int fitted) {
  if (nonzeros == 0) return fitted;
  const double norm = ::sqrt(sum) * (1.0 + 0x1p-30);
  // One explicit fma: nvcc would contract the difference of two products into one otherwise.
  const double room = ::fma(::sqrt(double(k)) * cap, 1.0 - 0x1p-50, -(::sqrt(double(nonzeros)) * (0.5 + 0x1p-50)));
  if (!(room > 0.0)) return fitted;
  return raised_line_bits(fitted, exponent_bound(room / norm * (1.0 - 0x1p-50)) - 1);  // 2^α <= the ratio
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
