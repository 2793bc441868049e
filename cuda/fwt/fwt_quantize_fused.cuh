#pragma once
// The single-pass fwt_quantize kernel (its dispatch: fwt_quantize_fused.cu). Each block reads its
// span of x once, rotates it in registers
// (shuffles and, past one warp, one corner turn through shared memory; for m·2^k, H_m across the
// blocks through shared memory), finds each group's largest magnitude, and writes the codes and
// scales. The arithmetic is the host transform's step for step (butterflies bit 0 first, H_m summed
// in order, then the scale), so every rotated value, and therefore every code, is the host's bit for
// bit. nvfp4 runs it twice: the tensor's largest magnitude, then the codes.
//
// A thread holds E contiguous elements; the element index within a block's span is owned as
//   [0, log2 E)                 the thread's registers         (register butterflies)
//   [log2 E, log2 E + 5)        the lane                       (__shfl_xor_sync butterflies)
//   [log2 E + 5, …)             the warp                       (one corner turn: shared memory)
// A rotation of L = 2^l elements needs l <= log2 E + 5 + log2 E (E = 16: 2^13; E = 32: 2^15); a
// group of g elements reduces in registers, across lanes, then across warps through shared memory.
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "common/ptx.cuh"
#include "core/cuda_check.hpp"
#include "ironkernels/fwt_quantize.hpp"
#include "fwt/fwt_quantize_layout.cuh"
#include "fwt/fwt_values.cuh"
#include "fwt/hadamard_factors.hpp"
#include "fwt/quantize_formats.hpp"

namespace ironkernels::detail::quantize_fused {
namespace qf = quant;
namespace ql = fwt_gpu::quantize_layout;

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kMaxLogSpan = 15;  // rotations and groups of up to 2^15 elements

struct FusedArgs {
  const void* x;
  const std::int8_t* signs;  // N values ±1 on the device, or null
  std::int64_t n, total;     // the row length; the elements of x
  int log_l, log_g;          // the rotation's power-of-two part 2^k and the group's length, log2
  int factor;                // m of a rotation of m·2^k (12, 20, 28), else 1
  float scale;               // the rotation's normalisation
  bool scaled, bfloat;
  QuantFormat to;
  bool swizzled;
  std::uint8_t* q;
  void* scales;
  unsigned* amax_bits;  // nvfp4: the tensor's largest finite magnitude (pass 1 writes, pass 2 reads)
  float global_amax;    // nvfp4: > 0, the caller's (one pass)
  float* tensor_scale;  // nvfp4
  bool amax_only;       // nvfp4's first pass
};

// E 16-bit values from p (two per word, the low half first) as floats, exactly.
template <bool kBfloat, int E>
__device__ __forceinline__ void load_widened(const uint4* p, float (&v)[E]) {
#pragma unroll
  for (int k = 0; k < E / 8; ++k) {
    const uint4 u = __ldcs(p + k);
    const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int h = 0; h < 4; ++h) {
      v[8 * k + 2 * h] = fwt_gpu::widen_16bit(std::uint16_t(w[h] & 0xffffu), kBfloat);
      v[8 * k + 2 * h + 1] = kBfloat ? __uint_as_float(w[h] & 0xffff0000u) : fwt_gpu::widen_16bit(std::uint16_t(w[h] >> 16), false);
    }
  }
}

// The thread's E elements from e0 (16-byte loads, streamed: read once), signed.
template <class In, int E>
__device__ __forceinline__ void load_run(const FusedArgs& a, std::int64_t e0, float (&v)[E]) {
  if constexpr (sizeof(In) == 4) {
    const float4* p = reinterpret_cast<const float4*>(static_cast<const float*>(a.x) + e0);
#pragma unroll
    for (int k = 0; k < E / 4; ++k) {
      const float4 f = __ldcs(p + k);
      v[4 * k] = f.x, v[4 * k + 1] = f.y, v[4 * k + 2] = f.z, v[4 * k + 3] = f.w;
    }
  } else {
    const uint4* p = reinterpret_cast<const uint4*>(static_cast<const std::uint16_t*>(a.x) + e0);
    // One branch per thread rather than a select per element, where registers allow (runs of 16).
    if constexpr (E == 16) {
      if (a.bfloat) load_widened<true>(p, v);
      else load_widened<false>(p, v);
    } else {
#pragma unroll
      for (int k = 0; k < E / 8; ++k) {
        const uint4 u = __ldcs(p + k);
        const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int h = 0; h < 4; ++h) {
          v[8 * k + 2 * h] = fwt_gpu::widen_16bit(std::uint16_t(w[h] & 0xffffu), a.bfloat);
          v[8 * k + 2 * h + 1] = fwt_gpu::widen_16bit(std::uint16_t(w[h] >> 16), a.bfloat);
        }
      }
    }
  }
  if (a.signs) {
    const uint4* s = reinterpret_cast<const uint4*>(a.signs + e0 % a.n);
#pragma unroll
    for (int k = 0; k < E / 16; ++k) {
      const uint4 u = s[k];
      const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
      for (int i = 0; i < 16; ++i)
        if (w[i / 4] >> (8 * (i % 4)) & 0x80u) v[16 * k + i] = -v[16 * k + i];
    }
  }
}

