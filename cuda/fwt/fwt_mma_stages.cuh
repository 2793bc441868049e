#pragma once
// The FWT's tensor-core stages: radix-16 on mma.sync m16n8k16 (16-bit inputs, float32 sums) and,
// chained with an m16n8k8 tf32 stage, seven of a 16-bit row's first eight bits.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "common/ptx.cuh"
#include "fwt/fwt_layouts.cuh"

namespace ironkernels::detail::fwt_gpu {

// ------------------------------------------------------------------ tensor-core radix-16 stage
// mma.sync m16n8k16 with float32 accumulation (sm_80+): the 16-bit inputs go in as loaded, every
// product with the ±1 Hadamard entries is exact and the sums are float32, so the contract holds.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr bool kTensorCoreArch = false;
#else
constexpr bool kTensorCoreArch = true;
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

}  // namespace ironkernels::detail::fwt_gpu
