#pragma once
// CUDA FWT kernels and their launchers, instantiated per dtype by fwt_<dtype>.cu.
//
// One read and one write of global memory; the row lives in registers (the longest float32 and
// float64 rows half at a time: SPLIT_TOP). A block transforms a tile of 2^TILE_BITS elements: one
// row of N = 2^n (n = TILE_BITS) or several short rows (then the bits >= n are row bits). Each
// element's index bits are owned as
//   [0, v)            inside the thread's 16-byte vectors          (register butterflies)
//   [v, v+5)          the lane                                     (__shfl_xor_sync butterflies)
//   [v+5, v+5+h)      which of the thread's K vectors              (register butterflies)
//   [v+5+h, TILE)     the warp                                     (corner turns through shared memory)
// so every load and store instruction of a warp covers 512 contiguous bytes. A corner turn swaps up
// to h warp bits with the h register-vector bits (already transformed) through shared memory, then
// those bits are butterflied in registers; the low v+5 bits never move, so the final layout still
// stores 512-byte segments. The per-bit stages commute, so their order does not change H_N.
// Shared memory is written and read as 16-byte vectors at 512-byte contiguous runs per warp:
// conflict-free without swizzling. The one exception is the lane turn (LANE_TURN, where it won):
// lane bits [v+2, v+5) trade places with three register bits inside each warp, so lanes then hold
// 64-byte runs, and both shared-memory exchanges XOR one address bit to stay conflict-free; the
// corner turn after it gives the lanes their loaded bits back.
//
// N is a template parameter (every stage and address weight is a compile-time constant). 16-bit
// rows do their first four stages on the tensor cores (HadamardMma), or (CHAINED_MMA, Hopper's
// 2^12 and 2^14) seven of their first eight in two chained mma stages (ChainedHadamardMma), which
// leaves the lanes no bits to shuffle. Off Hopper, 16-bit rows from 2^13 run on a resident grid
// whose next tiles' inputs are already in flight to shared memory (cp.async) and leave through bulk
// stores (cp.async.bulk, sm_90+). On Hopper 16-bit rows of 2^13 and 2^15 take fwt_single_exchange.cuh
// (see launch_tile). Float32 rows of 2^15 and float64 rows of 2^14 are split in halves (SPLIT_TOP): half
// a row in registers at a time, the other half in shared memory, two blocks per SM.
// Rows the vector path cannot take (misaligned, odd strides, batches that do not collapse to one
// stride) go to fwt_smem_kernel. bench/NOTES.md has the measurements behind each choice;
// bench/fwt_sweep.cu re-measures the configurations on another GPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

#include "common/ptx.cuh"
#include "core/cuda_check.hpp"
#include "fwt/fwt_layouts.cuh"
#include "fwt/fwt_plan.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/fwt.hpp"

namespace ironkernels::detail::fwt_gpu {


template <class T>
struct Compute {
  using type = float;
};
template <>
struct Compute<double> {
  using type = double;
};

struct KernelArgs {
  const void* x;
  void* y;
  std::int64_t rows;
  int log_n;
  int batch_ndim;
  std::int64_t shape[kFwtMaxBatchDims];
  std::int64_t xs[kFwtMaxBatchDims];
  std::int64_t ys[kFwtMaxBatchDims];
  double scale;
  bool scaled;
  std::int64_t tiles;  // tile kernel: number of tiles (rows per tile depend on the configuration)
};

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

// ------------------------------------------------------------------ tensor-core radix-16 stage
// mma.sync m16n8k16 with float32 accumulation (sm_80+): the 16-bit inputs go in as loaded, every
// product with the ±1 Hadamard entries is exact and the sums are float32, so the contract holds.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr bool kTensorCoreArch = false;
#else
constexpr bool kTensorCoreArch = true;
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr bool kBulkCopyArch = false;  // cp.async.bulk (sm_90+); older GPUs store the same kernels' rows directly
#else
constexpr bool kBulkCopyArch = true;
#endif

// D = A·B, m16n8k16 with float32 accumulation.
template <class T>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint4& a, const std::uint32_t (&b)[2]) {
  ptx::mma_m16n8k16_f32<T>(d, a, b, {0.f, 0.f, 0.f, 0.f});
}

// The stage transforms logical bits {0, 2, v, v+1} of a 16-byte vector of eight 16-bit values (v = 3),
// registers q.x..q.w = values {0,1}, {2,3}, {4,5}, {6,7}, taken as the A fragment (a0..a3) as loaded:
// its column index k is (bit 0 = the half of a 32-bit register, bits 1-2 = lane % 4 = logical bits
// 3-4, bit 3 = a2/a3 = logical bit 2); its row index (lane / 4, and a1/a3 = row + 8 = logical bit 1)
// runs over independent vectors. H_16 is invariant under a common permutation of the bits of its
// row and column index, so B = the two 16×8 halves of H_16 in the same k order, and D comes back
// with the inputs' bit assignment: no register moves around the mma at all.
template <class T>
struct HadamardMma {
  std::uint32_t b[2][2];  // B fragments of H_16[:, 0:8] and H_16[:, 8:16]
  __device__ explicit HadamardMma(int lane) {
    const std::uint32_t one = std::is_same_v<T, __half> ? 0x3C00u : 0x3F80u;  // +1.0
    const std::uint32_t minus = one | 0x8000u;                                 // -1.0
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int nb = 0; nb < 2; ++nb)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int n = g + 8 * nb, k = 2 * t + 8 * r;
        const std::uint32_t lo = __popc(k & n) & 1 ? minus : one;
        const std::uint32_t hi = __popc((k + 1) & n) & 1 ? minus : one;
        b[nb][r] = lo | (hi << 16);
      }
  }
  // One vector of each of the 32 lanes. D rows g (logical bit 1 = 0) are d0, d1 and rows g + 8
  // (bit 1 = 1) d2, d3; the columns n < 8 (bit 2 = 0) come from b[0], n >= 8 (bit 2 = 1) from b[1].
  __device__ void apply(const uint4& q, float (&o)[8]) const {
    float lo[4], hi[4];
    mma_m16n8k16<T>(lo, q, b[0]);
    mma_m16n8k16<T>(hi, q, b[1]);
    o[0] = lo[0], o[1] = lo[1], o[2] = lo[2], o[3] = lo[3];
    o[4] = hi[0], o[5] = hi[1], o[6] = hi[2], o[7] = hi[3];
  }
  // H·(p + q) or (MINUS) H·(p - q) of two vectors, the second product accumulated onto the first
  // (with -H for the difference): a split row's top bit, butterflied as its 16-bit inputs come in.
  __device__ void apply_sum(const uint4& p, const uint4& q, bool minus, float (&o)[8]) const {
    const std::uint32_t flip = minus ? 0x80008000u : 0u;  // the sign bits of both 16-bit halves
    const std::uint32_t bq[2][2] = {{b[0][0] ^ flip, b[0][1] ^ flip}, {b[1][0] ^ flip, b[1][1] ^ flip}};
    float lo[4], hi[4];
    mma_m16n8k16<T>(lo, p, b[0]);
    mma_m16n8k16<T>(hi, p, b[1]);
    ptx::mma_m16n8k16_f32<T>(lo, q, bq[0], lo);
    ptx::mma_m16n8k16_f32<T>(hi, q, bq[1], hi);
    o[0] = lo[0], o[1] = lo[1], o[2] = lo[2], o[3] = lo[3];
    o[4] = hi[0], o[5] = hi[1], o[6] = hi[2], o[7] = hi[3];
  }
};