// The corner turn over bits [s, s + R) (fwt_quantize_layout.cuh): a warp's 32 threads read 32
// consecutive words.
template <int E, int R>
__device__ __forceinline__ void turn_stage(float (&v)[E], float* turn) {
  constexpr int s = ql::turn_shift<E>(), kPer = 1 << R;
  const int t = threadIdx.x, threads = blockDim.x;
#pragma unroll
  for (int k = 0; k < E / 4; ++k)
    *reinterpret_cast<float4*>(turn + ql::smem_word<E>(t * E + 4 * k)) = make_float4(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
  __syncthreads();
  int base[E / kPer];
#pragma unroll
  for (int j = 0; j < E / kPer; ++j) base[j] = ql::turn_run_word<E, R>(j, t, threads);
#pragma unroll
  for (int i = 0; i < E; ++i) v[i] = turn[base[i / kPer] + ((i % kPer) << s)];
  fwt_gpu::register_butterflies(v, R);
#pragma unroll
  for (int i = 0; i < E; ++i) turn[base[i / kPer] + ((i % kPer) << s)] = v[i];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < E / 4; ++k) {
    const float4 f = *reinterpret_cast<const float4*>(turn + ql::smem_word<E>(t * E + 4 * k));
    v[4 * k] = f.x, v[4 * k + 1] = f.y, v[4 * k + 2] = f.z, v[4 * k + 3] = f.w;
  }
}

// H_m across the m blocks of 2^k of each rotation (fwt_quantize_layout.cuh), through shared memory,
// each output summed as the host's apply_factor sums it (from 0, the m inputs in order, each added or
// subtracted by its sign), then scaled. m is a run-time value (12, 20 or 28), its signs a table.
struct FactorSigns {
  unsigned negative[3][28];  // bit c of row r: H_m[r][c] < 0, for m = 12, 20, 28
};
constexpr FactorSigns make_factor_signs() {
  FactorSigns s{};
  const int orders[3] = {12, 20, 28};
  for (int f = 0; f < 3; ++f)
    for (int r = 0; r < orders[f]; ++r)
      for (int c = 0; c < orders[f]; ++c)
        if (hadamard_factor_entry(orders[f], r, c) < 0) s.negative[f][r] |= 1u << c;
  return s;
}
__constant__ FactorSigns kFactorSigns = make_factor_signs();

// The span's columns in place, not inlined (one copy whatever the format and input type; no register
// array of its caller's held across it).
template <int E>
__device__ __noinline__ void factor_columns(const FusedArgs& a, float* turn) {
  constexpr int kMaxM = 28;
  const int m = a.factor, which = m == 12 ? 0 : m == 20 ? 1 : 2;
  const int t = threadIdx.x, threads = blockDim.x, columns = threads * E / m;
  for (int col = t; col < columns; col += threads) {
    float z[kMaxM];
#pragma unroll
    for (int c = 0; c < kMaxM; ++c) z[c] = c < m ? turn[ql::smem_word<E>(ql::factor_element(col, c, a.log_l, m))] : 0.0f;
    for (int r = 0; r < m; ++r) {
      const unsigned negative = kFactorSigns.negative[which][r];
      float out = 0.0f;
#pragma unroll
      for (int c = 0; c < kMaxM; ++c)
        if (c < m) out = negative >> c & 1u ? out - z[c] : out + z[c];
      turn[ql::smem_word<E>(ql::factor_element(col, r, a.log_l, m))] = a.scaled ? out * a.scale : out;
    }
  }
}
template <int E>
__device__ __forceinline__ void factor_stage(const FusedArgs& a, float (&v)[E], float* turn) {
  const int t = threadIdx.x;
#pragma unroll
  for (int k = 0; k < E / 4; ++k)
    *reinterpret_cast<float4*>(turn + ql::smem_word<E>(t * E + 4 * k)) = make_float4(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
  __syncthreads();
  factor_columns<E>(a, turn);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < E / 4; ++k) {
    const float4 f = *reinterpret_cast<const float4*>(turn + ql::smem_word<E>(t * E + 4 * k));
    v[4 * k] = f.x, v[4 * k + 1] = f.y, v[4 * k + 2] = f.z, v[4 * k + 3] = f.w;
  }
}

