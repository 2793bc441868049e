#pragma once
// The INT8 products of the Ozaki pipeline on mma.sync (sm_80+): C = Xᵀ·Y in exact INT32, X and Y
// `rows` and `cols` K-contiguous lines of INT8 residues `ld` bytes apart (the layout residues_kernel
// writes), C column-major (element (i, j) at c[i + j·ldc]). The same integers as cuBLAS's INT8 GEMM,
// whatever the tiling: every product and sum is exact.
//
// One block per SM runs tiles of kTileM × kTileN of C one after another (a batch of products in one
// launch, products outermost, so no product ends on a partial wave), over K in steps of kTileK
// bytes, kStages steps in flight to shared memory (zeros past the lines and past kc): where the
// library's sm_90a code runs, by TMA (two tensor copies a step, issued by one thread); elsewhere by
// every thread's 16-byte cp.async, a step's copies spread over its 32-byte slices of K. The next
// tile's first steps are issued before the current tile's stores. Each warp computes a tile of
// kWarpM × kWarpN from ldmatrix fragments, m16n8k32 at a time (MmaTiles). A line's kTileK bytes of
// one step lie in 16-byte chunks whose order is xor-swizzled by the line's 128-byte row (TMA's
// 128-byte swizzle), so the 8 lines of an ldmatrix meet all 32 banks. The fragments of the next 32
// bytes of K are loaded while the mma.sync of the current ones issue (two register sets), also across
// the barrier between steps; each thread's cp.async sources are one pointer per operand advanced by
// kTileK a step.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/launch.cuh"
#include "common/ptx.cuh"
#include "core/cuda_check.hpp"
#include "gemm/gemm_int8_wgmma.cuh"  // lines_map, available

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
  static_assert(kFragsM >= 1 && kFragsN % 2 == 0 && (TILE_K == 64 || TILE_K == 128 || TILE_K == 256));
  static_assert(kThreads % kChunks == 0 && TILE_M % kLineStride == 0 && TILE_N % kLineStride == 0);
};
// The product engine's shape (bench/DECISIONS.md, gemm).
using ProductTiles = MmaTiles<128, 256, 2, 4, 3, 128>;

// Byte offset of chunk `chunk` of line `line` in one operand's step tile of lines of TILE_K bytes:
// the chunk index xor-ed with the line's 128-byte row (a line of 128 bytes or more is a row) mod 8
// (TILE_K = 64: mod 4), so the 8 lines of an ldmatrix meet 8 different groups of banks.
template <int TILE_K>
__device__ __forceinline__ int swizzled(int line, int chunk) {
  constexpr int kLinesPerRow = TILE_K >= 128 ? 1 : 128 / TILE_K, kRows = TILE_K >= 128 ? 8 : TILE_K / 16;
  return line * TILE_K + ((chunk ^ ((line / kLinesPerRow) & (kRows - 1))) << 4);
}

// Products of one launch: `count` of them, the u-th on X + u·x, Y + u·y into C + u·c (elements).
struct ProductBatch {
  int count = 1;
  std::int64_t x = 0, y = 0, c = 0;
};

