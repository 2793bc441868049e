#pragma once
// A fixed 192-bit unsigned integer for the host-side constants of the Chinese-remainder
// reconstruction: P (the product of up to 20 moduli ≤ 256, < 2^156), P/2 and the M_t. The kernels
// and the CPU reference work on their 32-bit-limb copies (ozaki::CrtTable).
#include <cstdint>

namespace ironkernels::detail {

struct WideUint {
  static constexpr int kLimbs = 3;
  std::uint64_t limb[kLimbs] = {0, 0, 0};  // little endian

  static WideUint from(std::uint64_t v) {
    WideUint w;
    w.limb[0] = v;
    return w;
  }
  /// this = this · m + a (m, a < 2^32); the caller keeps the result below 2^192.
  void mul_add_small(std::uint32_t m, std::uint32_t a) {
    unsigned __int128 carry = a;
    for (auto& l : limb) {
      const unsigned __int128 t = static_cast<unsigned __int128>(l) * m + carry;
      l = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
  }
  /// this · q (q < 2^64, the result below 2^192).
  WideUint times_small(std::uint64_t q) const {
    WideUint r;
    unsigned __int128 carry = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const unsigned __int128 t = static_cast<unsigned __int128>(limb[i]) * q + carry;
      r.limb[i] = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
    return r;
  }
  WideUint shifted_right(int s) const {  // 0 <= s < 64
    WideUint r;
    for (int i = 0; i < kLimbs; ++i)
      r.limb[i] = (limb[i] >> s) | (s && i + 1 < kLimbs ? limb[i + 1] << (64 - s) : 0);
    return r;
  }
  bool operator<(const WideUint& o) const {
    for (int i = kLimbs - 1; i >= 0; --i)
      if (limb[i] != o.limb[i]) return limb[i] < o.limb[i];
    return false;
  }
  int bit_length() const {
    for (int i = kLimbs - 1; i >= 0; --i)
      if (limb[i]) return 64 * i + 64 - __builtin_clzll(limb[i]);
    return 0;
  }
  /// The value rounded to a double (quotient estimates only).
  double approx() const {
    return static_cast<double>(limb[2]) * 0x1p128 + static_cast<double>(limb[1]) * 0x1p64 + static_cast<double>(limb[0]);
  }
};

}  // namespace ironkernels::detail
