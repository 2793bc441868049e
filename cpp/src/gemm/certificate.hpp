#pragma once
// The componentwise certificate of a certified contract (docs/gemm.md has the proof), compiled for
// host and device so that the CPU reference and the CUDA plan take the same decisions bit for bit:
// every quantity here is an integer, an exact floating-point value or one correctly rounded operation.
//
// Row i of op(A) (E_i its exponent bound, |a_il| < 2^E_i) rounded to its quantum q_i = 2^(E_i - α_i)
// errs by |δa_il| <= min(q_i/2, |a_il|), by nothing where a_il is a multiple of q_i. So
//   |P̂_ij - P_ij| <= (q_i/2)·‖b_j‖₁·(1 + θ_j/2) + (r_j/2)·‖a_i‖₁·(1 + θ_i/2),   θ <= nnz·2^-bits,
// and the call is certified for (i, j) where each term is at most rtol/2 · (|A||B|)_ij. The scan
// gives ‖a_i‖₁ <= 2^(E_i - 30)·T_i (T_i a sum of integers, order-free); one INT8 product of the
// lines' magnitudes rounded down gives (|A||B|)_ij >= 2^(E_i - s_i + F_j - t_j - 2w)·Λ_ij (s_i, t_j:
// how far below each line's exponent its magnitudes' unit starts, lower_offset). The powers of two
// cancel: the row term holds iff 2^(-α_i - 31)·T^B_j <= ρ_ij = rtol·2^(-2w-1-s_i-t_j)·(1 - 2^-10)·Λ_ij.
#include <climits>
#include <cstdint>
#include <cstring>

#include "gemm/ozaki.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels::detail::certify {

namespace oz = ozaki;

constexpr int kUnitBits = 30;                        // T = Σ ceil(|x|·2^(30 - E)) <= 2^50 for k <= 2^20
constexpr int kNeedTable = 64;                       // bits a line may need: 0 … 62 (kMaxBits), 63 = more
constexpr int kNoCount = kGemmMaxModuli + 1;         // no count certifies it
constexpr int kNeverBits = 1 << 20;                  // a need no line meets
constexpr double kSlack = 1.0 - 0x1p-10;             // covers θ/2 <= 2^-13 and the roundings of ρ

/// Bits w of the lower-bound magnitudes: the largest w <= 7 with (2^w - 1)²·k < 2^31 (exact INT32).
IRONKERNELS_HD int lower_bits(std::int64_t k) {
  int w = 7;
  while (w > 1 && ((std::int64_t(1) << w) - 1) * ((std::int64_t(1) << w) - 1) * k >= (std::int64_t(1) << 31)) --w;
  return w;
}

/// How far below its exponent bound a line's lower-bound magnitudes start (s >= 0; the unit is
/// 2^(E - s - w)): one above the line's RMS, from its canonical sum Σ(x·2^-E)² (ozaki::ScaledSum), so
/// that heavy-tailed lines resolve their bulk instead of only their few largest elements (which
/// saturate at 2^w - 1, still a lower bound). Exact functions of the sum: the same on every backend.
IRONKERNELS_HD int lower_offset(double sum, std::int64_t nonzeros) {
  if (nonzeros == 0) return 0;
  const int e = oz::exponent_bound(::sqrt(sum / double(nonzeros))) + 1;  // RMS < 2^(E + e - 1)
  return e < 0 ? -e : 0;
}

/// min(floor(|x|·2^(w + s - e)), 2^w - 1) (|x| < 2^e): a lower bound of |x| in units of 2^(e - s - w);
/// 0 for zeros and Inf/NaN. Exact where it is at least 1 (the scaled value is then a normal double).
IRONKERNELS_HD std::int32_t lower_magnitude(double x, int e, int s, int w) {
  if (x == 0.0 || !oz::finite(x)) return 0;
  const double v = ::floor(oz::scale_by_pow2(::fabs(x), w + s - e)), top = double((1 << w) - 1);
  return static_cast<std::int32_t>(v < top ? v : top);
}

