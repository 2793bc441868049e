#pragma once
// float16 / bfloat16 <-> float32 on the host, round-to-nearest-even, NaN preserved (quieted).
#include <cstdint>
#include <cstring>

namespace ironkernels::detail {

inline float bits_to_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline std::uint32_t float_to_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float bf16_to_float(std::uint16_t h) { return bits_to_float(std::uint32_t(h) << 16); }
inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = float_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((u >> 16) | 0x40);  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return std::uint16_t(u >> 16);
}

inline float fp16_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return bits_to_float(sign);
    // Subnormal: man · 2^-24, exact in float.
    float f = float(man) * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
}

inline std::uint16_t float_to_fp16(float f) {
  const std::uint32_t u = float_to_bits(f);
  const std::uint16_t sign = std::uint16_t((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;              // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;             // rounds to Inf (>= 65520)
  if (a < 0x38800000u) {                                    // below the smallest normal 2^-14
    // Scale into the subnormal grid (units of 2^-24) and round half to even with the FPU.
    const float mag = bits_to_float(a) * 16777216.0f;       // exact: power-of-two scale
    float r = __builtin_nearbyintf(mag);                    // default rounding mode: to even
    return sign | std::uint16_t(r);
  }
  std::uint32_t v = a + 0xfffu + ((a >> 13) & 1u);          // round mantissa to 10 bits, to even
  return sign | std::uint16_t(((v >> 13) - (112u << 10)) & 0xffffu);
}

}  // namespace ironkernels::detail
