#pragma once
// A fixed 192-bit unsigned integer: enough for the product of 20 moduli ≤ 256 (< 2^156) and for the
// exact Chinese-remainder reconstruction, and its correctly rounded conversion to float64. Host and
// device code (the CPU reference and the CUDA kernels run the same functions).
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define IK_WIDE_HD __host__ __device__ __forceinline__
#else
#define IK_WIDE_HD inline
#endif

namespace ironkernels::detail {

struct WideUint {
  static constexpr int kLimbs = 3;
  std::uint64_t limb[kLimbs] = {0, 0, 0};  // little endian

  IK_WIDE_HD static WideUint from(std::uint64_t v) {
    WideUint w;
    w.limb[0] = v;
    return w;
  }
  IK_WIDE_HD bool is_zero() const { return !(limb[0] | limb[1] | limb[2]); }

  /// this = this · m + a (m, a < 2^32); the caller keeps the result below 2^192.
  IK_WIDE_HD void mul_add_small(std::uint32_t m, std::uint32_t a) {
    unsigned __int128 carry = a;
    for (auto& l : limb) {
      const unsigned __int128 t = static_cast<unsigned __int128>(l) * m + carry;
      l = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
  }
  /// this += x · m (m < 2^32); the caller keeps the result below 2^192.
  IK_WIDE_HD void add_mul_small(const WideUint& x, std::uint32_t m) {
    unsigned __int128 carry = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const unsigned __int128 t = static_cast<unsigned __int128>(x.limb[i]) * m + limb[i] + carry;
      limb[i] = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
  }
  /// this · q (q < 2^64, the result below 2^192).
  IK_WIDE_HD WideUint times_small(std::uint64_t q) const {
    WideUint r;
    unsigned __int128 carry = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const unsigned __int128 t = static_cast<unsigned __int128>(limb[i]) * q + carry;
      r.limb[i] = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
    return r;
  }
  /// An approximation of the value (relative error ~2^-52), for quotient estimates.
  IK_WIDE_HD double approx() const {
    return ::ldexp(static_cast<double>(limb[2]), 128) + ::ldexp(static_cast<double>(limb[1]), 64) +
           static_cast<double>(limb[0]);
  }
  IK_WIDE_HD friend bool operator<(const WideUint& x, const WideUint& y) {
    for (int i = kLimbs - 1; i >= 0; --i)
      if (x.limb[i] != y.limb[i]) return x.limb[i] < y.limb[i];
    return false;
  }
  /// x - y for x >= y.
  IK_WIDE_HD friend WideUint operator-(const WideUint& x, const WideUint& y) {
    WideUint r;
    std::uint64_t borrow = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const unsigned __int128 d = static_cast<unsigned __int128>(x.limb[i]) - y.limb[i] - borrow;
      r.limb[i] = static_cast<std::uint64_t>(d);
      borrow = static_cast<std::uint64_t>(d >> 64) ? 1 : 0;
    }
    return r;
  }
  IK_WIDE_HD WideUint shifted_right(int s) const {  // s >= 0
    WideUint r;
    const int q = s / 64, b = s % 64;
    for (int i = 0; i < kLimbs; ++i) {
      const int src = i + q;
      if (src >= kLimbs) break;
      std::uint64_t v = limb[src] >> b;
      if (b && src + 1 < kLimbs) v |= limb[src + 1] << (64 - b);
      r.limb[i] = v;
    }
    return r;
  }
  IK_WIDE_HD int bit_length() const {
    for (int i = kLimbs - 1; i >= 0; --i)
      if (limb[i]) {
#if defined(__CUDA_ARCH__)
        return 64 * i + 64 - __clzll(static_cast<long long>(limb[i]));
#else
        return 64 * i + 64 - __builtin_clzll(limb[i]);
#endif
      }
    return 0;
  }
  IK_WIDE_HD bool bit(int i) const { return i >= 0 && i < 64 * kLimbs && ((limb[i / 64] >> (i % 64)) & 1); }
  /// Any of the bits below position `i` set.
  IK_WIDE_HD bool any_below(int i) const {
    for (int l = 0; l < kLimbs && 64 * l < i; ++l) {
      const int n = i - 64 * l;
      const std::uint64_t mask = n >= 64 ? ~0ull : ((1ull << n) - 1);
      if (limb[l] & mask) return true;
    }
    return false;
  }

  /// this · 2^-e rounded to the nearest float64 (ties to even), subnormals and overflow included:
  /// one rounding, at the bit that is the last one the result can hold.
  IK_WIDE_HD double to_double_scaled(int e) const {
    const int len = bit_length();
    if (len == 0) return 0.0;
    // Value in [2^(len-1-e), 2^(len-e)); float64 keeps 53 bits, fewer below 2^-1022.
    int keep = 53;
    const int lowest = len - 1 - e - 52;  // exponent of the last kept bit for a normal result
    if (lowest < -1074) keep = 53 - (-1074 - lowest);
    if (keep < 0) return 0.0;  // below half the smallest subnormal
    const int drop = len - keep;
    if (drop <= 0) return ::ldexp(static_cast<double>(limb[0]), -e);  // exact: < 2^53
    std::uint64_t mant = keep > 0 ? shifted_right(drop).limb[0] : 0;
    const bool half = bit(drop - 1), sticky = any_below(drop - 1);
    if (half && (sticky || (mant & 1))) ++mant;
    return ::ldexp(static_cast<double>(mant), drop - e);  // exact, or ±inf on overflow
  }
};

}  // namespace ironkernels::detail
