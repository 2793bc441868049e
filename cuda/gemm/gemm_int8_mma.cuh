#pragma once
// The INT8 products of the Ozaki pipeline on mma.sync (sm_80+): C = Xᵀ·Y in exact INT32, X and Y
// `rows` and `cols` K-contiguous lines of INT8 residues `ld` bytes apart (the layout residues_kernel
// writes), C column-major (element (i, j) at c[i + j·ldc]). The same integers as cuBLAS's INT8 GEMM,
// whatever the tiling: every product and sum is exact.
//
// A block computes a tile of kTileM × kTileN of C over K in steps of kTileK bytes, kStages steps in
// flight to shared memory by 16-byte cp.async (zeros past the lines and past kc); each warp a tile of
// kWarpM × kWarpN from ldmatrix fragments, m16n8k32 at a time (MmaTiles). A line's kTileK bytes of one
// step lie in 16-byte chunks whose order is xor-swizzled by the line's 128-byte row, so the 8 lines
// of an ldmatrix meet all 32 banks. The fragments of the next 32 bytes of K are loaded while the
// mma.sync of the current ones issue (two register sets), also across the barrier between steps, and
// each thread's cp.async sources are one pointer per operand advanced by kTileK a step.
#include <cuda_runtime.h>

#include <cstdint>

#include "common/launch.cuh"
#include "common/ptx.cuh"
#include "core/cuda_check.hpp"

