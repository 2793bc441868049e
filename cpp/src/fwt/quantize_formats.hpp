#pragma once
// The element and scale encodings of fwt_quantize, one function each, shared by the CPU path and the
// CUDA kernels (host and device): float32 values rounded to nearest even with the format's saturation
// (OCP FP8 E4M3 / E5M2, E2M1 for MXFP4 and NVFP4), the E8M0 power-of-two scale of MX blocks, and the
// symmetric integers. docs/fwt.md states the arithmetic each format's scale and values follow.
#include <cmath>
#include <cstring>
#include <cstdint>

#include "core/host_device.hpp"
#include "ironkernels/fwt_quantize.hpp"

namespace ironkernels::detail::quant {

/// A small float format: exponent and mantissa bits, exponent bias, largest finite value and its code,
/// the code of NaN (0 for a format without one).
struct MiniFloat {
  int exponent, mantissa, bias;
  float max_finite;
  std::uint8_t max_code, nan_code;
};
inline constexpr MiniFloat kE4M3{4, 3, 7, 448.0f, 0x7E, 0x7F};    // float8_e4m3fn
inline constexpr MiniFloat kE5M2{5, 2, 15, 57344.0f, 0x7B, 0x7F};  // float8_e5m2 (0x7C, infinity, never made)
inline constexpr MiniFloat kE2M1{2, 1, 1, 6.0f, 0x7, 0};           // float4_e2m1fn

/// v in `f`, rounded to nearest even; beyond the largest finite value, that value (saturation);
/// NaN to the format's NaN (or 0 where it has none). Sign in the top bit of the code's width
/// (bit 7 for the 8-bit formats, bit 3 for E2M1).
IRONKERNELS_HD std::uint8_t encode(float v, MiniFloat f) {
  const int width = f.exponent + f.mantissa + 1;
  const std::uint8_t sign = std::signbit(v) ? std::uint8_t(1u << (width - 1)) : 0;
  if (std::isnan(v)) return f.nan_code ? std::uint8_t(sign | f.nan_code) : 0;
  float a = std::fabs(v);
  if (!(a < f.max_finite)) return std::uint8_t(sign | f.max_code);
  if (a == 0.0f) return sign;
  const int emin = 1 - f.bias;  // the smallest normal exponent
  int e = 0;
  std::frexp(a, &e);
  e -= 1;  // a = 1.x · 2^e
  if (e < emin) e = emin;  // subnormals share the smallest normal exponent's quantum
  const float quantum = std::ldexp(1.0f, e - f.mantissa);
  a = std::rint(a / quantum) * quantum;  // exact: a power-of-two quantum; rint rounds half to even
  if (a > f.max_finite) a = f.max_finite;
  if (a == 0.0f) return sign;
  int re = 0;
  std::frexp(a, &re);
  re -= 1;
  if (re < emin) return std::uint8_t(sign | int(a / std::ldexp(1.0f, emin - f.mantissa)));  // subnormal
  const int mant = int(std::ldexp(a, f.mantissa - re)) - (1 << f.mantissa);
  return std::uint8_t(sign | ((re + f.bias) << f.mantissa) | mant);
}

/// y rounded to the nearest integer, ties to even, in the low bits of the result (two's complement),
/// for |y| < 2^22: y + 1.5·2^23 lies where float32's spacing is 1, so the adder rounds y there.
IRONKERNELS_HD std::int32_t rint_bits(float y) {
  const float shifted = y + 12582912.0f;
  std::int32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  return bits;
}

/// encode(y, kE2M1) for y not NaN, in a few integer steps (the CUDA single-pass kernel's): below 1,
/// the code is 2|y| rounded (quantum 0.5); from 1, |y|'s float32 bits with the mantissa rounded to
/// one bit, nearest even (a carry moves the exponent up), give code 2·e + m + 2, saturated at 7.
IRONKERNELS_HD std::uint8_t encode_e2m1(float y) {
  std::uint32_t bits;
  std::memcpy(&bits, &y, sizeof bits);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  const float a = std::fabs(y);
  int code;
  if (a < 1.0f) {
#ifdef __CUDA_ARCH__
    code = rint_bits(a + a) & 3;  // (the float adder's rounding, not the slower float-to-int conversion)
#else
    code = int(std::nearbyint(a + a));  // (the default rounding: nearest even)
#endif
  } else {
    const std::uint32_t rounded = magnitude + 0x1fffffu + (magnitude >> 22 & 1u);
    code = int(rounded >> 22) - 2 * 127 + 2;
    code = code < 7 ? code : 7;
  }
  return std::uint8_t((bits >> 28 & 8u) | unsigned(code));
}

/// The value of a code of `f` (the inverse of encode on its results).
IRONKERNELS_HD float decode(std::uint8_t code, MiniFloat f) {
  const int width = f.exponent + f.mantissa + 1;
  const bool negative = (code >> (width - 1)) & 1;
  const int body = code & ((1 << (width - 1)) - 1);
  if (f.nan_code && body == f.nan_code) return NAN;
  const int exp_field = body >> f.mantissa, mant = body & ((1 << f.mantissa) - 1);
  const float a = exp_field == 0 ? std::ldexp(float(mant), 1 - f.bias - f.mantissa)
                                 : std::ldexp(float(mant + (1 << f.mantissa)), exp_field - f.bias - f.mantissa);
  return negative ? -a : a;
}

/// The E8M0 scale of an MX block whose largest magnitude is `amax`: 2^(floor(log2 amax) − emax),
/// emax = 2 for E2M1 (its largest value 6 = 1.5·2^2), clamped to 2^−127 … 2^127; code = exponent + 127
/// (255: NaN, for a block holding a NaN or an infinity). amax = 0: 2^−127 (code 0).
IRONKERNELS_HD std::uint8_t mx_scale_code(float amax) {
  if (!(amax <= 3.4028235e38f)) return 255;  // NaN or infinity
  if (amax == 0.0f) return 0;
  int e = 0;
  std::frexp(amax, &e);
  int exponent = (e - 1) - 2;
  exponent = exponent < -127 ? -127 : exponent > 127 ? 127 : exponent;
  return std::uint8_t(exponent + 127);
}

/// round(v) to the nearest integer (half to even), clamped to [−limit, limit].
IRONKERNELS_HD int symmetric_int(float v, int limit) {
  if (std::isnan(v)) return 0;
  const float r = std::rint(v);
  return r > float(limit) ? limit : r < -float(limit) ? -limit : int(r);
}

/// nvfp4's tensor encode scale from the largest finite magnitude of the rotated tensor: (448 · 6) /
/// amax, at most FLT_MAX; 1 for a tensor without a nonzero finite value. Its decode scale is 1 / it.
IRONKERNELS_HD float tensor_encode_scale(float amax) {
  return amax > 0.0f ? std::fmin((448.0f * 6.0f) / amax, 3.4028235e38f) : 1.0f;
}

/// Whether `to` packs two codes per byte (int4, mxfp4, nvfp4; element 2i in the low nibble).
IRONKERNELS_HD bool packs_pairs(QuantFormat to) {
  return to == QuantFormat::int4 || to == QuantFormat::mxfp4 || to == QuantFormat::nvfp4;
}

/// The block size MX and NV fix for their scales (32, 16), stored as uint8 codes; 0 for the formats
/// whose groups the caller chooses and whose scales are float32.
IRONKERNELS_HD int fixed_group(QuantFormat to) {
  return to == QuantFormat::mxfp4 ? 32 : to == QuantFormat::nvfp4 ? 16 : 0;
}

/// The largest code's value of the float8 and integer formats (their scale is amax / qmax).
IRONKERNELS_HD float code_max(QuantFormat to) {
  return to == QuantFormat::float8_e4m3fn ? 448.0f : to == QuantFormat::float8_e5m2 ? 57344.0f
         : to == QuantFormat::int8        ? 127.0f : 7.0f;
}

/// A group's scale: what is stored (float32 bits, or an E8M0 / E4M3 code in the low byte) and what
/// each element is multiplied by before its encoding (MX: the exponent code instead).
struct GroupScale {
  float stored_value;  // float8 / int formats
  std::uint8_t code;   // mxfp4 (E8M0) and nvfp4 (E4M3)
  float multiplier;
  // 1, or 2^64 where qmax / amax overflows float32 (amax below about 1e-36): an element is then
  // (v · 2^64) · (qmax / (amax · 2^64)), the same rounding of v · qmax / amax, without the infinity.
  float prescale;
};
inline constexpr float kTinyGroupPrescale = 18446744073709551616.0f;  // 2^64

/// The scale of a group whose largest magnitude is `amax` (NaN if it holds NaN or ±Inf); `encode` is
/// nvfp4's tensor encode scale (1 for the other formats).
IRONKERNELS_HD GroupScale group_scale(QuantFormat to, float amax, float encode) {
  const bool finite = !std::isnan(amax);
  GroupScale g{0.0f, 0, 0.0f, 1.0f};
  if (to == QuantFormat::mxfp4) {
    g.code = mx_scale_code(amax);
  } else if (to == QuantFormat::nvfp4) {
    g.code = finite ? quant::encode(amax / 6.0f * encode, kE4M3) : kE4M3.nan_code;
    const float d = decode(g.code, kE4M3);
    g.multiplier = std::isfinite(d) && d > 0.0f ? encode / d : 0.0f;
  } else {
    const float qmax = code_max(to);
    g.stored_value = !finite ? NAN : amax > 0.0f ? amax / qmax : 1.0f;
    g.multiplier = finite && amax > 0.0f ? qmax / amax : 0.0f;
    if (std::isinf(g.multiplier)) {
      g.prescale = kTinyGroupPrescale;
      g.multiplier = qmax / (amax * kTinyGroupPrescale);
    }
    if (!finite) g.multiplier = NAN;  // every element's code is then the format's NaN (0 for integers)
  }
  return g;
}

/// One element's code under its group's scale: a byte (float8, int8 as two's complement) or a
/// nibble in the low four bits (int4, mxfp4, nvfp4).
IRONKERNELS_HD std::uint8_t element_code(QuantFormat to, float v, const GroupScale& g) {
  switch (to) {
    case QuantFormat::float8_e4m3fn: return quant::encode(v * g.prescale * g.multiplier, kE4M3);
    case QuantFormat::float8_e5m2: return quant::encode(v * g.prescale * g.multiplier, kE5M2);
    case QuantFormat::int8: return std::uint8_t(std::int8_t(symmetric_int(v * g.prescale * g.multiplier, 127)));
    case QuantFormat::int4: return std::uint8_t(symmetric_int(v * g.prescale * g.multiplier, 7) & 0x0F);
    case QuantFormat::mxfp4: return g.code == 255 ? 0 : quant::encode(std::ldexp(v, 127 - int(g.code)), kE2M1);
    case QuantFormat::nvfp4: return g.multiplier > 0.0f ? quant::encode(v * g.multiplier, kE2M1) : 0;
  }
  return 0;
}

/// Where the scale of row r, group c of `groups` goes in the swizzled 128×4 layout.
IRONKERNELS_HD std::int64_t swizzled_scale_index(std::int64_t r, std::int64_t c, std::int64_t groups) {
  return ((r / 128) * ((groups + 3) / 4) + c / 4) * 512 + (r % 32) * 16 + (r / 32 % 4) * 4 + c % 4;
}

}  // namespace ironkernels::detail::quant
