#pragma once
// What a thread does with its values in the FWT kernels: the compute type per dtype, the kernel
// arguments and row offsets, 16-byte vector loads and stores (and the scalar fallback), butterflies on
// register, value and lane bits, and the contract's scale.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "fwt/fwt_plan.hpp"

namespace ironkernels::detail::fwt_gpu {

template <class T>
struct Compute {
  using type = float;
};
template <>
struct Compute<double> {
  using type = double;
};
// Integers as unsigned: wrapping sums and products are defined there (two's complement).
template <>
struct Compute<std::uint32_t> {
  using type = std::uint32_t;
};
template <>
struct Compute<std::uint64_t> {
  using type = std::uint64_t;
};

struct KernelArgs {
  const void* x;
  void* y;
  std::int64_t rows;
  int log_n;
  int batch_ndim;
  std::int64_t shape[kFwtBatchCapacity];
  std::int64_t xs[kFwtBatchCapacity];
  std::int64_t ys[kFwtBatchCapacity];
  std::int64_t x_axis_stride, y_axis_stride;  // the shared-memory kernel's (the tile kernels' are 1)
  double scale;
  std::uint64_t int_scale;  // integer dtypes: the scale as a wrapping product
  bool scaled;
  std::int64_t tiles;  // tile kernel: number of tiles (rows per tile depend on the configuration)
  int skip_low_bits;   // tile kernel: the lowest value bits left untransformed (H ⊗ I_{2^skip}: complex parts)
  int order;           // tile kernel: 0 natural, else (FwtOrder) the output order, applied as the tile leaves
};

// σ⁻¹(j) for σ(k), the natural index of output k in sequency or dyadic order (natural_index in
// fwt.cpp: the bits of k, or of its Gray code, reversed over log_n bits): j's bits reversed, then
// (sequency) the inverse Gray code, a prefix xor.
__device__ __forceinline__ std::uint32_t inverse_order_index(std::uint32_t j, int log_n, bool sequency) {
  if (log_n == 0) return 0;
  std::uint32_t g = __brev(j) >> (32 - log_n);
  if (sequency)
    for (int s = 1; s < 32; s <<= 1) g ^= g >> s;
  return g;
}
__device__ __forceinline__ std::uint32_t order_index(std::uint32_t i, int log_n, bool sequency) {
  return __brev(sequency ? i ^ (i >> 1) : i) >> (32 - log_n);
}

// Element offsets of row `r` (the common one- and zero-dimensional batches skip the divisions).
__device__ __forceinline__ void row_offsets(const KernelArgs& a, std::int64_t r, std::int64_t& xo,
                                            std::int64_t& yo) {
  if (a.batch_ndim == 1) {
    xo = r * a.xs[0];
    yo = r * a.ys[0];
    return;
  }
  xo = yo = 0;
  for (int d = a.batch_ndim - 1; d >= 0; --d) {
    const std::int64_t i = r % a.shape[d];
    r /= a.shape[d];
    xo += i * a.xs[d];
    yo += i * a.ys[d];
  }
}

// ------------------------------------------------------------------ 16-byte vector I/O
// Loads are plain; stores are streaming (.cs, evict-first) or plain by row length
// (evict_first_stores below).
template <class T, int V>
struct VecIO;

__device__ __forceinline__ uint4 load16(const void* p) { return *static_cast<const uint4*>(p); }
template <bool kEvictFirst, class V4>
__device__ __forceinline__ void store16(void* p, const V4& v) {
  if constexpr (kEvictFirst) __stcs(static_cast<V4*>(p), v);
  else *static_cast<V4*>(p) = v;
}

// Every dtype's vector travels as a raw uint4 (global load or shared-memory stage) and is unpacked
// into compute-type values when the butterflies start.
template <>
struct VecIO<float, 4> {
  __device__ static uint4 load_raw(const float* p) { return load16(p); }
  __device__ static void unpack(const uint4& q, float (&o)[4]) {
    o[0] = __uint_as_float(q.x), o[1] = __uint_as_float(q.y), o[2] = __uint_as_float(q.z), o[3] = __uint_as_float(q.w);
  }
  template <bool kEvictFirst>
  __device__ static void store(float* p, const float (&i)[4]) {
    store16<kEvictFirst>(p, make_float4(i[0], i[1], i[2], i[3]));
  }
};
template <class U>
struct VecIOInt {
  static constexpr int V = 16 / sizeof(U);
  __device__ static uint4 load_raw(const U* p) { return load16(p); }
  __device__ static void unpack(const uint4& q, U (&o)[V]) { memcpy(o, &q, 16); }
  template <bool kEvictFirst>
  __device__ static void store(U* p, const U (&i)[V]) {
    uint4 q;
    memcpy(&q, i, 16);
    store16<kEvictFirst>(p, q);
  }
};
template <>
struct VecIO<std::uint32_t, 4> : VecIOInt<std::uint32_t> {};
template <>
struct VecIO<std::uint64_t, 2> : VecIOInt<std::uint64_t> {};
template <>
struct VecIO<double, 2> {
  __device__ static uint4 load_raw(const double* p) { return load16(p); }
  __device__ static void unpack(const uint4& q, double (&o)[2]) {
    o[0] = __hiloint2double(int(q.y), int(q.x)), o[1] = __hiloint2double(int(q.w), int(q.z));
  }
  template <bool kEvictFirst>
  __device__ static void store(double* p, const double (&i)[2]) {
    store16<kEvictFirst>(p, make_double2(i[0], i[1]));
  }
};
// Two float32 values rounded to 16 bits and packed in one 32-bit word, the first in the low half.
template <class T>
__device__ __forceinline__ std::uint32_t pack_two(float a, float b) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __float22half2_rn(make_float2(a, b));
    return *reinterpret_cast<const std::uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __float22bfloat162_rn(make_float2(a, b));
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
}

