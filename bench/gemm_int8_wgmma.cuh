#pragma once
// An experiment for the GEMM's Hopper engine (sm_90a), timed by gemm_mma_ceiling against the mma
// engine and checked against it bit for bit: the same product C = Xᵀ·Y (INT8 lines K-contiguous, C
// INT32 column-major) on wgmma. A block of two warpgroups computes 128 × 256 of C, each warpgroup
// 64 rows by two m64n128k32 wgmma per 32 bytes of K, both operands read by the tensor cores from
// shared memory. K moves in steps of 128 bytes, kStages steps in flight by 16-byte cp.async, each
// line's 8 chunks stored in the 128-byte swizzle wgmma's descriptors name (chunk c of line l at
// chunk c ^ (l % 8), groups of 8 lines 1024 bytes apart). Not shipped: the product launches the mma
// engine or cuBLAS.
#include <cuda_runtime.h>

#include <cstdint>

#include "common/ptx.cuh"
#include "gemm/gemm_int8_mma.cuh"

namespace ironkernels::bench::wgmma {
namespace ptx = ironkernels::detail::ptx;

constexpr int kTileM = 128, kTileN = 256, kTileK = 128, kStages = 4, kThreads = 256;
constexpr int kStageBytes = (kTileM + kTileN) * kTileK;  // 48 KB
constexpr int kSmemBytes = kStages * kStageBytes + 1024;  // + room to align the tiles to 1024 bytes

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define IK_WGMMA_ARCH 1
#endif

// The shared-memory matrix descriptor of a K-major tile in the 128-byte swizzle: start address,
// leading byte offset 16 (unused by this layout), stride byte offset 1024 (8 lines of 128 bytes),
// swizzle mode 1 (128 bytes) in bits 62-63.
__device__ __forceinline__ std::uint64_t tile_descriptor(const void* p) {
  const std::uint64_t addr = ptx::shared_address(p);
  return ((addr & 0x3FFFF) >> 4) | (std::uint64_t(16 >> 4) << 16) | (std::uint64_t(1024 >> 4) << 32) |
         (std::uint64_t(1) << 62);
}

// wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8: d (64 registers) += A (64 × 32, descriptor a)
// · B (32 × 128, descriptor b), exact INT32.
__device__ __forceinline__ void wgmma_m64n128k32_s8(std::int32_t (&d)[64], std::uint64_t a, std::uint64_t b) {
#ifdef IK_WGMMA_ARCH
  asm volatile(
      "{\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, 1;\n"
      "}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
        "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
        "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
        "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
        "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
        "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
        "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
        "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
      : "l"(a), "l"(b));
#else
  __trap();
#endif
}
__device__ __forceinline__ void wgmma_fence() {
#ifdef IK_WGMMA_ARCH
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit_and_wait_all() {
#ifdef IK_WGMMA_ARCH
  asm volatile("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;" ::: "memory");
#endif
}

__global__ void __launch_bounds__(kThreads, 1) int8_products_wgmma_kernel(const std::int8_t* __restrict__ x,
                                                                           const std::int8_t* __restrict__ y,
                                                                           std::int32_t* __restrict__ c,
                                                                           std::int64_t rows, std::int64_t cols,
                                                                           std::int64_t kc, std::int64_t ld,
                                                                           std::int64_t ldc) {
#ifdef IK_WGMMA_ARCH
  extern __shared__ unsigned char wgmma_smem_raw[];
  unsigned char* const smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(wgmma_smem_raw) + 1023) & ~std::uintptr_t(1023));
  const int warpgroup = threadIdx.x / 128, lane = threadIdx.x & 31, warp = (threadIdx.x / 32) & 3;
  const std::int64_t m0 = std::int64_t(blockIdx.x) * kTileM, n0 = std::int64_t(blockIdx.y) * kTileN;
  const std::int64_t steps = (kc + kTileK - 1) / kTileK;

  auto load_step = [&](std::int64_t s, int slot) {
    unsigned char* stage = smem + slot * kStageBytes;
    constexpr int kPerThread = (kTileM + kTileN) * (kTileK / 16) / kThreads;
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const int i = threadIdx.x + u * kThreads, line = i / 8, chunk = i % 8;
      const detail::gemm_mma::StepChunk q =
          detail::gemm_mma::step_chunk(x, y, line, kTileM, m0, n0, rows, cols, s * kTileK + chunk * 16, kc, ld, s < steps);
      ptx::cp_async_16_prefix(
          stage + (q.of_x ? 0 : kTileM * kTileK) + q.tile_line * kTileK + ((chunk ^ (q.tile_line & 7)) << 4), q.src, q.bytes);
    }
    ptx::cp_async_commit();
  };

  std::int32_t acc[2][64] = {};
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) load_step(s, s);
  for (std::int64_t s = 0; s < steps; ++s) {
    ptx::cp_async_wait<kStages - 2>();
    ptx::fence_proxy_async_shared();  // this thread's landed copies, visible to the tensor cores' reads
    __syncthreads();  // step s is in for all; every warpgroup's wgmma on the slot refilled next is done
    load_step(s + kStages - 1, int((s + kStages - 1) % kStages));
    const unsigned char* sx = smem + int(s % kStages) * kStageBytes + warpgroup * 64 * kTileK;
    const unsigned char* sy = smem + int(s % kStages) * kStageBytes + kTileM * kTileK;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kTileK / 32; ++kk) {
      const std::uint64_t a = tile_descriptor(sx + 32 * kk);
#pragma unroll
      for (int h = 0; h < 2; ++h) wgmma_m64n128k32_s8(acc[h], a, tile_descriptor(sy + h * 128 * kTileK + 32 * kk));
    }
    wgmma_commit_and_wait_all();
  }
  ptx::cp_async_wait<0>();

  // Register 4i + e of half h: row 16·warp + lane / 4 (+ 8 for e >= 2) of the warpgroup's 64,
  // column 128h + 8i + 2 (lane % 4) + (e & 1).
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int i = 0; i < 16; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const std::int64_t row = m0 + warpgroup * 64 + warp * 16 + (lane >> 2) + (e >> 1) * 8;
        const std::int64_t col = n0 + h * 128 + i * 8 + 2 * (lane & 3) + (e & 1);
        if (row < rows && col < cols) c[row + col * ldc] = acc[h][4 * i + e];
      }
#else
  __trap();  // sm_90a only
#endif
}

/// As gemm_mma::int8_products, on wgmma (sm_90a).
inline void int8_products(const std::int8_t* x, const std::int8_t* y, std::int32_t* c, std::int64_t rows,
                          std::int64_t cols, std::int64_t kc, std::int64_t ld, std::int64_t ldc, int device,
                          cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  detail::allow_smem(reinterpret_cast<const void*>(int8_products_wgmma_kernel), kSmemBytes, device);
  const dim3 grid(unsigned((rows + kTileM - 1) / kTileM), unsigned((cols + kTileN - 1) / kTileN));
  int8_products_wgmma_kernel<<<grid, kThreads, kSmemBytes, stream>>>(x, y, c, rows, cols, kc, ld, ldc);
  IK_CUDA_CHECK_LAUNCH("int8_products_wgmma_kernel");
}

}  // namespace ironkernels::bench::wgmma