// Two chained tensor-core stages (CHAINED_MMA in fwt_tile_kernel): the three lane / 4 bits the
// radix-16 stage leaves go through a second mma (tf32) instead of three shuffle stages (a SHFL and an
// FFMA per value and bit: 6 instructions per value, against about 2.5 here).
// Stage 1 (m16n8k16) takes the data as the B operand, two fragments per 16-byte vector, (q.x, q.z)
// and (q.y, q.w): k = (half, lane % 4, fragment register) = logical (0, 3 4, 2), n = lane / 4 =
// logical 5-7, and logical 1 picks the fragment. A = H_16 with its rows permuted (sigma; H is
// invariant under a common bit permutation of row and column, so the permutation only chooses where
// each output bit lands) puts logical 0 on the row-plus-8 register pair (c2/c3) and logical 2-4 on
// lane / 4, while D's columns (the untouched logical 5-7) sit on (c0/c1, lane % 4). Stage 2
// (m16n8k8 tf32) takes D as its A fragment as it is, (c0, c2, c1, c3): k = (lane % 4, a2/a3) =
// logical (6 7, 5); B = H_8 with its columns permuted (tau) puts the outputs on the same places.
// The float32 values enter as hi + lo (hi: the top 19 bits, exact in tf32; lo: the rest, which the
// tensor cores truncate to tf32), so the stage keeps float32 accuracy.
//   loaded:         e 0 1 2, lane 3 4 5 6 7
//   after stage 2:  registers r[4f + i]: f = logical 1, i = (c-pair: logical 5, c2/c3: logical 0);
//                   lane % 4 = logical 6 7, lane / 4 = logical 2 3 4
// For the 16-byte stores the values are packed in pairs over logical 0, and one shuffle swaps
// logical 5 (which packed register) with logical 2 (lane bit 2): each thread then holds 8
// consecutive values, and logical 3-7 sit on lane bits (3, 4, 2, 0, 1). tests/cpp/test_fwt_layouts.cu
// runs this data flow on the host with the fragment layouts PTX specifies.