/// ceil(|x|·2^(30 - e)), at least 1 for any nonzero finite x: an upper bound of |x| in units of
/// 2^(e - 30), so that ‖a_i‖₁ <= 2^(E_i - 30)·Σ_l units(a_il).
IRONKERNELS_HD std::uint64_t magnitude_units(double x, int e) {
  if (x == 0.0 || !oz::finite(x)) return 0;
  const double v = ::ceil(oz::scale_by_pow2(::fabs(x), kUnitBits - e));
  return v < 1.0 ? 1u : static_cast<std::uint64_t>(v);
}

/// The exponent of the lowest set bit of a finite nonzero x (x is a multiple of 2^that).
IRONKERNELS_HD int lowest_bit_exponent(double x) {
  std::uint64_t bits;
#if defined(__CUDA_ARCH__)
  bits = static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::memcpy(&bits, &x, sizeof bits);
#endif
  const int biased = int((bits >> 52) & 0x7ff);
  std::uint64_t mantissa = bits & ((std::uint64_t(1) << 52) - 1);
  if (biased) mantissa |= std::uint64_t(1) << 52;
#if defined(__CUDA_ARCH__)
  const int trailing = __ffsll(static_cast<long long>(mantissa)) - 1;
#else
  const int trailing = __builtin_ctzll(mantissa);
#endif
  return (biased ? biased - 1075 : -1074) + trailing;
}

/// A line's bits under norm scaling with the budget `b` of some count (side 0: op(A), 1: op(B)):
/// fast's fitted bits raised to what its 2-norm allows (ozaki::norm_line_bits), k1 = max(k, 1).
IRONKERNELS_HD int norm_bits(const oz::Budget& b, int side, double largest, double sum, std::int64_t nonzeros,
                             std::int64_t k1) {
  const double cap = side == 0 ? b.cap_a : b.cap_b;
  return oz::norm_line_bits(sum, nonzeros, cap, k1, oz::fitted_bits(largest, cap, side == 0 ? b.bits_a : b.bits_b));
}

/// What the certificate needs of one finite, nonzero line besides its bits per count.
struct LineFacts {
  double units;    ///< T: Σ magnitude_units over the line (exact)
  int exact_bits;  ///< the line is exact (every element a multiple of its quantum) from this many bits on
  int theta_bits;  ///< an inexact line keeps at least this many, so that θ/2 <= 2^-13
};
IRONKERNELS_HD LineFacts line_facts(std::uint64_t units, int exponent, int lowest_bit, std::int64_t nonzeros) {
  return {static_cast<double>(units), exponent - lowest_bit, oz::ceil_log2(nonzeros) + 13};
}

/// ρ_ij from Λ_ij and both lines' offsets (rho_factor: rtol·2^(-2w-1)·kSlack).
IRONKERNELS_HD double rho(double rho_factor, std::int64_t lambda, int offset_row, int offset_col) {
  return oz::scale_by_pow2(rho_factor * double(lambda), -(offset_row + offset_col));
}

/// ρ's constant: rtol·2^(-2w-1)·kSlack (the product with Λ then errs by one rounding, inside kSlack).
inline double rho_factor(double rtol, int w) { return rtol * kSlack * std::ldexp(1.0, -2 * w - 1); }

/// The fewest bits α with 2^(-α-31)·other_units <= ρ: ceil(log2(T/ρ)) - 31 from both exponents and
/// mantissas (no division); kNeverBits where ρ = 0 (no lower bound of |A||B| at this element).
IRONKERNELS_HD int needed_bits(double other_units, double rho) {
  if (!(rho > 0.0)) return kNeverBits;
  const int et = oz::exponent_bound(other_units), er = oz::exponent_bound(rho);
  return et - er + (oz::mantissa(other_units) > oz::mantissa(rho) ? 1 : 0) - 31;
}

/// The count a line needs for its term at one element: its table's entry for the bits needed
/// (at least theta_bits unless exact; never more than exact_bits).
IRONKERNELS_HD int line_count(const std::uint8_t* count_for, const LineFacts& line, double other_units, double rho) {
  int need = needed_bits(other_units, rho);
  need = need > line.theta_bits ? need : line.theta_bits;
  need = need < line.exact_bits ? need : line.exact_bits;
  if (need > oz::kMaxBits) return kNoCount;
  return count_for[need < 0 ? 0 : need];
}