template <class T2, float2 (*ToFloat2)(T2)>
struct Vec16bit {
  template <class T>
  __device__ static uint4 load_raw(const T* p) { return load16(p); }
  __device__ static void unpack(const uint4& q, float (&o)[8]) {
    const T2* h = reinterpret_cast<const T2*>(&q);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = ToFloat2(h[i]);
      o[2 * i] = f.x, o[2 * i + 1] = f.y;
    }
  }
  template <bool kEvictFirst, class T>
  __device__ static void store(T* p, const float (&in)[8]) {
    uint4 q;
    std::uint32_t* h = reinterpret_cast<std::uint32_t*>(&q);
#pragma unroll
    for (int i = 0; i < 4; ++i) h[i] = pack_two<T>(in[2 * i], in[2 * i + 1]);
    store16<kEvictFirst>(p, q);
  }
};
__device__ inline float2 half2_to_float2(__half2 h) { return __half22float2(h); }
__device__ inline float2 bf162_to_float2(__nv_bfloat162 h) { return __bfloat1622float2(h); }
template <>
struct VecIO<__half, 8> : Vec16bit<__half2, half2_to_float2> {};
template <>
struct VecIO<__nv_bfloat16, 8> : Vec16bit<__nv_bfloat162, bf162_to_float2> {};

// Scalar fallback (misaligned data, odd strides, rows shorter than a vector).
template <class T>
struct VecIO<T, 1> {
  using C = typename Compute<T>::type;
  __device__ static void load(const T* p, C (&o)[1]) { o[0] = static_cast<C>(*p); }
  __device__ static void store(T* p, const C (&i)[1]) { *p = static_cast<T>(i[0]); }
};
template <>
struct VecIO<__half, 1> {
  __device__ static void load(const __half* p, float (&o)[1]) { o[0] = __half2float(*p); }
  __device__ static void store(__half* p, const float (&i)[1]) { *p = __float2half_rn(i[0]); }
};
template <>
struct VecIO<__nv_bfloat16, 1> {
  __device__ static void load(const __nv_bfloat16* p, float (&o)[1]) { o[0] = __bfloat162float(*p); }
  __device__ static void store(__nv_bfloat16* p, const float (&i)[1]) { *p = __float2bfloat16_rn(i[0]); }
};



// One 16-byte chunk (4 floats or 2 doubles; smaller vectors element by element) from any address space.
template <class C, int N>
__device__ __forceinline__ void load_chunk(const C* p, C (&o)[N]) {
  if constexpr (N * sizeof(C) == 16 && std::is_integral_v<C>) {
    const uint4 q = *reinterpret_cast<const uint4*>(p);
    memcpy(o, &q, 16);
  } else if constexpr (N * sizeof(C) == 16 && sizeof(C) == 4) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    o[0] = q.x, o[1] = q.y, o[2] = q.z, o[3] = q.w;
  } else if constexpr (N * sizeof(C) == 16 && sizeof(C) == 8) {
    const double2 q = *reinterpret_cast<const double2*>(p);
    o[0] = q.x, o[1] = q.y;
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) o[i] = p[i];
  }
}