template <class T>
struct ChainedHadamardMma {
  uint4 a1;            // A fragment of H_16 with rows sigma-permuted (f16 / bf16 ±1)
  std::uint32_t b2[2];  // B fragment of H_8 with columns tau-permuted (tf32 ±1)
  __device__ explicit ChainedHadamardMma(int lane) {
    const std::uint32_t one = std::is_same_v<T, __half> ? 0x3C00u : 0x3F80u, minus = one | 0x8000u;
    const int g = lane >> 2, t = lane & 3;
    auto h16 = [&](int m, int k) { return __popc(ChainedMmaLayout::sigma(m) & k) & 1 ? minus : one; };
    auto pair = [&](int m, int k) { return h16(m, k) | h16(m, k + 1) << 16; };
    a1 = make_uint4(pair(g, 2 * t), pair(g + 8, 2 * t), pair(g, 2 * t + 8), pair(g + 8, 2 * t + 8));
    auto h8 = [&](int k, int n) { return __popc(k & ChainedMmaLayout::tau(n)) & 1 ? 0xBF800000u : 0x3F800000u; };
    b2[0] = h8(t, g), b2[1] = h8(t + 4, g);
  }
  // Both stages on one vector: o[4f + i] holds logical 1 = f and stage 2's D register i.
  __device__ void apply(const uint4& q, float (&o)[8]) const {
    const std::uint32_t frag[2][2] = {{q.x, q.z}, {q.y, q.w}};
#pragma unroll
    for (int f = 0; f < 2; ++f) {
      float d[4];
      mma_m16n8k16<T>(d, a1, frag[f]);
      float hi[4], lo[4];
      const int order[4] = {0, 2, 1, 3};  // the A fragment of stage 2: (c0, c2, c1, c3)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        hi[i] = __uint_as_float(__float_as_uint(d[order[i]]) & 0xFFFFE000u);
        lo[i] = d[order[i]] - hi[i];
      }
      const float zero[4] = {0.f, 0.f, 0.f, 0.f};
      float acc[4], out[4];
      ptx::mma_m16n8k8_tf32(acc, lo, b2, zero);
      ptx::mma_m16n8k8_tf32(out, hi, b2, acc);
#pragma unroll
      for (int i = 0; i < 4; ++i) o[4 * f + i] = out[i];
    }
  }
};

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
  if constexpr (N * sizeof(C) == 16 && sizeof(C) == 4) {
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

// Warps per block when rows fit one warp (several rows per warp): one, so that a finished warp's
// slot on the SM is refilled at once instead of waiting for the block's other warps (sweep on
// H200: one-warp rows +0.5-1.5% against 4 warps per block). A macro only so that
// bench/fwt_sweep.cu can be built with another value to compare.
#ifndef IRONKERNELS_FWT_LOCAL_WARPS
#define IRONKERNELS_FWT_LOCAL_WARPS 1
#endif
constexpr int kLocalWarps = IRONKERNELS_FWT_LOCAL_WARPS;

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
template <int K, int V, class C>
__device__ __forceinline__ void butterfly_lane_bit(C (&r)[K][V], int lane, int b) {
  const C sign = (lane >> b) & 1 ? C(-1) : C(1);
#pragma unroll
  for (int j = 0; j < K; ++j)
#pragma unroll
    for (int e = 0; e < V; ++e) r[j][e] = fma(sign, r[j][e], __shfl_xor_sync(0xffffffffu, r[j][e], 1 << b));
}
// The contract's scale (y = scale · H x), on a thread's values before they leave.
template <int K, int V, class C>
__device__ __forceinline__ void scale_held(C (&r)[K][V], const KernelArgs& a) {
  if (!a.scaled) return;
  const C sc = static_cast<C>(a.scale);
#pragma unroll
  for (int j = 0; j < K; ++j)
#pragma unroll
    for (int e = 0; e < V; ++e) r[j][e] *= sc;
}
// Resident blocks per SM of the architecture being compiled (a larger launch bound is ignored, with a
// ptxas warning): 16 on sm_86/87, 24 on sm_89, 32 elsewhere.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870)
constexpr int kMaxBlocksPerSm = 16;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 890
constexpr int kMaxBlocksPerSm = 24;
#else
constexpr int kMaxBlocksPerSm = 32;
#endif
// Blocks per SM the register allocation must leave room for, so that `occ_warps` warps fit on an SM
// (at most 65536 / (32·occ_warps) registers per thread: 64 for 32 warps, 128 for 16); 0 = no cap.
constexpr int min_blocks(int warps, int occ_warps) {
  const int blocks = occ_warps <= warps ? 1 : occ_warps / warps;
  return blocks < kMaxBlocksPerSm ? blocks : kMaxBlocksPerSm;
}

// Warps per CTA for rows of 2^n_cta elements with V-element vectors and K vectors per thread.
constexpr int tile_warps(int v, int h, int n_cta) {
  return n_cta <= v + 5 + h ? kLocalWarps : 1 << (n_cta - (v + 5 + h));
}

/// Shared memory for the corner turns (or the cluster exchange) of a tile configuration. A turn in
/// TURN_PASSES = 2 passes moves half the values at a time (see fwt_tile_kernel) through half the bytes.
template <class T, int V, int K, int LOG_N, int CLUSTER, int TURN_PASSES = 1>
constexpr int turn_smem_bytes() {
  using C = typename Compute<T>::type;
  constexpr int v = ilog2(V), h = ilog2(K), kN = LOG_N - ilog2(CLUSTER);
  constexpr int tile_bits = v + 5 + h + ilog2(tile_warps(v, h, kN));
  return (kN > v + 5 + h || CLUSTER > 1) ? (int(sizeof(C)) << tile_bits) / TURN_PASSES : 0;
}

// Input staging (STAGES > 0): every thread copies its own 16-byte input vectors of the next STAGES
// tiles into shared memory with cp.async, so the bytes in flight are bounded by shared memory, not
// by registers. Rows so long that the turn buffer plus whole stages exceed a block's shared memory
// stage only their first vectors per thread (the rest are loaded when the tile starts).
constexpr int kMaxBlockSmem = 227 * 1024;
/// The corner-turn buffer plus each warp's lane-turn buffer (one round: 2^m vectors of 16 bytes per
/// lane), or (LANE_TURN_IN_TURN) the larger of the two when the lane turn uses the corner turn's bytes.
template <class T, int V, int K, int LOG_N, int CLUSTER, int TURN_PASSES = 1, bool LANE_TURN = false,
          bool LANE_TURN_IN_TURN = false>
constexpr int exchange_smem_bytes() {
  const int warps = tile_warps(ilog2(V), ilog2(K), LOG_N - ilog2(CLUSTER));
  const int m = lane_turn_bits(LANE_TURN, ilog2(K));
  const int turn = turn_smem_bytes<T, V, K, LOG_N, CLUSTER, TURN_PASSES>(), lane = m > 0 ? warps * (32 << m) * 16 : 0;
  return LANE_TURN_IN_TURN ? (turn > lane ? turn : lane) : turn + lane;
}
template <class T, int V, int K, int LOG_N, int STAGES, int TURN_PASSES = 1, bool LANE_TURN = false>
constexpr int staged_vectors() {
  if (STAGES <= 0) return 0;
  const int threads = 32 * tile_warps(ilog2(V), ilog2(K), LOG_N);
  const int room = kMaxBlockSmem - exchange_smem_bytes<T, V, K, LOG_N, 1, TURN_PASSES, LANE_TURN>();
  int vectors = K;
  while (vectors > 0 && STAGES * vectors * threads * 16 > room) vectors /= 2;
  return vectors;
}

/// Dynamic shared memory of a tile configuration: corner turns, lane turns, input stages (SPLIT_TOP:
/// half a row in the compute type instead of the stages).
template <class T, int V, int K, int LOG_N, int CLUSTER, int STAGES, int TURN_PASSES = 1, bool LANE_TURN = false,
          bool SPLIT_TOP = false>
constexpr int tile_smem_bytes() {
  if constexpr (SPLIT_TOP)
    return exchange_smem_bytes<T, V, K, LOG_N - 1, CLUSTER, TURN_PASSES, LANE_TURN, true>() +
           (int(sizeof(typename Compute<T>::type)) << (LOG_N - 1));
  const int threads = 32 * tile_warps(ilog2(V), ilog2(K), LOG_N - ilog2(CLUSTER));
  return exchange_smem_bytes<T, V, K, LOG_N, CLUSTER, TURN_PASSES, LANE_TURN>() +
         (STAGES > 0 ? STAGES * staged_vectors<T, V, K, LOG_N, STAGES, TURN_PASSES, LANE_TURN>() * threads * 16 : 0);
}

/// Streaming (evict-first) global stores, or plain ones, by row length; loads are always plain.
/// Measured with bench/bench_fwt.py on H200, each hint everywhere, the kernels otherwise the same:
/// streaming loads never helped (float32 2^13: 0.94 of clone against 0.97 plain); plain stores ran
/// the shorter rows at 0.97-0.99 of clone against 0.96-0.97, but were far slower for float32/float64
/// rows of 2^13-2^14 (float32 2^13: 0.71), 16-bit rows of 2^12 and 2^14-2^15, and float64 2^15.
template <class T>
constexpr bool evict_first_stores(int log_n) {
  if constexpr (sizeof(T) == 2) return log_n == 12 || log_n >= 14;
  else return log_n == 13 || log_n == 14 || (sizeof(T) == 8 && log_n == 15);
}

// ------------------------------------------------------------------ bulk stores (sm_90+)
// A whole row leaves shared memory for global memory in one cp.async.bulk (the TMA engine), so the
// warps go on to the next row instead of queueing 16-byte stores behind the memory system. With
// kEvictFirst the lines are marked evict-first in L2, as the streaming stores are.
template <bool kEvictFirst>
__device__ __forceinline__ void bulk_store(void* dst, const void* src, unsigned bytes) {
  if constexpr (kEvictFirst) ptx::cp_async_bulk_shared_to_global(dst, src, bytes, ptx::create_policy_evict_first());
  else ptx::cp_async_bulk_shared_to_global(dst, src, bytes);
  ptx::cp_async_bulk_commit();
}
// Waits until the bulk copies committed by this thread have read their shared memory (kReadOnly)
// or have completed.
template <bool kReadOnly>
__device__ __forceinline__ void bulk_wait() {
  if constexpr (kReadOnly) ptx::cp_async_bulk_wait_read();
  else ptx::cp_async_bulk_wait();
}

// The row (or the rows) of a tile of 2^TILE_BITS elements. LOG_N is a template parameter so that
// every stage, bit position and address weight is a compile-time constant: no run-time branches
// (and the register moves they force) between the butterflies.
// CLUSTER > 1 (Hopper): a row is split over CLUSTER CTAs of one thread-block cluster, each holding
// 2^(LOG_N - log2 CLUSTER) contiguous elements; the last log2(CLUSTER) bits are butterflied by
// reading the partner CTAs' values from distributed shared memory.
// STAGES > 0: a resident grid loops over the tiles, with the next STAGES tiles' inputs in flight
// to shared memory (cp.async) while it transforms the current one; STAGES = 0 loads directly.
// TURN_PASSES = 2 (one corner turn with a register bit it does not move): the turn runs in two
// passes, over the values with that bit 0 and then 1, through half the shared memory, which leaves
// room for input stages or a second block.
// BULK_STORE (one row per tile, sm_90+): the row's outputs are written to the corner-turn buffer
// in memory order and leave in one bulk copy, whose read of shared memory is awaited only before
// the next tile's turn.
// LANE_TURN (rows that fill K >= 8 vectors of a warp): the three lane / 4 bits are swapped with
// three register bits through a warp-private shared-memory buffer (layout 0 of Layout), so they are
// butterflied in registers: two 16-byte shared accesses per 4 values instead of a shuffle and an
// FMA per value and bit.
// CHAINED_MMA (16-bit rows of >= 2^8, stored directly): logical bits 0 and 2-7 in two chained
// tensor-core stages (ChainedHadamardMma), so no lane bit is left to shuffle; the values leave in a permuted lane
// order (ChainedMmaLayout::lane_slot), each warp store still one 512-byte segment.
// SPLIT_TOP (one row per block, loaded and stored directly): the block holds half its row in
// registers at a time. The second half's inputs go to shared memory (cp.async) while the first half
// is transformed as a row of 2^(LOG_N-1); then that result is parked there in their place, the second
// half transformed the same way, and the row's top bit butterflied as both halves leave. Half the
// registers per row let two blocks share an SM, each with its own loads and stores in flight. Its
// lane turns use the corner turn's bytes (a barrier between them), so the two blocks still fit.
template <class T, int V, int K, int LOG_N, int CLUSTER, int OCC_WARPS, int STAGES, int TURN_PASSES = 1,
          bool BULK_STORE = false, bool LANE_TURN = false, bool CHAINED_MMA = false, bool SPLIT_TOP = false>
__global__ void __launch_bounds__(32 * tile_warps(ilog2(V), ilog2(K), LOG_N - SPLIT_TOP - ilog2(CLUSTER)),
                                  min_blocks(tile_warps(ilog2(V), ilog2(K), LOG_N - SPLIT_TOP - ilog2(CLUSTER)), OCC_WARPS))
    fwt_tile_kernel(const KernelArgs a) {
  using C = typename Compute<T>::type;
  constexpr int v = ilog2(V), h = ilog2(K), c_bits = ilog2(CLUSTER);
  constexpr int LOG_SUB = LOG_N - (SPLIT_TOP ? 1 : 0);
  constexpr int kN = LOG_SUB - c_bits;  // transform bits held in one CTA's registers at a time
  constexpr int WARPS = tile_warps(v, h, kN), w = ilog2(WARPS);
  [[maybe_unused]] constexpr int kThreads = 32 * WARPS;
  constexpr int kTileBits = v + 5 + h + w;
  static_assert(CLUSTER == 1 || kTileBits == kN, "a cluster holds exactly one row");
  static_assert(STAGES >= 0 && (STAGES == 0 || CLUSTER == 1), "cluster kernels load directly");
  static_assert(TURN_PASSES == 1 || (TURN_PASSES == 2 && CLUSTER == 1 && kN > v + 5 + h && w < h),
                "two turn passes need one corner turn with a register bit it does not move");
  static_assert(!SPLIT_TOP || (CLUSTER == 1 && kTileBits == kN && !BULK_STORE && STAGES == 0),
                "a split row is one block's, loaded and stored directly");
  static_assert(!BULK_STORE || (CLUSTER == 1 && kTileBits == kN &&
                                (int(sizeof(T)) << kN) <= turn_smem_bytes<T, V, K, LOG_N, 1, TURN_PASSES>()),
                "a bulk store takes one row per tile, staged in the corner-turn buffer");
  constexpr bool kBulkStore = BULK_STORE && kBulkCopyArch;
  constexpr int m = lane_turn_bits(LANE_TURN, h);
  static_assert(!LANE_TURN || (m > 0 && kN >= v + 5 + h && CLUSTER == 1 && (TURN_PASSES == 1 || m < h)),
                "a lane turn needs 8 vectors per thread inside one row, and keeps the turn's pass bit");
  using L = Layout<v, h, w, m>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  C* smem = reinterpret_cast<C*>(smem_raw);

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int rank = CLUSTER > 1 ? int(blockIdx.x % CLUSTER) : 0;  // 1-D clusters: consecutive blocks
  constexpr bool kSplit = SPLIT_TOP;
  constexpr bool kStaged = STAGES > 0;
  constexpr bool kEvictFirstStores = evict_first_stores<T>(LOG_N);
  constexpr int kRowsLog = kTileBits - kN;  // rows per tile, log2
  std::int64_t tile = blockIdx.x / CLUSTER;
  const T* __restrict__ x = static_cast<const T*>(a.x);
  T* __restrict__ y = static_cast<T*>(a.y);
  constexpr std::integral_constant<int, -1> kLoadLayout{};

  // Tile index of register vector j in layout t (see Layout: -1 loaded, then after each turn).
  auto tile_index = [&](auto t_const, int j) { return L::template index<decltype(t_const)::value>(lane, warp, j); };

  // Rows are a uniform stride apart (the launcher sends other batches to the fallback), so the
  // memory offset of a tile index is linear in its bits: bit p weighs 2^p inside a row and
  // 2^(p-n)·stride above. Each layout needs one per-thread base plus h per-register-bit weights.
  const std::int64_t xs = a.batch_ndim ? a.xs[0] : 0, ys = a.batch_ndim ? a.ys[0] : 0;
  auto weight = [&](int p, std::int64_t stride) -> std::int64_t {
    return p < kN ? std::int64_t(1) << p : stride << (p - kN);
  };
  // The thread's offset inside a tile (row 0 of the tile at offset 0) in the layout after t turns:
  // the sum of weight(p) over the set bits p of its lane and warp bits, i.e. the in-row part of its
  // tile index plus its row part times the stride (a few instructions instead of one conditional
  // 64-bit add per bit). Computed once, since the tile loop only adds row0 · stride.
  auto thread_base = [&](auto t_const, std::int64_t stride) {
    const int idx = tile_index(t_const, 0);  // register bits zero
    return (std::int64_t(rank) << kN) + (idx & ((1 << kN) - 1)) + std::int64_t(idx >> kN) * stride;
  };
  // Full tiles (all but possibly the last) skip the per-vector row check.
  auto in_tile = [&](std::int64_t r0, bool full, auto t_const, int j) {
    return full || r0 + (tile_index(t_const, j) >> kN) < a.rows;
  };
  auto is_full = [&](std::int64_t r0) { return r0 + (std::int64_t(1) << kRowsLog) <= a.rows; };
  // The offset of register vector j from the thread's base in the layout after t turns.
  auto vector_offset = [&](auto t_const, int j, std::int64_t stride) {
    constexpr int t = decltype(t_const)::value;
    std::int64_t off = 0;
#pragma unroll
    for (int s = 0; s < h; ++s)
      if ((j >> s) & 1) off += weight(L::reg_pos(t, s), stride);
    return off;
  };
  auto load_offset = [&](int j) { return vector_offset(kLoadLayout, j, xs); };
  constexpr int kTurns = kN > v + 5 + h ? turns_needed<v, h, w>() : 0;  // corner turns (warp bits)
  const std::int64_t x_base = thread_base(kLoadLayout, xs);
  const std::int64_t y_base = thread_base(std::integral_constant<int, kTurns>{}, ys);
  // Input vector j of the tile at row r0, raw, straight from global memory (zeros past the rows).
  auto global_vector = [&](std::int64_t r0, bool full, int j) {
    return in_tile(r0, full, kLoadLayout, j)
               ? VecIO<T, V>::load_raw(x + (r0 * xs + x_base) + load_offset(j))
               : make_uint4(0, 0, 0, 0);
  };

  // 16-bit rows of >= 32 elements: logical bits {0, 2, 3, 4} on the tensor cores (the row must
  // hold all four bits, or the mma would mix rows).
  constexpr bool kMma = sizeof(T) == 2 && kTensorCoreArch && kN >= 5;
  // CHAINED_MMA: logical bits 0 and 2-7 (the row must hold them) on the tensor cores, in two stages.
  constexpr bool kChained = CHAINED_MMA && kMma;
  static_assert(!CHAINED_MMA || (sizeof(T) == 2 && kN >= 8 && m == 0 && !BULK_STORE && CLUSTER == 1),
                "chained tensor-core stages: 16-bit rows of >= 256 elements, no lane turn, direct stores");
  [[maybe_unused]] const std::conditional_t<kChained, ChainedHadamardMma<T>, HadamardMma<T>> hadamard_mma(lane);
  auto done_by_mma = [&](int bit) { return kMma && (bit == 0 || bit == 2 || bit == v || bit == v + 1); };
  auto to_compute = [&](const uint4& q, C(&o)[V]) {
    if constexpr (kMma) {
      hadamard_mma.apply(q, o);
    } else {
      VecIO<T, V>::unpack(q, o);
    }
  };

  // Staged inputs: slot (stage, j) of this thread; only this thread writes and reads it.
  constexpr int kStagedVecs = staged_vectors<T, V, K, LOG_SUB, STAGES, TURN_PASSES, LANE_TURN>();
  [[maybe_unused]] uint4* const stages =
      reinterpret_cast<uint4*>(smem_raw + exchange_smem_bytes<T, V, K, LOG_SUB, CLUSTER, TURN_PASSES, LANE_TURN, kSplit>());
  auto staged_slot = [&](int s, int j) { return stages + (s * kStagedVecs + j) * kThreads + int(threadIdx.x); };
  auto stage_tile = [&](std::int64_t t, int s) {
    if (t < a.tiles) {
      const std::int64_t r0 = t << kRowsLog;
      const bool full = is_full(r0);
      const T* xt = x + (r0 * xs + x_base);
#pragma unroll
      for (int j = 0; j < kStagedVecs; ++j) {
        const bool valid = in_tile(r0, full, kLoadLayout, j);
        ptx::cp_async_16(staged_slot(s, j), valid ? xt + load_offset(j) : x, valid);
      }
    }
    ptx::cp_async_commit();  // an empty group past the last tile keeps the count
  };
  if constexpr (kStaged) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) stage_tile(tile + std::int64_t(s) * gridDim.x, s);
  }
  [[maybe_unused]] int stage = 0;

  constexpr int kChunk = 16 / sizeof(C);  // compute-type elements per 16-byte shared access
  constexpr int kChunks = V / kChunk > 0 ? V / kChunk : 1;
  constexpr int kChunkLen = V < kChunk ? V : kChunk;

  // SPLIT_TOP: this thread's slots (SplitSlots) first hold the raw second half of its row as loaded
  // (cp.async), then the first half's transform.
  [[maybe_unused]] uint4* const park = stages;  // after the exchange buffers, as the stages otherwise
  using Split = SplitSlots<K, kChunks>;
  auto park_slot = [&](int j, int c) { return park + Split::park(j, c, kThreads, int(threadIdx.x)); };
  auto top_slot = [&](int j) { return park + Split::raw(j, kThreads, int(threadIdx.x)); };
  if constexpr (kSplit) {  // in flight while the first half is transformed
    const T* xt = x + (tile * xs + x_base + (std::int64_t(1) << kN));
#pragma unroll
    for (int j = 0; j < K; ++j) ptx::cp_async_16(top_slot(j), xt + load_offset(j), true);
    ptx::cp_async_commit();
  }

  // The butterflies of one tile (or one half of a split row) held in r: the bits inside the vectors,
  // across a thread's vectors, across its lanes, and across the warps by corner turns.
  auto transform = [&](C(&r)[K][V]) {
    // Bits inside the vectors.
    if constexpr (kChained) {
      butterfly_value_bit(r, 2);  // logical 1 (ChainedHadamardMma's register layout)
    } else {
#pragma unroll
      for (int b = 0; b < v && b < kN; ++b)
        if (!done_by_mma(b)) butterfly_value_bit(r, b);
    }
    // Bits across the thread's vectors.
#pragma unroll
    for (int s = 0; s < h && v + 5 + s < kN; ++s) butterfly_vector_bit(r, s);
    // Lane bits by shuffles (those the tensor cores and the lane turn leave; none after the chained stages).
    if constexpr (!kChained) {
#pragma unroll
      for (int b = 0; b < 5 && v + b < kN; ++b)
        if (!done_by_mma(v + b) && !(b >= L::kLaneTurnLow && b < L::kLaneTurnLow + m)) butterfly_lane_bit(r, lane, b);
    }

    // Warp bits: corner turns through shared memory (only when a row spans several warps).
    // Two passes: register bit h - 1 is not moved by the (single) turn, so its logical bit is the
    // same before and after; each pass holds the elements with that bit fixed, indexed without it.
    using Turn = TurnBuffer<L, TURN_PASSES, kChunkLen>;
    auto smem_at = [&](auto t_const, int j, int c) { return Turn::template offset<decltype(t_const)::value>(lane, warp, j, c); };

    if constexpr (m > 0) {
      // Lane turn: one round per (higher register bits, 16-byte chunk), 2^m vectors of 16 bytes per
      // lane through this warp's buffer (slots: LaneTurnSlots).
      static_assert(m == 3, "LaneTurnSlots holds 8 rows of 8 slots per lane quad");
      // A split row's lane turns use the corner turn's bytes (its shared memory holds two blocks per SM).
      C* const buf = reinterpret_cast<C*>(smem_raw + (kSplit ? 0 : turn_smem_bytes<T, V, K, LOG_SUB, CLUSTER, TURN_PASSES>())) +
                     warp * ((32 << m) * kChunkLen);
#pragma unroll
      for (int hi = 0; hi < (K >> m); ++hi)
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
          __syncwarp();  // the previous round's reads are done
#pragma unroll
          for (int jl = 0; jl < (1 << m); ++jl)
#pragma unroll
            for (int e = 0; e < kChunkLen; ++e)
              buf[LaneTurnSlots::write(lane, jl) * kChunkLen + e] = r[(hi << m) | jl][c * kChunkLen + e];
          __syncwarp();
#pragma unroll
          for (int jl = 0; jl < (1 << m); ++jl)
#pragma unroll
            for (int e = 0; e < kChunkLen; ++e)
              r[(hi << m) | jl][c * kChunkLen + e] = buf[LaneTurnSlots::read(lane, jl) * kChunkLen + e];
        }
#pragma unroll
      for (int s = 0; s < m; ++s) butterfly_vector_bit(r, s);
    }
    auto turn = [&](auto t_const) {
      constexpr int t = decltype(t_const)::value;
#pragma unroll
      for (int pass = 0; pass < TURN_PASSES; ++pass) {
        auto in_pass = [&](int j) { return TURN_PASSES == 1 || ((j >> (h - 1)) & 1) == pass; };
        if (t > 0 || pass > 0) {
          __syncthreads();  // the previous turn's (pass's) reads are done
        } else if constexpr (kBulkStore) {
          if (threadIdx.x == 0) bulk_wait<true>();  // the previous row's bulk store has read the buffer
          __syncthreads();
        } else if constexpr (kSplit && m > 0) {
          __syncthreads();  // every warp's lane-turn reads of these bytes are done
        }
        // Every value of this pass, as (register vector j, 16-byte chunk c, element e).
        auto for_pass_values = [&](auto&& f) {
#pragma unroll
          for (int j = 0; j < K; ++j) {
            if (!in_pass(j)) continue;
#pragma unroll
            for (int c = 0; c < kChunks; ++c)
#pragma unroll
              for (int e = 0; e < kChunkLen; ++e) f(j, c, e);
          }
        };
        for_pass_values([&](int j, int c, int e) {
          smem[smem_at(std::integral_constant<int, t>{}, j, c) + e] = r[j][c * kChunkLen + e];
        });
        __syncthreads();
        for_pass_values([&](int j, int c, int e) {
          r[j][c * kChunkLen + e] = smem[smem_at(std::integral_constant<int, t + 1>{}, j, c) + e];
        });
      }
#pragma unroll
      for (int s = 0; s < h && t * h + s < w; ++s) butterfly_vector_bit(r, s);
    };
    if constexpr (kTurns > 0) turn(std::integral_constant<int, 0>{});
    if constexpr (kTurns > 1) turn(std::integral_constant<int, 1>{});
    if constexpr (kTurns > 2) turn(std::integral_constant<int, 2>{});
    if constexpr (kTurns > 3) turn(std::integral_constant<int, 3>{});
    if constexpr (kTurns > 4) turn(std::integral_constant<int, 4>{});
  };

  // The thread's store offset in a tile (chained: logical 3-7 sit on lane bits (3, 4, 2, 0, 1)
  // instead of 0-4, see store_vector).
  const std::int64_t y_thread = y_base + (kChained ? (ChainedMmaLayout::lane_slot(lane) - lane) << v : 0);
  [[maybe_unused]] const bool lane_bit2 = (lane >> 2) & 1;
  // Stores register vector j (final layout) at yt, the thread's address in its tile, unless it lies past the rows.
  auto store_vector = [&](T* yt, int j, const C(&vals)[V], std::int64_t row0, bool full_tile) {
    constexpr int t = kTurns;
    const std::int64_t off = vector_offset(std::integral_constant<int, t>{}, j, ys);
    if constexpr (kChained) {
      // Pairs over logical 0 (registers i = 0/2 and 1/3), then logical 5 (which pair) swapped with
      // logical 2 (lane bit 2) by one shuffle per two packed registers, outside the row check (the
      // same for the whole warp: kN >= 8).
      std::uint32_t w2[2][2];  // [logical 1][logical 2]
#pragma unroll
      for (int f = 0; f < 2; ++f) {
        const std::uint32_t p0 = pack_two<T>(vals[4 * f], vals[4 * f + 2]);
        const std::uint32_t p1 = pack_two<T>(vals[4 * f + 1], vals[4 * f + 3]);
        const std::uint32_t recv = __shfl_xor_sync(0xffffffffu, lane_bit2 ? p0 : p1, 4);
        w2[f][0] = lane_bit2 ? recv : p0;
        w2[f][1] = lane_bit2 ? p1 : recv;
      }
      if (in_tile(row0, full_tile, std::integral_constant<int, t>{}, j))
        store16<kEvictFirstStores>(yt + off, make_uint4(w2[0][0], w2[1][0], w2[0][1], w2[1][1]));
    } else if (in_tile(row0, full_tile, std::integral_constant<int, t>{}, j)) {
      VecIO<T, V>::template store<kEvictFirstStores>(yt + off, vals);
    }
  };

  for (;;) {
  const std::int64_t row0 = tile << kRowsLog;
  const bool full_tile = is_full(row0);
  C r[K][V];
  if constexpr (kStaged) {
    ptx::cp_async_wait<STAGES - 1>();
#pragma unroll
    for (int j = 0; j < kStagedVecs; ++j) to_compute(*staged_slot(stage, j), r[j]);
    // Refill the slots just read with the tile STAGES ahead: this thread's shared loads above are
    // issued before these copies, and no other thread touches its slots, so no barrier is needed.
    stage_tile(tile + std::int64_t(STAGES) * gridDim.x, stage);
    stage = stage + 1 == STAGES ? 0 : stage + 1;
#pragma unroll
    for (int j = kStagedVecs; j < K; ++j) to_compute(global_vector(row0, full_tile, j), r[j]);
  } else {
    // All K loads are issued before any is used. With a per-vector row check (rows shorter than
    // the tile) the compiler otherwise interleaves load and use, one load in flight at a time.
    uint4 q[K];
    if (full_tile) {
      const T* xt = x + (row0 * xs + x_base);
#pragma unroll
      for (int j = 0; j < K; ++j) q[j] = VecIO<T, V>::load_raw(xt + load_offset(j));
    } else {
#pragma unroll
      for (int j = 0; j < K; ++j) q[j] = global_vector(row0, false, j);
    }
#pragma unroll
    for (int j = 0; j < K; ++j) to_compute(q[j], r[j]);
  }

  transform(r);
  if constexpr (kSplit) {
    // The first half is done: park it in this thread's slots, over the second half's raw vectors,
    // which take its place in registers.
    ptx::cp_async_wait<0>();
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const uint4 raw = *top_slot(j);
#pragma unroll
      for (int c = 0; c < kChunks; ++c) *park_slot(j, c) = chunk_bits(r[j] + c * kChunkLen);
      to_compute(raw, r[j]);
    }
    if constexpr (kTurns > 0) __syncthreads();  // every warp has read the first half's last turn
    transform(r);
  }

  if constexpr (CLUSTER > 1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Cluster bits: every thread parks its values in its own shared memory (thread-major 16-byte
    // chunks, conflict-free), and reads the same slots of the partner CTAs, which hold the elements
    // that differ from its own only in the cluster bits.
    if constexpr (kTurns > 0) __syncthreads();  // the turns' reads of smem are done
    auto slot = [&](int j, int c) { return ((j * kChunks + c) * kThreads + int(threadIdx.x)) * kChunkLen; };
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int e = 0; e < kChunkLen; ++e) smem[slot(j, c) + e] = r[j][c * kChunkLen + e];
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    const C* part[CLUSTER];
#pragma unroll
    for (int q = 0; q < CLUSTER; ++q) part[q] = ptx::map_cluster_rank(smem, q);
#pragma unroll
    for (int j = 0; j < K; ++j)
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        C remote[CLUSTER][kChunkLen];  // one 16-byte load per partner
#pragma unroll
        for (int q = 0; q < CLUSTER; ++q) load_chunk(part[q] + slot(j, c), remote[q]);
#pragma unroll
        for (int e = 0; e < kChunkLen; ++e) {
          C val[CLUSTER];  // element (rank q) of this slot, q = 0..CLUSTER-1
#pragma unroll
          for (int q = 0; q < CLUSTER; ++q) val[q] = q == rank ? r[j][c * kChunkLen + e] : remote[q][e];
#pragma unroll
          for (int b = 0; b < c_bits; ++b)
#pragma unroll
            for (int q = 0; q < CLUSTER; ++q)
              if (!(q & (1 << b))) bfly(val[q], val[q | (1 << b)]);
          C out = val[0];
#pragma unroll
          for (int q = 1; q < CLUSTER; ++q) out = q == rank ? val[q] : out;
          r[j][c * kChunkLen + e] = out;
        }
      }
    // No CTA may leave (its shared memory) while partners still read it.
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
    __trap();  // cluster kernels are only launched on compute capability >= 9.0
