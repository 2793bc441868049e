#pragma once
// 16-bit rows of 2^12-2^15 with one float32 shared-memory exchange per row instead of two (the lane
// turn and the corner turn of fwt_tile_kernel's staged configuration), on compute capability 9.0
// (it leaves through bulk copies). Rows of 2^15 have one bit more than an exchange of 8-byte units
// can place: that bit takes a shuffle stage, or (SPLIT_TOP) the row's top bit is butterflied as its
// inputs come in and each half runs the 2^14 layout. launch_tile takes the split rows, a block per
// row, for 2^13 (each half leaving in one bulk copy from the exchange buffer) and 2^15 (each half
// stored straight from registers, which leaves two blocks per SM the room the bulk store's own
// row buffer would take). Rows of 2^12 fit one warp, whose blocks then need no barrier across warps.
// The unsplit rows and a stage of more than one row are sweep entries (bench/fwt_sweep.cu); they, and
// the variants removed since (a resident grid, a separate row buffer, 4-byte exchange units), ran
// level with or slower than the table's kernels (bench/DECISIONS.md, fwt).
//
// Why one exchange is enough here. A thread holds 16 vectors of 8 values (128 values, the row spread
// over 2^(n-12) warps). The tensor cores take logical bits {0, 2, 3, 4} and a register add bit 1;
// the other n - 5 bits (9 at 2^14) must each sit in a register bit once. The cp.async stage is read
// in a gathered layout (any 16-byte vector of the warp's stage, free after a __syncwarp): 4 of them
// in the vector bits. One exchange of 8-byte units (float2, bit 0 inside) in two passes over bit 1
// then has 5 places for the rest: the 4 vector bits and the 16-byte chunk (bit 2, done by then).
//
// Layouts, as the logical bit each position holds (e: value in the vector, l: lane, j: vector, u: warp):
//   loaded   (cp.async, thread's own vectors, memory order): e 0-2, l 3-7, j 8-11, u 12-13
//   gathered (after the stage read):                         e 0-2, l 3 4 6 7 8, j 5 9 10 11, u 12-13
//   final    (after the exchange):                           e 0 1 6, l 2 3 4 5 9, j 7 8 12 13, u 10 11
//   (2^13: j 7 8 12 11, u 10; bit 11 stays in j3 and is done in the gathered layout.
//    2^12: j 7 8 10 11, no warp bits; bits 10 and 11 stay.
//    2^15: j 7 12 13 14, u 8 10 11; bit 8 is butterflied by a shuffle in the gathered layout.)
// The final layout's lanes 0-3 hold bits 2-5, so the 8-byte writes of the row into the bulk-store
// buffer (memory order) cover 16 different bank pairs per half warp; the exchange buffer XORs unit
// bit 0 with bit 6 and unit bit 3 with bit 7, which keeps both of its sides conflict-free, and the
// stage XORs lane bit 2 with lane bit 3 for the gathered reads. tests/cpp/test_fwt_layouts.cu checks
// all of it on the host, and runs the whole data flow against a float64 transform.
#include "fwt/fwt_tile.cuh"