// kTma (sm_90, kTileK = 128): each step's two tiles come by TMA (x_map, y_map: gemm_wgmma::lines_map),
// issued by thread 0 into stages aligned to 1024 bytes (TMA's 128-byte swizzle is `swizzled`), each
// stage's mbarrier counting the bytes in; else by every thread's cp.async.
template <class Tiles, bool kTma>
__global__ void __launch_bounds__(Tiles::kThreads, 1)
    int8_products_kernel(const std::int8_t* __restrict__ x, const std::int8_t* __restrict__ y,
                         std::int32_t* __restrict__ c, std::int64_t rows, std::int64_t cols, std::int64_t kc,
                         std::int64_t ld, std::int64_t ldc, ProductBatch batch, const __grid_constant__ CUtensorMap x_map,
                         const __grid_constant__ CUtensorMap y_map) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int kTileM = Tiles::kTileM, kTileN = Tiles::kTileN, kStages = Tiles::kStages, kTileK = Tiles::kTileK;
  constexpr int kWarpsM = Tiles::kWarpsM, kWarpM = Tiles::kWarpM, kWarpN = Tiles::kWarpN;
  constexpr int kFragsM = Tiles::kFragsM, kFragsN = Tiles::kFragsN, kStageBytes = Tiles::kStageBytes;
  constexpr int kChunks = Tiles::kChunks, kLineStride = Tiles::kLineStride, kSteps32 = kTileK / 32;
  constexpr int kGroupRows = 8;
  extern __shared__ __align__(128) unsigned char mma_smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warp_m = warp % kWarpsM, warp_n = warp / kWarpsM;
  const int tiles_m = int((rows + kTileM - 1) / kTileM), tiles_n = int((cols + kTileN - 1) / kTileN);
  const int tiles = tiles_m * tiles_n * batch.count;
  const int steps = int((kc + kTileK - 1) / kTileK);  // kc < 2^31

  // This thread's copies: chunk `chunk` of lines first_line + u · kLineStride of X (u < kTileM /
  // kLineStride) and of Y, a bit per line that exists; the sources advance by kTileK a step, and
  // k_left bytes of the chunk remain from the next step on. A copy of 0 bytes (past kc, past the
  // lines) reads nothing and writes zeros.
  const int chunk = threadIdx.x % kChunks, first_line = threadIdx.x / kChunks;
  constexpr int kLinesX = kTileM / kLineStride, kLinesY = kTileN / kLineStride;
  const std::int64_t line_step = kLineStride * ld;
  unsigned live_lines = 0;
  const std::int8_t *x_src = nullptr, *y_src = nullptr;
  int k_left = 0, product = 0;
  std::int64_t m0 = 0, n0 = 0;
  std::int32_t* c_tile = nullptr;
  // Tile `tile`: products outermost, then groups of kGroupRows tile rows column by column (the
  // blocks running at once share their lines of X and Y in L2).
  auto begin_tile = [&](int tile) {
    product = tile / (tiles_m * tiles_n);
    const int id = tile % (tiles_m * tiles_n);
    const int per_group = kGroupRows * tiles_n, first = id / per_group * kGroupRows;
    const int rows_in_group = min(tiles_m - first, kGroupRows);
    const int tile_m = first + id % per_group % rows_in_group, tile_n = id % per_group / rows_in_group;
    m0 = std::int64_t(tile_m) * kTileM, n0 = std::int64_t(tile_n) * kTileN;
    live_lines = 0;
#pragma unroll
    for (int u = 0; u < kLinesX; ++u) live_lines |= unsigned(m0 + first_line + u * kLineStride < rows) << u;
#pragma unroll
    for (int u = 0; u < kLinesY; ++u) live_lines |= unsigned(n0 + first_line + u * kLineStride < cols) << (kLinesX + u);
    x_src = x + product * batch.x + (m0 + first_line) * ld + chunk * 16;
    y_src = y + product * batch.y + (n0 + first_line) * ld + chunk * 16;
    c_tile = c + product * batch.c;
    k_left = int(kc) - chunk * 16;
  };
  // The stages (1024-byte aligned for TMA), then TMA's mbarriers, one per stage.
  unsigned char* const stages =
      kTma ? mma_smem + ((1024 - (ptx::shared_address(mma_smem) & 1023)) & 1023) : mma_smem;
  auto* const full = reinterpret_cast<unsigned long long*>(stages + kStages * kStageBytes);
  const unsigned smem = ptx::shared_address(stages);  // 32-bit shared addresses from here on
  const unsigned last_stage = smem + (kStages - 1) * kStageBytes;
  auto next_stage = [&](unsigned stage) { return stage == last_stage ? smem : stage + kStageBytes; };
  const unsigned smem_x = swizzled<kTileK>(first_line, chunk), smem_y = kTileM * kTileK + smem_x;
  // Part `part` of `parts` of the next step of both operands into the stage at `stage` (kLineStride
  // lines apart: the same swizzle); the last part commits the step's copies.
  auto load_part = [&](unsigned stage, int part, int parts) {
    const int bytes = k_left <= 0 ? 0 : k_left < 16 ? k_left : 16;
#pragma unroll
    for (int u = 0; u < kLinesX + kLinesY; ++u) {
      if (u * parts / (kLinesX + kLinesY) != part) continue;
      const bool in_x = u < kLinesX;
      const int v = in_x ? u : u - kLinesX;
      ptx::cp_async_16_prefix(stage + (in_x ? smem_x : smem_y) + v * kLineStride * kTileK,
                              (in_x ? x_src : y_src) + v * line_step, (live_lines >> u) & 1 ? bytes : 0);
    }
    if (part == parts - 1) {
      ptx::cp_async_commit();
      x_src += kTileK, y_src += kTileK, k_left -= kTileK;
    }
  };
  // TMA: step s of the tile into its stage (s mod kStages), by thread 0.
  auto tma_step = [&](int s) {
    unsigned long long* bar = full + s % kStages;
    unsigned char* stage = stages + s % kStages * kStageBytes;
    ptx::mbarrier_arrive_expect_tx(bar, kStageBytes);
    ptx::tma_load_3d(stage, &x_map, s * kTileK, int(m0), product, bar);
    ptx::tma_load_3d(stage + kTileM * kTileK, &y_map, s * kTileK, int(n0), product, bar);
  };
  // TMA: every thread waits for step s of the tile; `phases` holds each stage's next parity.
  unsigned phases = 0;
  auto wait_step = [&](int s) {
    ptx::mbarrier_wait_parity(full + s % kStages, (phases >> (s % kStages)) & 1);
    phases ^= 1u << (s % kStages);
  };
  // The first steps of the tile begun: kStages - 1 into stages 0, 1, … by cp.async; by TMA all
  // kStages that exist.
  auto load_prologue = [&]() {
    if constexpr (kTma) {
      if (threadIdx.x == 0)
        for (int s = 0; s < kStages && s < steps; ++s) tma_step(s);
    } else {
#pragma unroll
      for (int s = 0; s < kStages - 1; ++s) load_part(smem + s * kStageBytes, 0, 1);
    }
  };

  // Fragments of 32 bytes of K (kk) from a stage slot. The A matrices: lines 0-7 / 8-15 of an m16
  // tile, chunks 2kk / 2kk + 1; the B matrices: n8 tile j chunks 2kk / 2kk + 1, then tile j + 1. Chunk
  // 2kk + h of a line lies at (h xor swizzle) xor kk·2 in 16-byte units (2kk has no bit 0), so each
  // thread's row address for kk is its kk = 0 address xor kk·32; the tiles i, j add multiples of
  // the line length, which the xor does not touch.
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

  int tile = blockIdx.x;
  if (tile >= tiles) return;
  if (kTma && threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) ptx::mbarrier_init(full + s, 1);
    ptx::fence_mbarrier_init();
  }
  if (kTma) __syncthreads();
  begin_tile(tile);
  load_prologue();
  for (;;) {
    std::int32_t acc[kFragsM][kFragsN][4] = {};
    if constexpr (kTma) {
      if (steps > 0) wait_step(0);
    } else {
      ptx::cp_async_wait<kStages - 2>();
      __syncthreads();
    }
    unsigned read_stage = smem, write_stage = last_stage;
    load_fragments(0, read_stage, 0);
    for (int s = 0; s < steps; ++s) {
#pragma unroll
      for (int kk = 0; kk < kSteps32; ++kk) {
        // Step s + kStages - 1 into step s - 1's stage, a part each 32 bytes of K; with two stages in
        // the first half of the step, so that it lands before the step's end.
        constexpr int kParts = kStages > 2 ? kSteps32 : kSteps32 / 2;
        if (!kTma && kk < kParts) {
          load_part(write_stage, kk, kParts);
          if (kk == kParts - 1) write_stage = next_stage(write_stage);
        }
        if (kk == kSteps32 - 1) {  // step s + 1 has landed; every warp is done reading step s - 1's stage
          if constexpr (kTma) {  // every warp is done reading step s's stage: step s + kStages into it
            __syncthreads();
            if (threadIdx.x == 0 && s + kStages < steps) tma_step(s + kStages);
            if (s + 1 < steps) wait_step(s + 1);
          } else {
            ptx::cp_async_wait<kStages - 2>();
            __syncthreads();
          }
          read_stage = next_stage(read_stage);
        }
        load_fragments((kk + 1) & 1, read_stage, (kk + 1) % kSteps32);
#pragma unroll
        for (int i = 0; i < kFragsM; ++i)
#pragma unroll
          for (int j = 0; j < kFragsN; ++j) ptx::mma_m16n8k32_s8(acc[i][j], a[kk & 1][i], b[kk & 1][j], acc[i][j]);
      }
    }
    if (!kTma) ptx::cp_async_wait<0>();  // the copies past the tile's K (zeros) have landed

    // The block starts its next tile's copies before it stores this one's (the stores cover their
    // latency), once every warp is done reading the stages.
    const std::int64_t row0 = m0 + warp_m * kWarpM + (lane >> 2), col0 = n0 + warp_n * kWarpN + 2 * (lane & 3);
    std::int32_t* const c_out = c_tile;
    tile += gridDim.x;
    const bool more = tile < tiles;
    if (more) {
      __syncthreads();
      begin_tile(tile);
      load_prologue();
    }
    // Fragment (i, j): rows lane / 4 and lane / 4 + 8, columns 2 (lane % 4) and 2 (lane % 4) + 1.
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
      for (int j = 0; j < kFragsN; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const std::int64_t row = row0 + i * 16 + (e >> 1) * 8, col = col0 + j * 8 + (e & 1);
          if (row < rows && col < cols) c_out[row + col * ldc] = acc[i][j][e];
        }
    if (!more) break;
  }