#endif
  }

  if constexpr (!kSplit) scale_held(r, a);
  if constexpr (kBulkStore) {
    T* row = reinterpret_cast<T*>(smem_raw);
    __syncthreads();  // every thread's turn reads are done
#pragma unroll
    for (int j = 0; j < K; ++j)
      VecIO<T, V>::template store<false>(row + tile_index(std::integral_constant<int, kTurns>{}, j), r[j]);
    ptx::fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) bulk_store<kEvictFirstStores>(y + row0 * ys, row, unsigned(sizeof(T)) << kN);
  } else if constexpr (kSplit) {
    // Both halves leave together: bottom = parked + second, top = parked - second (the row's top bit).
    T* yt = y + (row0 * ys + y_thread);
#pragma unroll
    for (int j = 0; j < K; ++j) {
      C lo[V];
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        C parked[kChunkLen];
        load_chunk(reinterpret_cast<const C*>(park_slot(j, c)), parked);
#pragma unroll
        for (int e = 0; e < kChunkLen; ++e) lo[c * kChunkLen + e] = parked[e];
      }
#pragma unroll
      for (int e = 0; e < V; ++e) {
        bfly(lo[e], r[j][e]);
        // Scaled here, not by scale_held per vector: that call changed these kernels' register allocation.
        if (a.scaled) lo[e] *= C(a.scale), r[j][e] *= C(a.scale);
      }
      store_vector(yt, j, lo, row0, full_tile);
      store_vector(yt + (std::int64_t(1) << kN), j, r[j], row0, full_tile);
    }
  } else {
    T* yt = y + (row0 * ys + y_thread);
#pragma unroll
    for (int j = 0; j < K; ++j) store_vector(yt, j, r[j], row0, full_tile);
  }
  if constexpr (!kStaged) {
    break;
  } else {
    tile += gridDim.x;
    if (tile >= a.tiles) break;
    // This tile's shared-memory reads are done (a bulk store waits before the next turn instead).
    if constexpr (kTurns > 0 && !kBulkStore) __syncthreads();
  }
  }  // tile loop
  if constexpr (kBulkStore) {
    if (threadIdx.x == 0) bulk_wait<false>();  // the block's shared memory must outlive the last copy
  }
}