namespace ironkernels::detail::gemm_mma {

// One tile shape: TILE_M × TILE_N of C per block, WARPS_M × WARPS_N warps, STAGES steps of TILE_K
// bytes of K in flight.
template <int TILE_M, int TILE_N, int WARPS_M, int WARPS_N, int STAGES, int TILE_K = 128>
struct MmaTiles {
  static constexpr int kTileM = TILE_M, kTileN = TILE_N, kStages = STAGES, kWarpsM = WARPS_M, kTileK = TILE_K;
  static constexpr int kThreads = 32 * WARPS_M * WARPS_N;
  static constexpr int kWarpM = TILE_M / WARPS_M, kWarpN = TILE_N / WARPS_N;
  static constexpr int kFragsM = kWarpM / 16, kFragsN = kWarpN / 8;  // m16 × n8 tiles per warp
  static constexpr int kChunks = TILE_K / 16;                        // 16-byte chunks per line and step
  static constexpr int kStageBytes = (TILE_M + TILE_N) * TILE_K;
  static constexpr int kSmemBytes = STAGES * kStageBytes;
  // Each thread copies chunk (thread mod kChunks) of lines thread / kChunks + u · kLineStride.
  static constexpr int kLineStride = kThreads / kChunks;
  static_assert(kFragsM >= 1 && kFragsN % 2 == 0 && (TILE_K == 64 || TILE_K == 128));
  static_assert(kThreads % kChunks == 0 && TILE_M % kLineStride == 0 && TILE_N % kLineStride == 0);
};
// The product engine's shape (bench/DECISIONS.md, gemm).
using ProductTiles = MmaTiles<128, 256, 2, 4, 3, 128>;

// Byte offset of chunk `chunk` of line `line` in one operand's step tile of lines of `tile_k` bytes:
// the chunk index xor-ed with the line's 128-byte row (8 lines of an ldmatrix: 8 different banks).
template <int TILE_K>
__device__ __forceinline__ int swizzled(int line, int chunk) {
  constexpr int kChunks = TILE_K / 16, kLinesPerRow = 128 / TILE_K;
  return line * TILE_K + ((chunk ^ ((line / kLinesPerRow) & (kChunks - 1))) << 4);
}

template <class Tiles>
__global__ void __launch_bounds__(Tiles::kThreads, 1) int8_products_kernel(const std::int8_t* __restrict__ x,
                                                                    const std::int8_t* __restrict__ y,
                                                                    std::int32_t* __restrict__ c, std::int64_t rows,
                                                                    std::int64_t cols, std::int64_t kc,
                                                                    std::int64_t ld, std::int64_t ldc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int kTileM = Tiles::kTileM, kTileN = Tiles::kTileN, kStages = Tiles::kStages, kTileK = Tiles::kTileK;
  constexpr int kWarpsM = Tiles::kWarpsM, kWarpM = Tiles::kWarpM, kWarpN = Tiles::kWarpN;
  constexpr int kFragsM = Tiles::kFragsM, kFragsN = Tiles::kFragsN, kStageBytes = Tiles::kStageBytes;
  constexpr int kChunks = Tiles::kChunks, kLineStride = Tiles::kLineStride, kSteps32 = kTileK / 32;
  extern __shared__ __align__(128) unsigned char mma_smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warp_m = warp % kWarpsM, warp_n = warp / kWarpsM;
  const std::int64_t m0 = std::int64_t(blockIdx.x) * kTileM, n0 = std::int64_t(blockIdx.y) * kTileN;
  const int steps = int((kc + kTileK - 1) / kTileK);  // kc < 2^31

  // This thread's copies: chunk `chunk` of lines first_line + u · kLineStride of X (u < kTileM /
  // kLineStride) and of Y, a bit per line that exists; the sources advance by kTileK a step, and
  // k_left bytes of the chunk remain from the next step on. A copy of 0 bytes (past kc, past the
  // lines) reads nothing and writes zeros.
  const int chunk = threadIdx.x % kChunks, first_line = threadIdx.x / kChunks;
  constexpr int kLinesX = kTileM / kLineStride, kLinesY = kTileN / kLineStride;
  unsigned live_lines = 0;
#pragma unroll
  for (int u = 0; u < kLinesX; ++u) live_lines |= unsigned(m0 + first_line + u * kLineStride < rows) << u;
#pragma unroll
  for (int u = 0; u < kLinesY; ++u) live_lines |= unsigned(n0 + first_line + u * kLineStride < cols) << (kLinesX + u);
  const std::int64_t line_step = kLineStride * ld;
  const std::int8_t* x_src = x + (m0 + first_line) * ld + chunk * 16;
  const std::int8_t* y_src = y + (n0 + first_line) * ld + chunk * 16;
  int k_left = int(kc) - chunk * 16;
  const unsigned smem = ptx::shared_address(mma_smem);  // 32-bit shared addresses from here on
  const unsigned last_stage = smem + (kStages - 1) * kStageBytes;
  auto next_stage = [&](unsigned stage) { return stage == last_stage ? smem : stage + kStageBytes; };
  const unsigned smem_x = swizzled<kTileK>(first_line, chunk), smem_y = kTileM * kTileK + smem_x;
  // The next step of both operands into the stage at `stage` (kLineStride lines apart: the same swizzle).
  auto load_step = [&](unsigned stage) {
    const int bytes = k_left <= 0 ? 0 : k_left < 16 ? k_left : 16;
    const std::int8_t* src = x_src;
#pragma unroll
    for (int u = 0; u < kLinesX; ++u, src += line_step)
      ptx::cp_async_16_prefix(stage + smem_x + u * kLineStride * kTileK, src, (live_lines >> u) & 1 ? bytes : 0);
    src = y_src;
#pragma unroll
    for (int u = 0; u < kLinesY; ++u, src += line_step)
      ptx::cp_async_16_prefix(stage + smem_y + u * kLineStride * kTileK, src,
                              (live_lines >> (kLinesX + u)) & 1 ? bytes : 0);
    ptx::cp_async_commit();
    x_src += kTileK, y_src += kTileK, k_left -= kTileK;
  };

  // Fragments of 32 bytes of K (kk) from a stage slot. The A matrices: lines 0-7 / 8-15 of an m16
  // tile, chunks 2kk / 2kk + 1; the B matrices: n8 tile j chunks 2kk / 2kk + 1, then tile j + 1. Chunk
  // 2kk + h of a line lies at (h xor swizzle) xor kk·2 in 16-byte units (2kk has no bit 0), so each
  // thread's row address for kk is its kk = 0 address xor kk·32; the tiles i, j add multiples of
  // 128 bytes, which the xor does not touch.
  std::uint32_t a[2][kFragsM][4], b[2][kFragsN][2];
  const unsigned a_first = swizzled<kTileK>(warp_m * kWarpM + (lane & 15), lane >> 4);
  const unsigned b_first =
      kTileM * kTileK + swizzled<kTileK>(warp_n * kWarpN + (lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);
  auto load_fragments = [&](int set, unsigned stage, int kk) {
    const unsigned a_at = stage + (a_first ^ unsigned(kk << 5)), b_at = stage + (b_first ^ unsigned(kk << 5));
#pragma unroll
    for (int i = 0; i < kFragsM; ++i) ptx::ldmatrix_x4(a[set][i], a_at + i * 16 * kTileK);
#pragma unroll
    for (int j = 0; j < kFragsN; j += 2) {
      std::uint32_t q[4];
      ptx::ldmatrix_x4(q, b_at + j * 8 * kTileK);
      b[set][j][0] = q[0], b[set][j][1] = q[1], b[set][j + 1][0] = q[2], b[set][j + 1][1] = q[3];
    }
  };

  std::int32_t acc[kFragsM][kFragsN][4] = {};
  unsigned write_stage = smem;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) load_step(write_stage), write_stage += kStageBytes;
  ptx::cp_async_wait<kStages - 2>();
  __syncthreads();
  unsigned read_stage = smem;
  load_fragments(0, read_stage, 0);
  for (int s = 0; s < steps; ++s) {
#pragma unroll
    for (int kk = 0; kk < kSteps32; ++kk) {
      if (kk == kSteps32 - 1) {  // step s + 1 has landed; every warp is done reading step s - 1's stage
        ptx::cp_async_wait<kStages - 2>();
        __syncthreads();
        read_stage = next_stage(read_stage);
      }
      load_fragments((kk + 1) & 1, read_stage, (kk + 1) % kSteps32);
      if (kk == 0) load_step(write_stage), write_stage = next_stage(write_stage);  // step s - 1's stage
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) ptx::mma_m16n8k32_s8(acc[i][j], a[kk & 1][i], b[kk & 1][j], acc[i][j]);
    }
  }
  ptx::cp_async_wait<0>();

