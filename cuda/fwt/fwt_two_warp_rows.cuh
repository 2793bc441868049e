#pragma once
// 16-bit rows of 2^(9+h) over two warps (2^h vectors of 8 values per thread), a block per row, one
// float32 exchange. launch_tile takes them for 16-bit 2^10 and 2^11 on Hopper, where they ran
// 0.2-0.5% ahead of a row per one-warp block (bench/NOTES.md, version 58): rows over more warps
// copy faster (bench/fwt_copy_ceiling.cu), and a thread holds only one vector's float32 values
// before the exchange, so 2^11 fits 64 registers (16 blocks per SM) and 2^10 32 (32 blocks).
//
// The row's bits, and where each is butterflied (e: value in the vector, l: lane, j: vector, u: warp):
//   loaded (direct 16-byte loads, memory order):  e 0-2, l 3-7, j 8..n-2, u n-1
//   the two chained tensor-core stages take logical 0 and 2-7 (ChainedHadamardMma), a register add
//   logical 1; each vector then goes to the exchange buffer in memory order (16-byte writes of a
//   float4 of logical 0-1);
//   exchanged: float4 of logical 0-1, l 2-6, u 7, chunk c = logical 8..n-1 (2^(h+1) chunks),
//   butterflied across the chunks; each chunk leaves as one 8-byte store (a warp: 256 bytes).
// tests/cpp/test_fwt_layouts.cu checks the addressing and runs the data flow on the host.
#include "fwt/fwt_tile.cuh"

namespace ironkernels::detail::fwt_gpu {

template <int LOG_N>
struct TwoWarpRowLayout {
  static_assert(LOG_N >= 9 && LOG_N <= 12, "16-bit rows of 2^9-2^12");
  static constexpr int kK = 1 << (LOG_N - 9);  // vectors of 8 values per thread
  static constexpr int kChunks = 2 * kK;       // float4 chunks per thread after the exchange
  static constexpr int kThreads = 64;
  // Element of the first value of loaded vector j.
  __host__ __device__ static constexpr int loaded(int lane, int warp, int j) {
    return j << 8 | lane << 3 | warp << (LOG_N - 1);
  }
  // After the chained stages, value 4f + i of vector j holds logical 1 = f, 5 = i & 1, 0 = i >> 1;
  // lane % 4 logical 6-7, lane / 4 logical 2-4. Element of its float4 (logical 0-1) for logical 5 = `half`.
  __host__ __device__ static constexpr int chained(int lane, int warp, int j, int half) {
    return loaded(0, warp, j) | half << 5 | (lane >> 2) << 2 | (lane & 3) << 6;
  }
  // Element of the first value of exchanged chunk c.
  __host__ __device__ static constexpr int exchanged(int lane, int warp, int c) { return lane << 2 | warp << 7 | c << 8; }
  // Where element i (a multiple of 4) sits in the exchange buffer: 16-byte slot bits 4-5 XORed into
  // bits 1-2, so that the 8 lanes of a quarter warp (one 128-bit shared-memory wavefront) write 8
  // different bank groups (the chained layout puts lane % 4 on slot bits 4-5; unswizzled, the
  // writes conflicted 4 ways) and still read 8.
  __host__ __device__ static constexpr int swizzled(int i) { return i ^ ((i >> 6) & 3) << 3; }
};

// OCC_WARPS: warps per SM the register allocation leaves room for (see min_blocks).
template <class T, int LOG_N, int OCC_WARPS>
__global__ void __launch_bounds__(64, min_blocks(2, OCC_WARPS)) fwt_two_warp_row_kernel(const KernelArgs a) {
  using Lay = TwoWarpRowLayout<LOG_N>;
  __shared__ __align__(16) float exchange[1 << LOG_N];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const std::int64_t row = blockIdx.x;
  const T* __restrict__ x = static_cast<const T*>(a.x) + (a.batch_ndim ? row * a.xs[0] : 0);
  T* __restrict__ y = static_cast<T*>(a.y) + (a.batch_ndim ? row * a.ys[0] : 0);

  uint4 q[Lay::kK];
#pragma unroll
  for (int j = 0; j < Lay::kK; ++j) q[j] = VecIO<T, 8>::load_raw(x + Lay::loaded(lane, warp, j));
  const ChainedHadamardMma<T> mma(lane);
#pragma unroll
  for (int j = 0; j < Lay::kK; ++j) {
    float r[1][8];
    mma.apply(q[j], r[0]);
    butterfly_value_bit(r, 2);  // logical 1
#pragma unroll
    for (int half = 0; half < 2; ++half)
      *reinterpret_cast<float4*>(exchange + Lay::swizzled(Lay::chained(lane, warp, j, half))) =
          make_float4(r[0][half], r[0][half + 2], r[0][half + 4], r[0][half + 6]);
  }
  __syncthreads();

  float v[Lay::kChunks][4];
#pragma unroll
  for (int c = 0; c < Lay::kChunks; ++c) load_chunk(exchange + Lay::swizzled(Lay::exchanged(lane, warp, c)), v[c]);
#pragma unroll
  for (int s = 0; s < LOG_N - 8; ++s) butterfly_vector_bit(v, s);  // logical 8..n-1
#pragma unroll
  for (int c = 0; c < Lay::kChunks; ++c) {
    if (a.scaled)
#pragma unroll
      for (int e = 0; e < 4; ++e) v[c][e] *= float(a.scale);
    *reinterpret_cast<uint2*>(y + Lay::exchanged(lane, warp, c)) =
        make_uint2(pack_two<T>(v[c][0], v[c][1]), pack_two<T>(v[c][2], v[c][3]));
  }
}

// A block per row; rows of a uniform stride (the tile kernel's vector-path conditions).
template <class T, int LOG_N, int OCC_WARPS>
void launch_two_warp_rows(const KernelArgs& a, cudaStream_t stream) {
  fwt_two_warp_row_kernel<T, LOG_N, OCC_WARPS><<<grid_size(a.rows, a.rows), TwoWarpRowLayout<LOG_N>::kThreads, 0, stream>>>(a);
  IK_CUDA_CHECK_LAUNCH("fwt_two_warp_row_kernel");
}

}  // namespace ironkernels::detail::fwt_gpu