// Fallback for data the vector path cannot take (misaligned pointers, strides that are not a
// multiple of 16 bytes, rows shorter than a vector that are not packed, batches whose dims do not
// collapse to one uniform stride): scalar, coalesced loads into
// shared memory and every stage there. Correct for any layout; not the fast path.
constexpr int kSmemThreads = 256;
constexpr int kSmemMinTileBits = 11;

template <class T>
__global__ void __launch_bounds__(kSmemThreads) fwt_smem_kernel(const KernelArgs a, int tile_bits) {
  using C = typename Compute<T>::type;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  C* smem = reinterpret_cast<C*>(smem_raw);
  const int log_n = a.log_n, tile = 1 << tile_bits;
  const std::int64_t n_mask = (std::int64_t(1) << log_n) - 1;
  const std::int64_t row0 = std::int64_t(blockIdx.x) << (tile_bits - log_n);
  for (int i = threadIdx.x; i < tile; i += kSmemThreads) {
    const std::int64_t row = row0 + (i >> log_n);
    C v[1] = {C(0)};
    if (row < a.rows) {
      std::int64_t xo, yo;
      row_offsets(a, row, xo, yo);
      VecIO<T, 1>::load(static_cast<const T*>(a.x) + xo + (i & n_mask), v);
    }
    smem[i] = v[0];
  }
  for (int b = 0; b < log_n; ++b) {
    __syncthreads();
    for (int p = threadIdx.x; p < tile / 2; p += kSmemThreads) {
      const int lo = ((p >> b) << (b + 1)) | (p & ((1 << b) - 1));
      bfly(smem[lo], smem[lo | (1 << b)]);
    }
  }
  __syncthreads();
  const C sc = a.scaled ? static_cast<C>(a.scale) : C(1);
  for (int i = threadIdx.x; i < tile; i += kSmemThreads) {
    const std::int64_t row = row0 + (i >> log_n);
    if (row < a.rows) {
      std::int64_t xo, yo;
      row_offsets(a, row, xo, yo);
      const C v[1] = {smem[i] * sc};
      VecIO<T, 1>::store(static_cast<T*>(a.y) + yo + (i & n_mask), v);
    }
  }
}

