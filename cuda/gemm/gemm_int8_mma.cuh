#pragma once
// The INT8 products of the Ozaki pipeline on mma.sync (sm_80+): C = Xᵀ·Y in exact INT32, X and Y
// `rows` and `cols` K-contiguous lines of INT8 residues `ld` bytes apart (the layout residues_kernel
// writes), C column-major (element (i, j) at c[i + j·ldc]). The same integers as cuBLAS's INT8 GEMM,
// whatever the tiling: every product and sum is exact.
//
// A block computes a tile of kTileM × kTileN of C over K in steps of kTileK bytes, kStages steps in
// flight to shared memory by 16-byte cp.async (zeros past the lines and past kc); each warp a tile of
// kWarpM × kWarpN from ldmatrix fragments, m16n8k32 at a time (MmaTiles). A line's 64 bytes of one step lie in
// 4 chunks of 16 whose order is xor-swizzled by line / 2, so the 8 lines of an ldmatrix meet all 32
// banks.
#include <cuda_runtime.h>

#include <cstdint>

#include "common/launch.cuh"
#include "common/ptx.cuh"
#include "core/cuda_check.hpp"

namespace ironkernels::detail::gemm_mma {

// One tile shape: TILE_M × TILE_N of C per block, WARPS_M × WARPS_N warps, STAGES steps in flight.
template <int TILE_M, int TILE_N, int WARPS_M, int WARPS_N, int STAGES>
struct MmaTiles {
  static constexpr int kTileM = TILE_M, kTileN = TILE_N, kStages = STAGES, kWarpsM = WARPS_M;
  static constexpr int kThreads = 32 * WARPS_M * WARPS_N;
  static constexpr int kWarpM = TILE_M / WARPS_M, kWarpN = TILE_N / WARPS_N;
  static constexpr int kFragsM = kWarpM / 16, kFragsN = kWarpN / 8;  // m16 × n8 tiles per warp
  static constexpr int kStageBytes = (TILE_M + TILE_N) * 64;         // kTileK = 64 bytes of K per line
  static constexpr int kSmemBytes = STAGES * kStageBytes;
  static_assert(kFragsM >= 1 && kFragsN % 2 == 0 && (TILE_M + TILE_N) * 4 % kThreads == 0);
};
// The product engine's shape (bench/DECISIONS.md, gemm).
using ProductTiles = MmaTiles<128, 128, 2, 4, 4>;

constexpr int kTileK = 64;
constexpr int kChunks = kTileK / 16;  // 16-byte chunks per line and step

// Byte offset of chunk `chunk` of line `line` in one operand's step tile (lines of kTileK bytes).
__device__ __forceinline__ int swizzled(int line, int chunk) {
  return line * kTileK + ((chunk ^ ((line >> 1) & (kChunks - 1))) << 4);
}

// One 16-byte chunk of a K step's tiles: line `line` of the block's X lines (those below tile_m)
// then its Y lines, at K offset k. `bytes` of it are data (0 … 16, zeros after: none past the lines,
// past kc, or when the step is not `live`).
struct StepChunk {
  const std::int8_t* src;
  int bytes, tile_line;  // tile_line: the line within its operand's tile
  bool of_x;
};
__device__ __forceinline__ StepChunk step_chunk(const std::int8_t* x, const std::int8_t* y, int line, int tile_m,
                                                std::int64_t m0, std::int64_t n0, std::int64_t rows, std::int64_t cols,
                                                std::int64_t k, std::int64_t kc, std::int64_t ld, bool live) {
  StepChunk q;
  q.of_x = line < tile_m;
  q.tile_line = q.of_x ? line : line - tile_m;
  const std::int64_t global_line = (q.of_x ? m0 : n0) + q.tile_line;
  const bool valid = live && global_line < (q.of_x ? rows : cols) && k < kc;
  q.bytes = valid ? int(kc - k < 16 ? kc - k : 16) : 0;
  q.src = (q.of_x ? x : y) + (valid ? global_line * ld + k : 0);
  return q;
}

template <class Tiles>
__global__ void __launch_bounds__(Tiles::kThreads) int8_products_kernel(const std::int8_t* __restrict__ x,
                                                                 const std::int8_t* __restrict__ y,
                                                                 std::int32_t* __restrict__ c, std::int64_t rows,
                                                                 std::int64_t cols, std::int64_t kc, std::int64_t ld,
                                                                 std::int64_t ldc) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int kTileM = Tiles::kTileM, kTileN = Tiles::kTileN, kStages = Tiles::kStages, kThreads = Tiles::kThreads;
  constexpr int kWarpsM = Tiles::kWarpsM, kWarpM = Tiles::kWarpM, kWarpN = Tiles::kWarpN;
  constexpr int kFragsM = Tiles::kFragsM, kFragsN = Tiles::kFragsN, kStageBytes = Tiles::kStageBytes;
  extern __shared__ __align__(128) unsigned char mma_smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warp_m = warp % kWarpsM, warp_n = warp / kWarpsM;
  const std::int64_t m0 = std::int64_t(blockIdx.x) * kTileM, n0 = std::int64_t(blockIdx.y) * kTileN;
  const std::int64_t steps = (kc + kTileK - 1) / kTileK;