// The butterflies over the lane bits [0, kLanes): the lower lane holds lo, the upper hi: lo + hi
// there and lo - hi here, each one rounding, in one fma (1·v and -1·v are exact).
template <int kLanes, int E>
__device__ __forceinline__ void lane_butterflies(float (&v)[E]) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int b = 0; b < kLanes; ++b) {
    const float sign = lane >> b & 1 ? -1.0f : 1.0f;
#pragma unroll
    for (int i = 0; i < E; ++i) v[i] = fmaf(sign, v[i], __shfl_xor_sync(kFullMask, v[i], 1 << b));
  }
}

// The rotation of the block's span: registers, lanes, then (blocks past one warp's run) the corner
// turn, in ascending bit order; then H_m across the blocks for m·2^k, and the scale.
template <int E>
__device__ __forceinline__ void rotate(const FusedArgs& a, float (&v)[E], float* turn) {
  constexpr int kLogE = ql::log_run<E>();
  // Stage counts as compile-time constants (no exits between the stages, whose joins cost register
  // moves), for rotations at least a run long; shorter ones stay in registers.
  if (a.log_l < kLogE) {
    fwt_gpu::register_butterflies(v, a.log_l);
  } else {
    fwt_gpu::register_butterflies(v, kLogE);
    switch (min(a.log_l - kLogE, 5)) {
      case 1: lane_butterflies<1>(v); break;
      case 2: lane_butterflies<2>(v); break;
      case 3: lane_butterflies<3>(v); break;
      case 4: lane_butterflies<4>(v); break;
      case 5: lane_butterflies<5>(v); break;
      default: break;
    }
  }
  constexpr int s = ql::turn_shift<E>();
  switch (a.log_l - s) {  // (at most log2 E: the span holds the rotation)
    case 1: turn_stage<E, 1>(v, turn); break;
    case 2: turn_stage<E, 2>(v, turn); break;
    case 3: turn_stage<E, 3>(v, turn); break;
    case 4: turn_stage<E, 4>(v, turn); break;
    case 5:
      if constexpr (E == 32) turn_stage<E, 5>(v, turn);
      break;
    default: break;
  }
  if constexpr (E == 32)  // (m·2^k rotations take runs of 32)
    if (a.factor > 1) return factor_stage<E>(a, v, turn);  // (it scales)
  if (a.scaled)
#pragma unroll
    for (int i = 0; i < E; ++i) v[i] *= a.scale;
}

// A group's largest magnitude from the thread's part, INF standing for "holds NaN or ±Inf" (no
// finite value reaches it), reduced over the lanes and warps that share the group.
template <int E>
__device__ __forceinline__ float group_amax(const FusedArgs& a, float part, float* partials) {
  constexpr int kLogE = ql::log_run<E>();
  const int lanes_bits = min(a.log_g - kLogE, 5);
#pragma unroll
  for (int b = 0; b < 5; ++b) {
    if (b >= lanes_bits) break;
    part = fmaxf(part, __shfl_xor_sync(kFullMask, part, 1 << b));
  }
  if (a.log_g > kLogE + 5) {
    const int warp = threadIdx.x >> 5, per = 1 << (a.log_g - kLogE - 5);
    if ((threadIdx.x & 31) == 0) partials[warp] = part;
    __syncthreads();
    const int first = warp & ~(per - 1);
    for (int w = first; w < first + per; ++w) part = fmaxf(part, partials[w]);
  }
  return part;
}

// qf::element_code, the same codes in a few instructions: the float8 formats by the hardware's
// conversion (cvt.rn.satfinite: nearest even, saturating; sm_89+, and cuda_fp8.h's exact emulation
// before), E2M1 by rounding the mantissa to one bit (qf::encode_e2m1), MX's power-of-two scaling as
// a product (exact, or rounded as ldexp rounds into the subnormals). NaN products (groups holding
// NaN or ±Inf) take the shared function.
// The shared function for the rare NaN products, not inlined: one copy, not one per element.
__device__ __noinline__ std::uint8_t element_code_of_nan(QuantFormat to, float v, qf::GroupScale sc) {
  return qf::element_code(to, v, sc);
}