// ------------------------------------------------------------------ host side
inline KernelArgs make_args(const FwtPlan& p) {
  KernelArgs a{};
  a.x = p.x;
  a.y = p.y;
  a.rows = p.rows;
  a.log_n = p.log_n;
  a.batch_ndim = p.batch_ndim;
  for (int d = 0; d < p.batch_ndim; ++d) {
    a.shape[d] = p.batch_shape[d];
    a.xs[d] = p.x_stride[d];
    a.ys[d] = p.y_stride[d];
  }
  a.scale = p.scale;
  a.scaled = p.scale != 1.0;
  return a;
}

// Raises a kernel's dynamic shared-memory limit above the 48 KB default, per (kernel, device),
// whenever a launch needs more than what was set before.
inline void allow_smem(const void* kernel, int bytes, int device) {
  if (bytes <= 48 * 1024) return;
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, int> limit;
  std::lock_guard<std::mutex> lock(mutex);
  int& current = limit[{kernel, device}];
  if (bytes <= current) return;
  IK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  current = bytes;
}

// compute() once per key for the process (device attributes and occupancies do not change); each
// call site (a distinct lambda type) has its own cache.
template <class Key, class F>
auto once_per(const Key& key, F&& compute) {
  static std::mutex mutex;
  static std::map<Key, decltype(compute())> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(key);
  return it != known.end() ? it->second : known.emplace(key, compute()).first->second;
}