// The 16 bytes of one chunk of compute-type values, as one vector for a 16-byte shared store.
template <class C>
__device__ __forceinline__ uint4 chunk_bits(const C* p) {
  uint4 q;
  memcpy(&q, p, 16);
  return q;
}

// Butterfly on a pair: (a, b) <- (a + b, a - b).
template <class C>
__device__ __forceinline__ void bfly(C& a, C& b) {
  const C s = a + b;
  b = a - b;
  a = s;
}

// Butterflies of one bit of a thread's K vectors of V values, r[j][e]: value bit b (e against e + 2^b)
// or vector bit s (vector j against j + 2^s).
template <int K, int V, class C>
__device__ __forceinline__ void butterfly_value_bit(C (&r)[K][V], int b) {
#pragma unroll
  for (int j = 0; j < K; ++j)
#pragma unroll
    for (int e = 0; e < V; ++e)
      if (!(e & (1 << b))) bfly(r[j][e], r[j][e | (1 << b)]);
}
template <int K, int V, class C>
__device__ __forceinline__ void butterfly_vector_bit(C (&r)[K][V], int s) {
#pragma unroll
  for (int j = 0; j < K; ++j)
    if (!(j & (1 << s)))
#pragma unroll
      for (int e = 0; e < V; ++e) bfly(r[j][e], r[j | (1 << s)][e]);
}
// Lane bit b: the partner lane's value and a ±1 FMA (exact: the same rounding as an add or subtract).
// Integers: the partner's value plus or minus this one (wrapping).
template <int K, int V, class C>
__device__ __forceinline__ void butterfly_lane_bit(C (&r)[K][V], int lane, int b) {
  if constexpr (std::is_integral_v<C>) {
    const bool high = (lane >> b) & 1;
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const C partner = __shfl_xor_sync(0xffffffffu, r[j][e], 1 << b);
        r[j][e] = high ? partner - r[j][e] : partner + r[j][e];
      }
  } else {
    const C sign = (lane >> b) & 1 ? C(-1) : C(1);
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int e = 0; e < V; ++e) r[j][e] = fma(sign, r[j][e], __shfl_xor_sync(0xffffffffu, r[j][e], 1 << b));
  }
}
// The contract's scale in the compute type (integers: modulo 2^32 / 2^64).
template <class C, class Args>
__device__ __forceinline__ C scale_value(const Args& a) {
  if constexpr (std::is_integral_v<C>) return a.scaled ? static_cast<C>(a.int_scale) : C(1);
  else return a.scaled ? static_cast<C>(a.scale) : C(1);
}
// The contract's scale (y = scale · H x), on a thread's values before they leave.
template <int K, int V, class C>
__device__ __forceinline__ void scale_held(C (&r)[K][V], const KernelArgs& a) {
  if (!a.scaled) return;
  const C sc = scale_value<C>(a);
#pragma unroll
  for (int j = 0; j < K; ++j)
#pragma unroll
    for (int e = 0; e < V; ++e) r[j][e] *= sc;
}

// H over the lowest `bits` bits of the index of v (a thread's registers), in place, bit 0 first.
template <int N, class C>
__device__ __forceinline__ void register_butterflies(C (&v)[N], int bits) {
#pragma unroll
  for (int bit = 0; (1 << bit) < N; ++bit) {
    if (bit >= bits) break;
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (!(i >> bit & 1)) {
        const C lo = v[i], hi = v[i | 1 << bit];
        v[i] = lo + hi;
        v[i | 1 << bit] = lo - hi;
      }
  }
}

// A float16 or bfloat16 value's bits as float, exactly.
__device__ __forceinline__ float widen_16bit(std::uint16_t bits, bool bfloat) {
  return bfloat ? __uint_as_float(std::uint32_t(bits) << 16) : __half2float(__ushort_as_half(bits));
}

}  // namespace ironkernels::detail::fwt_gpu