template <QuantFormat kTo>
__device__ __forceinline__ std::uint8_t fast_code(float v, const qf::GroupScale& sc, float mx_factor) {
  if constexpr (kTo == QuantFormat::float8_e4m3fn || kTo == QuantFormat::float8_e5m2) {
    const float y = v * sc.prescale * sc.multiplier;
    if (isnan(y)) return element_code_of_nan(kTo, v, sc);
    return __nv_cvt_float_to_fp8(y, __NV_SATFINITE, kTo == QuantFormat::float8_e4m3fn ? __NV_E4M3 : __NV_E5M2);
  } else if constexpr (kTo == QuantFormat::mxfp4) {
    if (sc.code == 255) return 0;
    const float y = v * mx_factor;
    return isnan(y) ? element_code_of_nan(kTo, v, sc) : qf::encode_e2m1(y);
  } else if constexpr (kTo == QuantFormat::nvfp4) {
    if (!(sc.multiplier > 0.0f)) return 0;
    const float y = v * sc.multiplier;
    return isnan(y) ? element_code_of_nan(kTo, v, sc) : qf::encode_e2m1(y);
  } else {
    return qf::element_code(kTo, v, sc);  // int8, int4: a rounding and a clamp already
  }
}

// fast_code of a group without NaN or ±Inf (then every product is finite): no NaN tests; the
// integers by the hardware's round-to-nearest-even conversion and a clamp.
template <QuantFormat kTo>
__device__ __forceinline__ std::uint8_t finite_code(float v, const qf::GroupScale& sc, float mx_factor) {
  if constexpr (kTo == QuantFormat::int8 || kTo == QuantFormat::int4) {
    constexpr int kLimit = kTo == QuantFormat::int8 ? 127 : 7;
    // Clamped first (to integers: the same codes as clamping the rounded value), rounded by the float
    // adder rather than the slower float-to-int conversion.
    const float y = fminf(fmaxf(v * sc.prescale * sc.multiplier, -float(kLimit)), float(kLimit));
    return std::uint8_t(qf::rint_bits(y) & (kTo == QuantFormat::int8 ? 0xFF : 0x0F));
  } else if constexpr (kTo == QuantFormat::mxfp4) {
    return qf::encode_e2m1(v * mx_factor);
  } else if constexpr (kTo == QuantFormat::nvfp4) {
    return sc.multiplier > 0.0f ? qf::encode_e2m1(v * sc.multiplier) : 0;
  } else {
    return fast_code<kTo>(v, sc, mx_factor);
  }
}

// 2^(127 - code), MX's element scaling for an E8M0 scale code below 255.
__device__ __forceinline__ float mx_factor_of(const qf::GroupScale& sc) {
  return sc.code == 255 ? 0.0f : ldexpf(1.0f, 127 - int(sc.code));
}

// qf::group_scale of a group whose largest magnitude is amax (INF: it holds NaN or ±Inf); NVFP4's
// E4M3 scale of a finite group by the hardware's conversions (the host's encode and decode on these
// values: nearest even, saturating, exact back to float).
template <QuantFormat kTo>
__device__ __forceinline__ qf::GroupScale scale_of_group(float amax, float encode) {
  if (amax == INFINITY) return qf::group_scale(kTo, NAN, encode);
  if constexpr (kTo == QuantFormat::nvfp4) {
    qf::GroupScale g{0.0f, 0, 0.0f, 1.0f};
    g.code = __nv_cvt_float_to_fp8(amax / 6.0f * encode, __NV_SATFINITE, __NV_E4M3);
    const float d = __half2float(__half(__nv_cvt_fp8_to_halfraw(g.code, __NV_E4M3)));
    g.multiplier = d > 0.0f ? encode / d : 0.0f;
    return g;
  } else {
    return qf::group_scale(kTo, amax, encode);
  }
}

// Whether the rotation stages need the span in shared memory (the turn, the H_m stage); the group
// maxima's warp partials follow it.
template <int E>
IRONKERNELS_HD bool uses_span_smem(const FusedArgs& a) {
  return a.log_l > ql::turn_shift<E>() || a.factor > 1;
}

__device__ __forceinline__ float magnitude(float v) { return isfinite(v) ? fabsf(v) : INFINITY; }