// Blocks of `kernel` that fit on the whole device at once (occupancy × SMs), per (kernel, device).
inline std::int64_t resident_blocks(const void* kernel, int threads, int smem, int device) {
  return once_per(std::make_pair(kernel, device), [&] {
    int per_sm = 0, sms = 0;
    IK_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    IK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return std::int64_t(per_sm > 0 ? per_sm : 1) * sms;
  });
}

// Blocks of a resident grid over `tiles` tiles: as many as fit on the device at once, at most one per tile.
inline std::int64_t resident_grid_blocks(const void* kernel, int threads, int smem, std::int64_t tiles, int device) {
  const std::int64_t resident = resident_blocks(kernel, threads, smem, device);
  return tiles < resident ? tiles : resident;
}
// `blocks` as a launch's grid size (at most 2^31 - 1 blocks), raised as too many rows otherwise.
inline unsigned grid_size(std::int64_t blocks, std::int64_t rows) {
  if (blocks > 0x7fffffff) raise<ValueError>("fwt: too many rows for one launch (", rows, ")");
  return static_cast<unsigned>(blocks);
}

// Shared memory one block may use on `device` (the opt-in maximum: 227 KB on sm_90, 163 KB on sm_80,
// 99 KB on sm_86/89), lowered by IRONKERNELS_FWT_MAX_SMEM (bytes) to test the fallback on a larger GPU.
// A host-side attribute read (no GPU work), asked only by the configurations above 99 KB: no cache.
inline int block_smem_limit(int device) {
  int limit = 0;
  IK_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (const char* env = std::getenv("IRONKERNELS_FWT_MAX_SMEM")) {
    const long cap = std::strtol(env, nullptr, 10);
    if (cap > 0 && cap < limit) limit = static_cast<int>(cap);
  }
  return limit;
}
constexpr int kSmallestSmemLimit = 99 * 1024;  // sm_86/89; every configuration at most this large fits anywhere

// Compute capability 9.0 or newer: bulk copies (cp.async.bulk) and clusters, and the GPUs the
// table's Hopper configurations were measured on.
inline bool hopper_or_newer(int device) {
  return once_per(device, [&] {
    int major = 0;
    IK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    return major >= 9;
  });
}

// Splitting the longest rows over a thread-block cluster needs compute capability 9.0 too. It is
// off unless IRONKERNELS_FWT_CLUSTERS=1: measured on H200 it was slower than one 1024-thread block
// (bench/NOTES.md), so it stays an opt-in experiment until it wins.
inline bool clusters_available(int device) {
  return hopper_or_newer(device) && once_per(device, [&] {
           int cluster_launch = 0;
           IK_CUDA_CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device));
           const char* env = std::getenv("IRONKERNELS_FWT_CLUSTERS");
           return cluster_launch && env && env[0] == '1';
         });
}

// One (N, cluster size) configuration: short rows pack several rows per block (kLocalWarps warps),
// long rows take one block (or one cluster) each, 2^(n - (v+5+h)) warps. STAGES > 0: a resident
// grid that loops over the tiles (see fwt_tile_kernel).
template <class T, int V, int K, int LOG_N, int CLUSTER, int OCC_WARPS, int STAGES, int TURN_PASSES = 1,
          bool BULK_STORE = false, bool LANE_TURN = false, bool CHAINED_MMA = false, bool SPLIT_TOP = false>
void launch_tile_config(const KernelArgs& a, cudaStream_t stream, int device) {
  constexpr int v = ilog2(V), h = ilog2(K), kN = LOG_N - (SPLIT_TOP ? 1 : 0) - ilog2(CLUSTER);
  constexpr int warps = tile_warps(v, h, kN), tile_bits = v + 5 + h + ilog2(warps);
  const std::int64_t rows_per_tile = std::int64_t(1) << (tile_bits - kN);
  KernelArgs args = a;
  args.tiles = (a.rows + rows_per_tile - 1) / rows_per_tile;
  constexpr int smem = tile_smem_bytes<T, V, K, LOG_N, CLUSTER, STAGES, TURN_PASSES, LANE_TURN, SPLIT_TOP>();
  static_assert(smem <= kMaxBlockSmem, "the configuration needs more shared memory than a block has");
  if constexpr (smem > kSmallestSmemLimit && CLUSTER == 1) {
    // A GPU with less shared memory per block takes the same row with 128 values per thread (64 for
    // float64), loaded directly, its corner turn in two passes: half the row's bytes (64 KB).
    constexpr int kCompactK = sizeof(T) == 8 ? 32 : 128 / V;
    static_assert(tile_smem_bytes<T, V, kCompactK, LOG_N, 1, 0, 2>() <= kSmallestSmemLimit);
    if (smem > block_smem_limit(device)) return launch_tile_config<T, V, kCompactK, LOG_N, 1, 0, 0, 2>(a, stream, device);
  }
  auto kernel = fwt_tile_kernel<T, V, K, LOG_N, CLUSTER, OCC_WARPS, STAGES, TURN_PASSES, BULK_STORE, LANE_TURN, CHAINED_MMA,
                                SPLIT_TOP>;
  allow_smem(reinterpret_cast<const void*>(kernel), smem, device);
  std::int64_t blocks = args.tiles * CLUSTER;
  if constexpr (STAGES > 0) {
    blocks = resident_grid_blocks(reinterpret_cast<const void*>(kernel), 32 * warps, smem, blocks, device);
  }
  const unsigned grid = grid_size(blocks, a.rows);
  if constexpr (CLUSTER == 1) {
    kernel<<<grid, 32 * warps, smem, stream>>>(args);
    IK_CUDA_CHECK_LAUNCH("fwt_tile_kernel");
  } else {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(32 * warps);
    cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
    cfg.stream = stream;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = CLUSTER;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    IK_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args));
  }
}

// 16-bit rows with one float32 exchange (fwt_single_exchange.cuh, which the 16-bit kernel files include).
template <class T, int LOG_N, int STAGES, bool ROW_BUFFER = false, bool SCALAR_UNITS = false, bool SPLIT_TOP = false,
          bool RESIDENT = true, bool DIRECT_STORES = false>
void launch_single_exchange(const KernelArgs& a, cudaStream_t stream, int device);