#else
  __trap();  // launched only on compute capability >= 8.0
#endif
}

/// C (rows × cols INT32, column-major, leading dimension ldc) = Xᵀ·Y over kc < 2^31 positions; X, Y:
/// rows / cols lines of INT8, ld bytes apart (a multiple of 16), 16-byte aligned, on `device` (compute
/// capability 8.0+); `batch.count` such products in one launch (fewer than 2^31 tiles in all; batch
/// strides nonzero multiples of 16 where count > 1). Loads by TMA where the device runs the library's
/// sm_90a code (and `tma`), else by cp.async.
template <class Tiles = ProductTiles>
void int8_products(const std::int8_t* x, const std::int8_t* y, std::int32_t* c, std::int64_t rows, std::int64_t cols,
                   std::int64_t kc, std::int64_t ld, std::int64_t ldc, int device, cudaStream_t stream,
                   ProductBatch batch = {}, bool tma = true) {
  if (rows == 0 || cols == 0 || batch.count == 0) return;
  const std::int64_t tiles = (rows + Tiles::kTileM - 1) / Tiles::kTileM * ((cols + Tiles::kTileN - 1) / Tiles::kTileN) * batch.count;
  int sms = 0;
  IK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const unsigned grid = unsigned(std::min<std::int64_t>(tiles, sms));  // one block per SM (registers, shared memory)
  if constexpr (Tiles::kTileK == gemm_wgmma::kTileK) {
    if (tma && kc > 0 && gemm_wgmma::available(device)) {
      constexpr int kSmem = Tiles::kSmemBytes + 1024 + Tiles::kStages * 8;  // alignment, mbarriers
      allow_smem(reinterpret_cast<const void*>(int8_products_kernel<Tiles, true>), kSmem, device);
      const bool one = batch.count == 1;  // a tensor map's set stride must be a nonzero multiple of 16
      const CUtensorMap x_map = gemm_wgmma::lines_map(x, kc, rows, ld, batch.count, one ? rows * ld : batch.x, Tiles::kTileM),
                        y_map = gemm_wgmma::lines_map(y, kc, cols, ld, batch.count, one ? cols * ld : batch.y, Tiles::kTileN);
      int8_products_kernel<Tiles, true>
          <<<grid, Tiles::kThreads, kSmem, stream>>>(x, y, c, rows, cols, kc, ld, ldc, batch, x_map, y_map);
      IK_CUDA_CHECK_LAUNCH("int8_products_kernel");
      return;
    }
  }
  allow_smem(reinterpret_cast<const void*>(int8_products_kernel<Tiles, false>), Tiles::kSmemBytes, device);
  int8_products_kernel<Tiles, false>
      <<<grid, Tiles::kThreads, Tiles::kSmemBytes, stream>>>(x, y, c, rows, cols, kc, ld, ldc, batch, {}, {});
  IK_CUDA_CHECK_LAUNCH("int8_products_kernel");
}

}  // namespace ironkernels::detail::gemm_mma