/// count_for[x]: the smallest count c >= lo whose bits, and those of every larger count, are at
/// least x (kNoCount if even 20 moduli keep fewer); bits(c) the line's bits with c moduli.
template <class Bits>
IRONKERNELS_HD void count_table(int lo, const Bits& bits, std::uint8_t (&count_for)[kNeedTable]) {
  for (int x = 0; x < kNeedTable; ++x) count_for[x] = kNoCount;
  int least = INT_MAX;
  for (int c = kGemmMaxModuli; c >= lo; --c) {
    const int b = bits(c);
    least = b < least ? b : least;
    for (int x = 0; x <= least && x < kNeedTable; ++x) count_for[x] = static_cast<std::uint8_t>(c);
  }
}

/// Lines (of one side) by the count their elements need at most: hist[c] for c = 0 … kNoCount
/// (0: no element of the line needs any), and the lines holding Inf/NaN.
struct CountHistogram {
  std::int64_t lines[kNoCount + 1] = {};
  std::int64_t nonfinite = 0;
};

/// What a certified call does: `moduli` for the emulated elements (0: none), and which lines go native
/// besides those holding Inf/NaN: rows (cover_rows) or columns whose elements need more than `moduli`.
struct Decision {
  int moduli = 0;
  bool cover_rows = true;
  bool whole_native = false;
  std::int64_t native_rows = 0, native_cols = 0;  // including the non-finite lines
};

/// Relative cost model of the remedies, in units of one native DGEMM of the whole call (measured on
/// H200 at 16384³, bench/DECISIONS.md): emulation with c moduli ≈ kModulusCost·c + kEmulationCost,
/// native lines ≈ their share of the rows (columns) of C.
constexpr double kModulusCost = 0.04, kEmulationCost = 0.02;

/// The cheapest of: c moduli (lo … 20) with the rows, or the columns, needing more computed natively;
/// or the whole call natively. Ties go to fewer moduli, then to rows.
inline Decision decide(const CountHistogram& rows, const CountHistogram& cols, std::int64_t m, std::int64_t n, int lo) {
  Decision best;
  best.whole_native = true, best.native_rows = m, best.native_cols = 0;
  double best_cost = 1.0;
  for (int c = lo; c <= kGemmMaxModuli; ++c) {
    std::int64_t rows_above = 0, cols_above = 0;
    for (int v = c + 1; v <= kNoCount; ++v) rows_above += rows.lines[v], cols_above += cols.lines[v];
    for (int cover = 0; cover < 2; ++cover) {
      Decision d;
      d.moduli = c, d.cover_rows = cover == 0;
      d.native_rows = rows.nonfinite + (d.cover_rows ? rows_above : 0);
      d.native_cols = cols.nonfinite + (d.cover_rows ? 0 : cols_above);
      if (d.native_rows >= m) continue;  // nothing left to emulate: the whole call
      const double cost = kModulusCost * c + kEmulationCost + double(d.native_rows) / double(m) +
                          double(d.native_cols) / double(n);
      if (cost < best_cost) best = d, best_cost = cost;
    }
  }
  if (best.whole_native) best.native_rows = m, best.native_cols = 0;
  return best;
}

/// (host) Every count's budget at inner dimension k, and the smallest count that leaves both sides
/// bits: the counts a certified call chooses from.
inline int certified_counts(std::int64_t k, oz::Budget (&budgets)[kGemmMaxModuli + 1]) {
  int lo = kGemmMaxModuli;
  for (int c = kGemmMaxModuli; c >= 2; --c) {
    budgets[c] = oz::budget(oz::crt_constants(gemm_moduli().data(), c), k > 1 ? k : 1);
    if (budgets[c].bits_a > 0) lo = c;
  }
  return lo;
}

}  // namespace ironkernels::detail::certify