// Dispatches N = 2^a.log_n to its compile-time configuration. With IRONKERNELS_FWT_CLUSTERS=1, rows
// that would need more than 16 warps in one CTA are split over a cluster; beyond 32 warps a cluster
// is required.
template <class T, int V, int K, int LOG_N = 0>
void launch_tile(const KernelArgs& a, cudaStream_t stream, int device) {
  if constexpr (LOG_N > kFwtMaxLog2N) {
    raise<ValueError>("fwt: N = 2^", a.log_n, " is not supported on CUDA");
  } else {
    if (a.log_n != LOG_N) return launch_tile<T, V, K, LOG_N + 1>(a, stream, device);
    constexpr int local = ilog2(V) + 5 + ilog2(K);
    constexpr int preferred = LOG_N > local + 4 ? LOG_N - (local + 4) : 0;  // cluster bits
    constexpr int required = LOG_N > local + 5 ? LOG_N - (local + 5) : 0;
    static_assert(preferred <= 2, "at most 4 CTAs per cluster");
    if constexpr (preferred > 0) {
      if (clusters_available(device))
        return launch_tile_config<T, V, K, LOG_N, 1 << preferred, 32, 0>(a, stream, device);
    }
    // Configurations measured on H200 with bench/fwt_sweep.cu (bench/NOTES.md): values per thread
    // (K, 2K or 4K vectors of 16 bytes), the register cap (warps per SM), the input stages and the
    // corner turn's passes.
    if constexpr (sizeof(T) == 2) {
      // 16-bit rows: the element rate is twice float32's. Rows up to 2^11 load directly (2^11: 64
      // values per thread, 80 registers, 25 warps per SM). Hopper's 2^12-2^15 below; elsewhere 2^12
      // as 2^11 with 128 registers, and from 2^13 the inputs in flight through cp.async stages, bulk
      // stores and the lane turn (no shuffles).
      if constexpr (LOG_N <= 10) {
        return launch_tile_config<T, V, K, LOG_N, 1, 32, 0>(a, stream, device);
      } else if constexpr (LOG_N == 11) {
        return launch_tile_config<T, V, 2 * K, LOG_N, 1, 24, 0>(a, stream, device);
      } else {
        // On Hopper (compute capability 9.0, where these were measured): 2^12 and 2^14 with 64
        // values per thread, loaded directly, and the chained tensor-core stages (no shuffles); 2^12
        // at 128 registers (16 warps per SM), 2^14 at 80, so three 8-warp blocks share an SM (3 x
        // 64 KB of corner-turn buffers). 2^13 and 2^15 as split rows of the single-exchange kernel
        // (fwt_single_exchange.cuh), a block per row; 2^15 stores straight from registers.
        if constexpr (LOG_N == 12 || LOG_N == 14) {
          if (hopper_or_newer(device))
            return launch_tile_config<T, V, 2 * K, LOG_N, 1, LOG_N == 14 ? 24 : 16, 0, 1, false, false, true>(a, stream, device);
        }
        if constexpr (LOG_N == 13 || LOG_N == 15) {
          constexpr bool kSplit = true, kResident = false, kDirectStores = LOG_N == 15;
          if (hopper_or_newer(device))
            return launch_single_exchange<T, LOG_N, 1, false, false, kSplit, kResident, kDirectStores>(a, stream, device);
        }
        if constexpr (LOG_N == 12) {
          return launch_tile_config<T, V, 2 * K, LOG_N, 1, 16, 0>(a, stream, device);
        } else {  // 128 values per thread (one corner turn fewer), the turn in two passes
          return launch_tile_config<T, V, 4 * K, LOG_N, 1, 0, 2, 2, true, true>(a, stream, device);
        }
      }
    } else if constexpr ((sizeof(T) == 4 && LOG_N == 15) || (sizeof(T) == 8 && LOG_N == 14)) {
      // float32 rows of 2^15 and float64 rows of 2^14: split in halves of 64 KB (SPLIT_TOP), 64 (32)
      // values per thread, the lane turn, the corner turn in two passes, two 8-warp blocks per SM.
      return launch_tile_config<T, V, 2 * K, LOG_N, 1, 16, 0, 2, false, true, false, true>(a, stream, device);
    } else if constexpr (LOG_N == 14) {
      // float32 rows of 2^14: 64 values per thread (one corner turn fewer) and the lane turn.
      return launch_tile_config<T, V, 2 * K, LOG_N, 1, 0, 0, 1, false, true>(a, stream, device);
    } else if constexpr (sizeof(T) == 4 && LOG_N <= 9) {
      // float32 rows that fit one warp with 16 values per thread: 2 KB per one-warp block.
      return launch_tile_config<T, V, K / 2, LOG_N, 1, 32, 0>(a, stream, device);
    } else if constexpr (required == 0) {
      return launch_tile_config<T, V, K, LOG_N, 1, 32, 0>(a, stream, device);
    } else {
      raise<UnsupportedError>("fwt: N = 2^", LOG_N, " of this dtype needs thread-block clusters (compute capability 9.0)");
    }
  }
}

inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// Vector path when both pointers are 16-byte aligned and every row start is too, and each vector
// lies inside one row (or the rows are packed back to back and the total is a whole number of vectors).
inline bool can_vectorize(const FwtPlan& p, int elems_per_vec) {
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(p.dtype));
  if (!aligned16(p.x) || !aligned16(p.y)) return false;
  const std::int64_t n = std::int64_t(1) << p.log_n;
  if (n >= elems_per_vec) {
    for (int d = 0; d < p.batch_ndim; ++d)
      if ((p.x_stride[d] * es) % 16 || (p.y_stride[d] * es) % 16) return false;
    return true;
  }
  const bool packed = p.batch_ndim == 0 || (p.batch_ndim == 1 && p.x_stride[0] == n && p.y_stride[0] == n);
  return packed && (p.rows * n) % elems_per_vec == 0;
}

template <class T>
void launch_smem(const KernelArgs& a, cudaStream_t stream, int device) {
  using C = typename Compute<T>::type;
  const int tile_bits = a.log_n > kSmemMinTileBits ? a.log_n : kSmemMinTileBits;
  const std::int64_t rows_per_tile = std::int64_t(1) << (tile_bits - a.log_n);
  const std::int64_t blocks = (a.rows + rows_per_tile - 1) / rows_per_tile;
  const int smem = int(sizeof(C)) << tile_bits;
  if (const int limit = block_smem_limit(device); smem > limit)
    raise<UnsupportedError>("fwt: a row of 2^", a.log_n, " that is not 16-byte aligned (or strided) needs ", smem / 1024,
                            " KB of shared memory per block on CUDA; this GPU has ", limit / 1024,
                            " KB: pass an aligned, contiguous array");
  allow_smem(reinterpret_cast<const void*>(fwt_smem_kernel<T>), smem, device);
  fwt_smem_kernel<T><<<grid_size(blocks, a.rows), kSmemThreads, smem, stream>>>(a, tile_bits);
  IK_CUDA_CHECK_LAUNCH("fwt_smem_kernel");
}

/// Whether the register-tile kernel takes this plan (else the shared-memory fallback does).
inline bool uses_tile_kernel(const FwtPlan& p) {
  return p.batch_ndim <= 1 && can_vectorize(p, 16 / static_cast<int>(dtype_size(p.dtype)));
}

/// Vectors of 16 bytes per thread that launch_tile's configurations are multiples of: 32 values in
/// registers (16 for float64).
template <class T>
constexpr int kTableVectors = sizeof(T) == 2 ? 4 : 8;

/// The dtype's launcher: the tile kernels on the fast path, else the fallback.
template <class T>
void launch_dtype(const FwtPlan& p, cudaStream_t stream) {
  const KernelArgs a = make_args(p);
  if (uses_tile_kernel(p)) return launch_tile<T, 16 / sizeof(T), kTableVectors<T>>(a, stream, p.device.id);
  return launch_smem<T>(a, stream, p.device.id);
}

}  // namespace ironkernels::detail::fwt_gpu