// kTo: the format, a template parameter so that each kernel holds only its own encoding (the
// 1024-thread one has 64 registers).
template <class In, int E, QuantFormat kTo>
__global__ void __launch_bounds__(E == 16 ? 512 : 1024, 1) fwt_quantize_fused_kernel(const FusedArgs a) {
  extern __shared__ __align__(16) float smem[];
  const std::int64_t span = std::int64_t(blockDim.x) * E;
  const std::int64_t e0 = blockIdx.x * span + std::int64_t(threadIdx.x) * E;
  const bool valid = e0 < a.total;  // (x's elements are whole rotations and groups: all or none of a run)
  float v[E];
  if (valid) load_run<In, E>(a, e0, v);
  else
#pragma unroll
    for (int i = 0; i < E; ++i) v[i] = 0.0f;
  rotate<E>(a, v, smem);
  float* partials = smem + (uses_span_smem<E>(a) ? span : 0);

  if (a.amax_only) {  // nvfp4's tensor amax: the largest finite magnitude
    float m = 0.0f;
#pragma unroll
    for (int i = 0; i < E; ++i) m = isfinite(v[i]) ? fmaxf(m, fabsf(v[i])) : m;
    for (int d = 16; d; d >>= 1) m = fmaxf(m, __shfl_xor_sync(kFullMask, m, d));
    // One atomic per block at most, and only where it raises the maximum so far: one per warp on
    // one address serialised (NVFP4 at 2^15 rows spent most of its time there).
    if ((threadIdx.x & 31) == 0) partials[threadIdx.x >> 5] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < int(blockDim.x >> 5); ++w) m = fmaxf(m, partials[w]);
      if (m > 0.0f && __float_as_uint(m) > *static_cast<volatile unsigned*>(a.amax_bits))
        atomicMax(a.amax_bits, __float_as_uint(m));  // (magnitudes: their bits order as the floats do)
    }
    return;
  }
  const float encode =
      kTo == QuantFormat::nvfp4
          ? qf::tensor_encode_scale(a.global_amax > 0.0f ? a.global_amax : __uint_as_float(*a.amax_bits))
          : 1.0f;
  if (kTo == QuantFormat::nvfp4 && blockIdx.x == 0 && threadIdx.x == 0) *a.tensor_scale = 1.0f / encode;
  constexpr int kLogE = ql::log_run<E>();
  const std::int64_t groups = a.n >> a.log_g;
  auto store_scale = [&](std::int64_t first, const qf::GroupScale& sc) {  // the scale of the group from element `first`
    const std::int64_t gi = first >> a.log_g;
    const std::int64_t at = a.swizzled ? qf::swizzled_scale_index(gi / groups, gi % groups, groups) : gi;
    if (qf::fixed_group(kTo)) static_cast<std::uint8_t*>(a.scales)[at] = sc.code;
    else static_cast<float*>(a.scales)[at] = sc.stored_value;
  };
  const bool packed = qf::packs_pairs(kTo);
  // The codes of registers [16h, 16h + 16) as they are stored (bytes, or nibbles with element 2i low).
  auto store_codes = [&](int h, const unsigned (&words)[4]) {
    if (packed) *reinterpret_cast<uint2*>(a.q + (e0 + 16 * h) / 2) = make_uint2(words[0], words[1]);
    else __stcs(reinterpret_cast<uint4*>(a.q + e0 + 16 * h), make_uint4(words[0], words[1], words[2], words[3]));
  };
  auto put = [&](unsigned (&words)[4], int i, std::uint8_t code) {  // i: the register within its 16
    if (packed) words[i / 8] |= unsigned(code) << (4 * (i % 8));
    else words[i / 4] |= unsigned(code) << (8 * (i % 4));
  };
  if (a.log_g >= kLogE) {  // one group over the thread's run (and its neighbours')
    float m = 0.0f;
#pragma unroll
    for (int i = 0; i < E; ++i) m = ptx::max_nan(m, fabsf(v[i]));
    m = group_amax<E>(a, isfinite(m) ? m : INFINITY, partials);
    const qf::GroupScale sc = scale_of_group<kTo>(m, encode);
    if (valid && (e0 & ((std::int64_t(1) << a.log_g) - 1)) == 0) store_scale(e0, sc);
    if (m == INFINITY) {  // the group holds NaN or ±Inf: the shared function, element by element
#pragma unroll
      for (int h = 0; h < E / 16; ++h) {
        unsigned words[4] = {};
#pragma unroll
        for (int i = 0; i < 16; ++i) put(words, i, element_code_of_nan(kTo, v[16 * h + i], sc));
        if (valid) store_codes(h, words);
      }
    } else {
      const float mx = kTo == QuantFormat::mxfp4 ? mx_factor_of(sc) : 0.0f;
      if (sc.prescale != 1.0f)  // (a group of magnitudes below about 1e-36: qf::GroupScale)
#pragma unroll
        for (int i = 0; i < E; ++i) v[i] *= sc.prescale;
      qf::GroupScale unit = sc;
      unit.prescale = 1.0f;
#pragma unroll
      for (int h = 0; h < E / 16; ++h) {
        unsigned words[4] = {};
        if constexpr (kTo == QuantFormat::float8_e4m3fn || kTo == QuantFormat::float8_e5m2) {
#pragma unroll
          for (int i = 0; i < 16; i += 2)  // two codes per conversion, the first in the low byte
            words[i / 4] |= unsigned(__nv_cvt_float2_to_fp8x2(
                                make_float2(v[16 * h + i] * sc.multiplier, v[16 * h + i + 1] * sc.multiplier),
                                __NV_SATFINITE, kTo == QuantFormat::float8_e4m3fn ? __NV_E4M3 : __NV_E5M2))
                            << (8 * (i % 4));
        } else {
#pragma unroll
          for (int i = 0; i < 16; ++i) put(words, i, finite_code<kTo>(v[16 * h + i], unit, mx));
        }
        if (valid) store_codes(h, words);
      }
    }
  } else {  // groups of at most 16 inside the run, 16 registers at a time: each group's largest
            // magnitude at its first register
#pragma unroll
    for (int h = 0; h < E / 16; ++h) {
      float m[16];
#pragma unroll
      for (int i = 0; i < 16; ++i) m[i] = magnitude(v[16 * h + i]);
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        if (b >= a.log_g) break;
#pragma unroll
        for (int i = 0; i < 16; ++i)
          if (!(i >> b & 1)) m[i] = fmaxf(m[i], m[i | 1 << b]);
      }
      unsigned words[4] = {};
      qf::GroupScale sc{};
      float mx = 0.0f;
#pragma unroll
      for (int i = 0; i < 16; ++i) {
        if ((i & ((1 << a.log_g) - 1)) == 0) {  // a group starts here: its scale, once
          sc = scale_of_group<kTo>(m[i], encode);
          mx = kTo == QuantFormat::mxfp4 ? mx_factor_of(sc) : 0.0f;
          if (valid) store_scale(e0 + 16 * h + i, sc);
        }
        put(words, i, fast_code<kTo>(v[16 * h + i], sc, mx));
      }
      if (valid) store_codes(h, words);
    }
  }
}