namespace ironkernels::detail::fwt_gpu {

// Shared memory: one pass of the exchange, then the input stages. A split row (SPLIT_TOP) runs the
// 2^(n-1) layout on each half and stages both halves' inputs.
template <class T, int LOG_N, int STAGES, bool SPLIT_TOP = false>
constexpr int single_exchange_smem_bytes() {
  using Lay = SingleExchangeLayout<LOG_N - SPLIT_TOP>;
  return 8 * Lay::kUnits + STAGES * (1 + SPLIT_TOP) * Lay::kK * Lay::kThreads * 16;
}

// A block per row (STAGES rows of a grid's stride in flight by cp.async); the row leaves in one bulk
// copy (sm_90+) from the exchange buffer, or (DIRECT_STORES) straight from registers.
//
// SPLIT_TOP: the row's top bit is butterflied as the inputs come in, and each half runs the 2^(n-1)
// layout with half the registers. Both halves' 16-bit inputs stay in the stage, and each half reads
// them both: half h is H·(x_lo + x_hi) or H·(x_lo - x_hi), the tensor cores accumulating the second
// product onto the first (float32, as every other sum). So a row of 2^15 needs 64 KB of registers
// instead of 128 KB, and two 4-warp blocks share an SM; still one read and one write of global memory.
template <class T, int LOG_N, int STAGES, bool SPLIT_TOP = false, bool DIRECT_STORES = false>
__global__ void __launch_bounds__(SingleExchangeLayout<LOG_N - SPLIT_TOP>::kThreads)
    fwt_single_exchange_kernel(const KernelArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kLogPart = LOG_N - SPLIT_TOP, kParts = 1 + SPLIT_TOP;  // the part of a row each pipeline runs
  using Lay = SingleExchangeLayout<kLogPart>;
  constexpr int K = Lay::kK, kThreads = Lay::kThreads, kW = Lay::kW;
  static_assert(STAGES >= 1, "the gathered layout is read from the cp.async stage");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float2* const xbuf = reinterpret_cast<float2*>(smem_raw);  // one pass; then the row
  uint4* const stages = reinterpret_cast<uint4*>(smem_raw + 8 * Lay::kUnits);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const T* __restrict__ x = static_cast<const T*>(a.x);
  T* __restrict__ y = static_cast<T*>(a.y);
  const std::int64_t xs = a.batch_ndim ? a.xs[0] : 0, ys = a.batch_ndim ? a.ys[0] : 0;
  constexpr bool kEvictFirst = evict_first_stores<T>(LOG_N);

  // cp.async: this thread's vectors in the loaded layout, into its (swizzled) slot of each plane
  // (each half's K planes in turn).
  uint4* const own_slot = stages + warp * 32 + Lay::stage_lane(lane);
  auto stage_row = [&](std::int64_t t, int s) {
    if (t < a.tiles) {
      const T* xr = x + t * xs + Lay::loaded(lane, warp, 0, 0);
#pragma unroll
      for (int h = 0; h < kParts; ++h)
#pragma unroll
        for (int j = 0; j < K; ++j)
          ptx::cp_async_16(own_slot + ((s * kParts + h) * K + j) * kThreads, xr + (h << kLogPart) + Lay::loaded(0, 0, j, 0), true);
    }
    ptx::cp_async_commit();
  };
  std::int64_t tile = blockIdx.x;
#pragma unroll
  for (int s = 0; s < STAGES; ++s) stage_row(tile + std::int64_t(s) * gridDim.x, s);
  int stage = 0;

  const HadamardMma<T> hadamard_mma(lane);
  // Per-thread bases: gathered source slots (for even and odd j), exchange units for the four
  // (j bit 0, chunk) pairs on each side, and the row-buffer position; the rest is a constant per access.
  const uint4* const src_base[2] = {stages + warp * 32 + Lay::stage_lane(Lay::source_lane(lane, 0)),
                                    stages + warp * 32 + Lay::stage_lane(Lay::source_lane(lane, 1))};
  const int src_vector0 = Lay::source_vector(lane, 0);
  int unit_gathered[4], unit_final[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    unit_gathered[k] = Lay::unit(Lay::gathered(lane, warp, k >> 1, 4 * (k & 1)));
    unit_final[k] = Lay::unit(Lay::final_index(lane, warp, k >> 1, 4 * (k & 1)));
  }
  const int out_base = Lay::final_index(lane, warp, 0, 0);

  for (;;) {
    ptx::cp_async_wait<STAGES - 1>();
    __syncwarp();  // the warp's copies of this stage are visible to every lane
#pragma unroll 1  // unrolled, the two parts ran 4-7% slower
    for (int part = 0; part < kParts; ++part) {
      float r[K][8];
      if constexpr (SPLIT_TOP) {
        const uint4* const even = src_base[0] + (stage * 2 * K + src_vector0) * kThreads;
        const uint4* const odd = src_base[1] + (stage * 2 * K + src_vector0) * kThreads;
#pragma unroll
        for (int j = 0; j < K; ++j) {  // the row's low and high halves' vectors: its top bit, then 0 2 3 4
          const uint4* const src = j & 1 ? odd : even;
          hadamard_mma.apply_sum(src[(j & 14) * kThreads], src[(K + (j & 14)) * kThreads], part == 1, r[j]);
        }
      } else {
#pragma unroll
        for (int j = 0; j < K; ++j)
          hadamard_mma.apply(src_base[j & 1][(stage * K + src_vector0 + (j & 14)) * kThreads], r[j]);  // bits 0 2 3 4
      }
      if (part == kParts - 1) {
        __syncwarp();  // every lane has read this stage (each half of it, each time) before it is refilled
        stage_row(tile + std::int64_t(STAGES) * gridDim.x, stage);
        stage = stage + 1 == STAGES ? 0 : stage + 1;
      }

      butterfly_value_bit(r, 1);  // logical bit 1
#pragma unroll
      for (int s = 0; s < 4; ++s) butterfly_vector_bit(r, s);  // logical bits 5, 9, 10, 11
      if constexpr (kW == 3) butterfly_lane_bit(r, lane, 4);  // 2^15: logical 8; no place left for it

      // Before a pass writes the exchange buffer, every thread has read it: the pass before, or the
      // previous row's (half's) bulk copy.
      auto begin_pass = [&](int pass) {
        if (!DIRECT_STORES && pass == 0 && threadIdx.x == 0) bulk_wait<true>();
        __syncthreads();
      };

      // The exchange, one pass per value of logical bit 1 (value bit 1).
#pragma unroll
      for (int pass = 0; pass < 2; ++pass) {
        begin_pass(pass);
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
          for (int c = 0; c < 2; ++c)
            xbuf[unit_gathered[(j & 1) << 1 | c] + Lay::gathered_unit_j(j)] =
                make_float2(r[j][4 * c + 2 * pass], r[j][4 * c + 2 * pass + 1]);
        __syncthreads();
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            const float2 q = xbuf[unit_final[(j & 1) << 1 | c] + Lay::final_unit_j(j)];
            r[j][4 * c + 2 * pass] = q.x, r[j][4 * c + 2 * pass + 1] = q.y;
          }
      }
      butterfly_value_bit(r, 2);  // logical bit 6
#pragma unroll
      for (int s = 0; s < Lay::kFinalVectorBits; ++s)
        butterfly_vector_bit(r, s);  // logical 7, 8 or 12, 12-14

      scale_held(r, a);
      // The row (part) in memory order, 4 values, 8 bytes, per write (a half warp's 16 writes cover 128
      // contiguous bytes): into the buffer that leaves in one bulk copy, or (DIRECT_STORES) straight to
      // global memory, with plain stores (0.5% faster than evict-first at 2^15).
      T* const row = DIRECT_STORES ? y + tile * ys + (part << kLogPart) : reinterpret_cast<T*>(smem_raw);
      if constexpr (!DIRECT_STORES) __syncthreads();  // every thread's exchange reads are done
#pragma unroll
      for (int j = 0; j < K; ++j)
#pragma unroll
        for (int c = 0; c < 2; ++c)
          *reinterpret_cast<uint2*>(row + out_base + Lay::final_index(0, 0, j, 4 * c)) =
              make_uint2(pack_two<T>(r[j][4 * c], r[j][4 * c + 1]), pack_two<T>(r[j][4 * c + 2], r[j][4 * c + 3]));
      if constexpr (!DIRECT_STORES) {
        ptx::fence_proxy_async_shared();
        __syncthreads();
        if (threadIdx.x == 0) bulk_store<kEvictFirst>(y + tile * ys + (part << kLogPart), row, unsigned(sizeof(T)) << kLogPart);
      }
    }
    tile += gridDim.x;
    if (tile >= a.tiles) break;
  }
  if (!DIRECT_STORES && threadIdx.x == 0) bulk_wait<false>();  // the block's shared memory must outlive the last copy
#else
  __trap();  // launched only on compute capability >= 9.0
#endif
}

// Rows of a uniform stride (the tile kernel's vector-path conditions), compute capability 9.0; a
// block per row.
template <class T, int LOG_N, int STAGES, bool SPLIT_TOP, bool DIRECT_STORES>
void launch_single_exchange(const KernelArgs& a, cudaStream_t stream, int device) {
  constexpr int smem = single_exchange_smem_bytes<T, LOG_N, STAGES, SPLIT_TOP>();
  static_assert(smem <= kMaxBlockSmem);
  auto kernel = fwt_single_exchange_kernel<T, LOG_N, STAGES, SPLIT_TOP, DIRECT_STORES>;
  constexpr int threads = SingleExchangeLayout<LOG_N - SPLIT_TOP>::kThreads;
  KernelArgs args = a;
  args.tiles = a.rows;  // one row per tile
  allow_smem(reinterpret_cast<const void*>(kernel), smem, device);
  if (args.tiles <= 0) return;
  kernel<<<grid_size(args.tiles, a.rows), threads, smem, stream>>>(args);
  IK_CUDA_CHECK_LAUNCH("fwt_single_exchange_kernel");
}

}  // namespace ironkernels::detail::fwt_gpu