  // Step `s` of both operands into stage slot `slot`: (kTileM + kTileN) · kChunks chunks.
  auto load_step = [&](std::int64_t s, int slot) {
    unsigned char* stage = mma_smem + slot * kStageBytes;
    constexpr int kPerThread = (kTileM + kTileN) * kChunks / kThreads;
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const int i = threadIdx.x + u * kThreads, line = i / kChunks, chunk = i % kChunks;
      const StepChunk q = step_chunk(x, y, line, kTileM, m0, n0, rows, cols, s * kTileK + chunk * 16, kc, ld, s < steps);
      ptx::cp_async_16_prefix(stage + (q.of_x ? 0 : kTileM * kTileK) + swizzled(q.tile_line, chunk), q.src, q.bytes);
    }
    ptx::cp_async_commit();
  };

  std::int32_t acc[kFragsM][kFragsN][4] = {};
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) load_step(s, s);

  for (std::int64_t s = 0; s < steps; ++s) {
    ptx::cp_async_wait<kStages - 2>();
    __syncthreads();  // step s has landed; every warp is done with the slot refilled next
    load_step(s + kStages - 1, int((s + kStages - 1) % kStages));
    const unsigned char* sx = mma_smem + int(s % kStages) * kStageBytes;
    const unsigned char* sy = sx + kTileM * kTileK;
#pragma unroll
    for (int kk = 0; kk < kTileK / 32; ++kk) {
      std::uint32_t a[kFragsM][4], b[kFragsN][2];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)  // matrices: lines 0-7 / 8-15 of the m16 tile, chunk 2kk / 2kk + 1
        ptx::ldmatrix_x4(a[i], sx + swizzled(warp_m * kWarpM + i * 16 + (lane & 15), 2 * kk + (lane >> 4)));
#pragma unroll
      for (int j = 0; j < kFragsN; j += 2) {  // matrices: n8 tile j chunk 2kk / 2kk + 1, then tile j + 1
        std::uint32_t q[4];
        ptx::ldmatrix_x4(q, sy + swizzled(warp_n * kWarpN + j * 8 + (lane & 7) + ((lane >> 4) << 3),
                                          2 * kk + ((lane >> 3) & 1)));
        b[j][0] = q[0], b[j][1] = q[1], b[j + 1][0] = q[2], b[j + 1][1] = q[3];
      }
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) ptx::mma_m16n8k32_s8(acc[i][j], a[i], b[j], acc[i][j]);
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

/// C (rows × cols INT32, column-major, leading dimension ldc) = Xᵀ·Y over kc positions; X, Y: rows /
/// cols lines of INT8, ld bytes apart (a multiple of 16), 16-byte aligned, on `device` (compute
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
