#pragma once
// Scaled integers and their residues: each modulus's constants, an integer's residue in two fmas and
// two integer multiply-adds, an INT32 product's in four integer operations.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "gemm/ozaki_numbers.hpp"

namespace ironkernels::detail::ozaki {

/// 1.5 · 2^52: an integer |x| < 2^51 added to it is exact and sits in the low mantissa bits, so the
/// low 32 bits of the sum are x mod 2^32 (2^51 is a multiple of 2^32).
constexpr double kRoundToInteger = 6755399441055744.0;
IRONKERNELS_HD std::uint32_t low_word(double biased) {
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
IRONKERNELS_HD SplitInteger split_integer(double q) {
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
IRONKERNELS_HD std::uint32_t product_residue(std::int32_t x, const ResidueConstants& c) {
  const std::uint32_t u = static_cast<std::uint32_t>(x) + c.bias;
#if defined(__CUDA_ARCH__)
  const std::uint32_t q = __umulhi(u, c.magic) >> c.shift;
#else
  const std::uint32_t q = static_cast<std::uint32_t>((std::uint64_t(u) * c.magic) >> 32) >> c.shift;
#endif
  return u - q * static_cast<std::uint32_t>(c.p);
}

/// Four INT32 products mod p (product_residue), packed one byte each, the first in the low byte.
IRONKERNELS_HD std::uint32_t packed_product_residues(std::int32_t x0, std::int32_t x1, std::int32_t x2, std::int32_t x3,
                                                     const ResidueConstants& c) {
  return product_residue(x0, c) | product_residue(x1, c) << 8 | product_residue(x2, c) << 16 |
         product_residue(x3, c) << 24;
}

/// Residue modulo p of q = hi·2^32 + lo in [-h, p-1-h], h = floor(p/2), in the low byte of the
/// result (as int8). x = hi·pow32 + lo is an exact integer, |x| < 2^39, and r = x - p·N with
/// N = round(x/p): for odd p, x/p = N + j/p with |j| <= h, at least 1/(2p) >= 2^-9 from a tie, and
/// x·inv_p is off by less than 2^-14, so fma(x, inv_p, 1.5·2^52) rounds it to N once and leaves
/// N mod 2^32 in its low word. For p = 256 (inv_p exact) a tie may round either way, r = ±128, the
/// same byte. x mod 2^32 = hi_word·pow32 + lo_word mod 2^32, so r mod 2^32 is two 32-bit
/// multiply-adds: two floating-point operations and two integer ones, no conversion. The residue is
/// unique, so host and device agree.
IRONKERNELS_HD std::uint32_t residue_bits(const SplitInteger& q, const ResidueConstants& c) {
  const double x = ::fma(q.hi, c.pow32, q.lo);
  const std::uint32_t n = low_word(::fma(x, c.inv_p, kRoundToInteger));
  return q.lo_word + q.hi_word * c.pow32_word + n * c.neg_p;
}
IRONKERNELS_HD int residue(const SplitInteger& q, const ResidueConstants& c) {
  return static_cast<std::int8_t>(residue_bits(q, c));
}

}  // namespace ironkernels::detail::ozaki