  // Fragment (i, j): rows lane / 4 and lane / 4 + 8, columns 2 (lane % 4) and 2 (lane % 4) + 1.
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const std::int64_t row = m0 + warp_m * kWarpM + i * 16 + (lane >> 2) + (e >> 1) * 8;
        const std::int64_t col = n0 + warp_n * kWarpN + j * 8 + 2 * (lane & 3) + (e & 1);
        if (row < rows && col < cols) c[row + col * ldc] = acc[i][j][e];
      }
#else
  __trap();  // launched only on compute capability >= 8.0
#endif
}

/// C (rows × cols INT32, column-major, leading dimension ldc) = Xᵀ·Y over kc < 2^31 positions; X, Y:
/// rows / cols lines of INT8, ld bytes apart (a multiple of 16), 16-byte aligned, on `device` (compute
/// capability 8.0+).
template <class Tiles = ProductTiles>
void int8_products(const std::int8_t* x, const std::int8_t* y, std::int32_t* c, std::int64_t rows, std::int64_t cols,
                   std::int64_t kc, std::int64_t ld, std::int64_t ldc, int device, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  allow_smem(reinterpret_cast<const void*>(int8_products_kernel<Tiles>), Tiles::kSmemBytes, device);
  const dim3 grid(unsigned((rows + Tiles::kTileM - 1) / Tiles::kTileM), unsigned((cols + Tiles::kTileN - 1) / Tiles::kTileN));
  int8_products_kernel<Tiles><<<grid, Tiles::kThreads, Tiles::kSmemBytes, stream>>>(x, y, c, rows, cols, kc, ld, ldc);
  IK_CUDA_CHECK_LAUNCH("int8_products_kernel");
}

// Stand-in residues for timing the products (their speed depends on the data: an all-zero product
// draws less power).
static __global__ void fill_pseudo_random_kernel(std::int8_t* p, std::int64_t count) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::uint32_t h = std::uint32_t(i) * 0x9E3779B1u ^ std::uint32_t(i >> 32);
    h ^= h >> 15, h *= 0x2C1B3C6Du, h ^= h >> 12;
    p[i] = static_cast<std::int8_t>(h >> 24);
  }
}

}  // namespace ironkernels::detail::gemm_mma