template <class In, int E, QuantFormat kTo>
void launch_kernel(const FusedArgs& a, std::int64_t span, cudaStream_t stream) {
  const std::size_t bytes = (uses_span_smem<E>(a) ? std::size_t(span) * sizeof(float) : 0) + 32 * sizeof(float);
  auto kernel = fwt_quantize_fused_kernel<In, E, kTo>;
  if (bytes > 48 * 1024)
    IK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  const std::int64_t blocks = (a.total + span - 1) / span;
  kernel<<<unsigned(blocks), unsigned(span / E), bytes, stream>>>(a);
  IK_CUDA_CHECK_LAUNCH("fwt_quantize_fused_kernel");
}

/// The kernel for each format (kTo a template parameter there).
template <class In, int E>
void launch_by_format(const FusedArgs& a, std::int64_t span, cudaStream_t stream) {
  switch (a.to) {
    case QuantFormat::float8_e4m3fn: return launch_kernel<In, E, QuantFormat::float8_e4m3fn>(a, span, stream);
    case QuantFormat::float8_e5m2: return launch_kernel<In, E, QuantFormat::float8_e5m2>(a, span, stream);
    case QuantFormat::int8: return launch_kernel<In, E, QuantFormat::int8>(a, span, stream);
    case QuantFormat::int4: return launch_kernel<In, E, QuantFormat::int4>(a, span, stream);
    case QuantFormat::mxfp4: return launch_kernel<In, E, QuantFormat::mxfp4>(a, span, stream);
    case QuantFormat::nvfp4: return launch_kernel<In, E, QuantFormat::nvfp4>(a, span, stream);
  }
}

}  // namespace ironkernels::detail::quantize_fused
