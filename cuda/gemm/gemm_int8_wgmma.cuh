#pragma once
// The INT8 products of the Ozaki pipeline on Hopper's wgmma (sm_90a): the same C = Xᵀ·Y as
// gemm_int8_mma.cuh (X, Y K-contiguous lines of INT8, C INT32 column-major), the same integers.
//
// A block of three warpgroups computes a kTileM × kTileN tile of C. Warpgroup 0 is the producer: one
// thread issues TMA copies of each K step (kTileK bytes of the block's lines, in the 128-byte swizzle
// the wgmma descriptors name) into kStages slots, each slot's `full` mbarrier counting the bytes in.
// Warpgroups 1 and 2 are the consumers, 64 rows of the tile each: per step four m64n256k32 wgmma read
// both operands from shared memory, one group stays in flight while the next step's are issued, and a
// slot's `empty` mbarrier is arrived at once both consumers' wgmma on it are done. Positions past the
// lines or past kc come in as zeros (TMA's out-of-bounds fill), so edges need no code. Blocks go over
// C's tiles in groups of kGroupM tile rows, so that the blocks running at once share their X and Y
// lines in L2.
//
// One launch computes the products of several moduli (X, Y and the residue planes of modulus t a
// fixed stride after those of modulus 0, read through 3-dimensional tensor maps), modulus outermost.
//
// The epilogue writes either the INT32 products or, fused, their residues modulo the modulus p:
// reduced in registers (the reference's product_residue), staged column by column in the freed
// slots, and stored as one byte per element into C's residue plane (16-byte stores), added modulo p to
// the plane's residues of the earlier K chunks where `accumulate`. A quarter of the INT32 bytes, and no
// separate reduction pass.
//
// Karatsuba (complex parts, GemmColumns::complex_pairs): X and Y each hold three residue sets (a
// fourth tensor-map coordinate) and a block runs ozaki_karatsuba.hpp's three products over its tile
// one after another on the same pipeline: K3; then, the accumulator reset, K1; then K2 added to it.
// The accumulator ends as Im = K1 + K2, and Re = K1 − K3 is kept mod p in shared memory between the
// phases (128 bytes a thread). Three INT8 products of k/2 where the stacked operands take four.
#include <cuda.h>  // CUtensorMap (header only: the encoder is reached through the runtime)
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <mutex>

#include "common/launch.cuh"
#include "common/ptx.cuh"
#include "core/cuda_check.hpp"
#include "gemm/gemm_wgmma_tiles.hpp"
#include "gemm/ozaki.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels::detail::gemm_wgmma {

constexpr int kTileK = 128, kStages = 4, kGroupM = 16;
constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
constexpr int kTileBytesX = kTileM * kTileK, kStageBytes = (kTileM + kTileN) * kTileK;  // 48 KB a step
struct Barriers {
  unsigned long long full[kStages], empty[kStages];
};
// The slots (1024-byte aligned, as the 128-byte swizzle needs), then the barriers.
constexpr int kSmemBytes = 1024 + kStages * kStageBytes + int(sizeof(Barriers));
// The residue epilogue's staging in the slots: per consumer kTileN columns of 64 bytes, kOutStride
// apart (16-byte aligned; 80 puts the four columns a store instruction's lanes write in distinct banks).
constexpr int kOutStride = 80;
static_assert(kConsumers * kTileN * kOutStride <= kStages * kStageBytes);
// After the barriers: each consumer thread's 128 residues of Re, kept between the phases (32 words).
constexpr int kKeptBytes = 128 * kConsumers * 128;
constexpr int kSmemBytesKaratsuba = kSmemBytes + kKeptBytes;
static_assert(sizeof(Barriers) % 16 == 0 && kSmemBytesKaratsuba <= 227 * 1024);

// Where the products go: INT32 into c (column-major, ldc; one modulus), or with `plane` those of
// modulus t reduced mod `moduli[t].p` into plane + t·plane_stride (one byte per element,
// column-major, ldc), added to its contents mod p where `accumulate` (Karatsuba: Re into `plane`,
// Im into `plane_im`). With `live`, the blocks of moduli t >= *live return at once (a count chosen
// on the device).
struct ProductOutput {
  std::int32_t* c = nullptr;
  std::uint8_t *plane = nullptr, *plane_im = nullptr;
  std::int64_t ldc = 0, plane_stride = 0;
  ozaki::ResidueConstants moduli[kGemmMaxModuli]{};
  const int* live = nullptr;
  bool accumulate = false;
};

// 16 residues (bytes) a + b mod p, each a, b < p.
__device__ __forceinline__ uint4 add_residues(uint4 a, uint4 b, std::uint32_t p) {
  std::uint32_t* wa = &a.x;
  const std::uint32_t* wb = &b.x;
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    std::uint32_t out = 0;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      std::uint32_t r = ((wa[w] >> (8 * e)) & 0xffu) + ((wb[w] >> (8 * e)) & 0xffu);
      if (r >= p) r -= p;
      out |= r << (8 * e);
    }
    wa[w] = out;
  }
  return a;
}

// Four residues (bytes) a − b mod p, each a, b < p.
__device__ __forceinline__ std::uint32_t sub_residues(std::uint32_t a, std::uint32_t b, std::uint32_t p) {
  std::uint32_t out = 0;
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const std::uint32_t x = (a >> (8 * e)) & 0xffu, y = (b >> (8 * e)) & 0xffu;
    out |= (x >= y ? x - y : x + p - y) << (8 * e);
  }
  return out;
}

// The shared-memory matrix descriptor of a K-major operand tile in the 128-byte swizzle: start address,
// leading byte offset 16 (unused by this layout), stride byte offset 1024 (8 lines of 128 bytes),
// swizzle mode 1 (128 bytes) in bits 62-63.
__device__ __forceinline__ std::uint64_t tile_descriptor(const void* p) {
  const std::uint64_t addr = ptx::shared_address(p);
  return ((addr & 0x3FFFF) >> 4) | (std::uint64_t(16 >> 4) << 16) | (std::uint64_t(1024 >> 4) << 32) |
         (std::uint64_t(1) << 62);
}

template <bool kKaratsuba>
__global__ void __launch_bounds__(kThreads, 1)
    int8_products_wgmma_kernel(const __grid_constant__ CUtensorMap x_map, const __grid_constant__ CUtensorMap y_map,
                               const __grid_constant__ ProductOutput out, std::int64_t rows, std::int64_t cols,
                               std::int64_t kc) {
#ifdef IK_PTX_SM90A
  extern __shared__ unsigned char wgmma_smem_raw[];
  unsigned char* const slots = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(wgmma_smem_raw) + 1023) & ~std::uintptr_t(1023));
  Barriers& bar = *reinterpret_cast<Barriers*>(slots + kStages * kStageBytes);
  const int warpgroup = int(threadIdx.x) / 128;
  const int steps = int((kc + kTileK - 1) / kTileK);
  constexpr int kPhases = kKaratsuba ? ozaki::kKaratsubaSets : 1;

  // This block's modulus (outermost) and tile: tile rows in groups of kGroupM, tile columns outermost
  // within a group.
  const int tiles_m = int((rows + kTileM - 1) / kTileM), tiles_n = int((cols + kTileN - 1) / kTileN);
  const int modulus = int(blockIdx.x) / (tiles_m * tiles_n), tile = int(blockIdx.x) % (tiles_m * tiles_n);
  if (out.live && modulus >= *out.live) return;
  const int group = tile / (kGroupM * tiles_n), in_group = tile % (kGroupM * tiles_n);
  const int group_rows = min(kGroupM, tiles_m - group * kGroupM);
  const int tile_m = group * kGroupM + in_group % group_rows, tile_n = in_group / group_rows;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) ptx::mbarrier_init(&bar.full[s], 1), ptx::mbarrier_init(&bar.empty[s], kConsumers);
    ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {  // producer
    ptx::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      ptx::prefetch_tensor_map(&x_map);
      ptx::prefetch_tensor_map(&y_map);
      for (int s = 0; s < kPhases * steps; ++s) {
        const int slot = s % kStages, phase = s / steps, k0 = (s % steps) * kTileK;
        if (s >= kStages) ptx::mbarrier_wait_parity(&bar.empty[slot], unsigned(s / kStages - 1) & 1);
        unsigned char* stage = slots + slot * kStageBytes;
        ptx::mbarrier_arrive_expect_tx(&bar.full[slot], kStageBytes);
        if constexpr (kKaratsuba) {
          ptx::tma_load_4d(stage, &x_map, k0, tile_m * kTileM, modulus, ozaki::karatsuba_a_of(phase), &bar.full[slot]);
          ptx::tma_load_4d(stage + kTileBytesX, &y_map, k0, tile_n * kTileN, modulus, ozaki::karatsuba_b_of(phase),
                           &bar.full[slot]);
        } else {
          ptx::tma_load_3d(stage, &x_map, k0, tile_m * kTileM, modulus, &bar.full[slot]);
          ptx::tma_load_3d(stage + kTileBytesX, &y_map, k0, tile_n * kTileN, modulus, &bar.full[slot]);
        }
      }
    }
    return;
  }

  ptx::setmaxnreg_inc<232>();
  const int consumer = warpgroup - 1;
  std::int32_t acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0;
  const ozaki::ResidueConstants& residue = out.moduli[modulus];
  // Karatsuba: this thread's kept residues, word i (those of acc[4i … 4i + 3]) at i·256 + the
  // consumer thread's index (a warp's words in distinct banks).
  std::uint32_t* const kept =
      reinterpret_cast<std::uint32_t*>(slots + kStages * kStageBytes + sizeof(Barriers)) + (int(threadIdx.x) - 128);
  auto kept_word = [&](int i) -> std::uint32_t& { return kept[i * 128 * kConsumers]; };
  for (int s = 0; s < kPhases * steps; ++s) {
    const int slot = s % kStages;
    ptx::mbarrier_wait_parity(&bar.full[slot], unsigned(s / kStages) & 1);
    const unsigned char* sx = slots + slot * kStageBytes + consumer * 64 * kTileK;
    const unsigned char* sy = slots + slot * kStageBytes + kTileBytesX;
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kTileK / 32; ++kk)
      ptx::wgmma_m64n256k32_s8(acc, tile_descriptor(sx + 32 * kk), tile_descriptor(sy + 32 * kk));
    ptx::wgmma_commit_group();
    ptx::wgmma_wait_group<1>();  // the previous step's group is done: its slot can be refilled
    if (s > 0 && threadIdx.x % 128 == 0) ptx::mbarrier_arrive(&bar.empty[(s - 1) % kStages]);
    if constexpr (kKaratsuba) {
      if ((s + 1) % steps == 0 && s + 1 < kPhases * steps) {  // K3 (kept, accumulator reset), then K1
        ptx::wgmma_wait_group<0>();
        const bool first = s + 1 == steps;
#pragma unroll
        for (int i = 0; i < 32; ++i) {
          const std::uint32_t r =
              ozaki::packed_product_residues(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3], residue);
          kept_word(i) = first ? r : sub_residues(r, kept_word(i), std::uint32_t(residue.p));  // Re = K1 − K3
          if (first)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[4 * i + e] = 0;
        }
      }
    }
  }
  ptx::wgmma_wait_group<0>();

  // Register 4i + e: row 16·warp + lane / 4 (+ 8 for e >= 2) of the consumer's 64, column 8i + 2 (lane
  // % 4) + (e & 1).
  const int lane = int(threadIdx.x) & 31, warp = (int(threadIdx.x) / 32) & 3;
  const int tile_row = warp * 16 + (lane >> 2), tile_col = 2 * (lane & 3);
  const std::int64_t row0 = std::int64_t(tile_m) * kTileM + consumer * 64;  // the consumer's first row
  const std::int64_t col0 = std::int64_t(tile_n) * kTileN;
  if (!out.plane) {
#pragma unroll
    for (int i = 0; i < 32; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const std::int64_t row = row0 + tile_row + (e >> 1) * 8, col = col0 + tile_col + i * 8 + (e & 1);
        if (row < rows && col < cols) out.c[row + col * out.ldc] = acc[4 * i + e];
      }
    return;
  }
  ptx::named_barrier_sync(1, 128 * kConsumers);  // both consumers' wgmma are done with the slots
  // The tile's residues, byte(i, e) that of acc[4i + e], staged column by column, then stored into
  // `plane` (16-byte stores). Karatsuba: Im from the accumulator, then Re from the kept words.
  unsigned char* const staged = slots + consumer * kTileN * kOutStride;
  auto staged_at = [&](int i, int e) -> unsigned char& {
    return staged[(tile_col + i * 8 + (e & 1)) * kOutStride + tile_row + (e >> 1) * 8];
  };
  auto store_staged = [&](std::uint8_t* plane) {
    ptx::named_barrier_sync(2 + consumer, 128);
    const int t = int(threadIdx.x) % 128;
    plane += modulus * out.plane_stride;
#pragma unroll
    for (int u = 0; u < kTileN * 4 / 128; ++u) {  // 16 rows (one uint4) of one column each
      const int column = (t + 128 * u) / 4, piece = (t + 128 * u) % 4;
      const std::int64_t row = row0 + piece * 16, col = col0 + column;
      if (row >= rows || col >= cols) continue;  // rows is a multiple of 16
      uint4 v = *reinterpret_cast<const uint4*>(staged + column * kOutStride + piece * 16);
      auto* dst = reinterpret_cast<uint4*>(plane + row + col * out.ldc);
      if (out.accumulate) v = add_residues(v, *dst, std::uint32_t(residue.p));
      *dst = v;
    }
  };
#pragma unroll
  for (int i = 0; i < 32; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) staged_at(i, e) = static_cast<unsigned char>(ozaki::product_residue(acc[4 * i + e], residue));
  store_staged(kKaratsuba ? out.plane_im : out.plane);
  if constexpr (kKaratsuba) {
    ptx::named_barrier_sync(2 + consumer, 128);  // Im is stored before Re overwrites the staging
#pragma unroll 1
    for (int i = 0; i < 32; ++i) {
      const std::uint32_t word = kept_word(i);
#pragma unroll
      for (int e = 0; e < 4; ++e) staged_at(i, e) = static_cast<unsigned char>(word >> (8 * e));
    }
    store_staged(out.plane);
  }
#else
  __trap();  // launched only where available() holds
#endif
}

// The driver's cuTensorMapEncodeTiled, through the runtime (no link against libcuda).
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static std::once_flag once;
  static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  std::call_once(once, [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) ==
            cudaSuccess &&
        found == cudaDriverEntryPointSuccess)
      encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  });
  if (!encode) raise<UnsupportedError>("gemm: the CUDA driver has no cuTensorMapEncodeTiled (needed by the wgmma engine)");
  return encode;
}

// The tensor map of `count` sets (`set_stride` bytes apart) of `lines` lines of `kc` INT8 positions,
// `ld` bytes apart, read in boxes of kTileK positions × box_lines lines × one set in the 128-byte
// swizzle; with `groups` > 0, that many such maps `group_stride` bytes apart as a fourth dimension.
inline CUtensorMap lines_map(const std::int8_t* base, std::int64_t kc, std::int64_t lines, std::int64_t ld,
                             int count, std::int64_t set_stride, int box_lines, int groups = 0,
                             std::int64_t group_stride = 0) {
  CUtensorMap map;
  const cuuint32_t rank = groups ? 4 : 3;
  const cuuint64_t dims[4] = {cuuint64_t(kc), cuuint64_t(lines), cuuint64_t(count), cuuint64_t(groups)};
  const cuuint64_t strides[3] = {cuuint64_t(ld), cuuint64_t(set_stride), cuuint64_t(group_stride)};
  const cuuint32_t box[4] = {kTileK, cuuint32_t(box_lines), 1, 1}, element_strides[4] = {1, 1, 1, 1};
  const CUresult r = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, rank, const_cast<std::int8_t*>(base), dims,
                                          strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                          CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) raise<Error>("gemm: cuTensorMapEncodeTiled failed (CUresult ", int(r), ")");
  return map;
}

// x_stride, y_stride: bytes from one modulus's X (Y) lines to the next's; Karatsuba: x_sets,
// y_sets the bytes from one of the three residue sets to the next.
inline void launch(const std::int8_t* x, const std::int8_t* y, const ProductOutput& out, std::int64_t rows,
                   std::int64_t cols, std::int64_t kc, std::int64_t ld, int count, std::int64_t x_stride,
                   std::int64_t y_stride, int device, cudaStream_t stream, std::int64_t x_sets = 0,
                   std::int64_t y_sets = 0) {
  if (rows == 0 || cols == 0 || count == 0) return;
  const bool karatsuba = out.plane_im != nullptr;
  const void* kernel = karatsuba ? reinterpret_cast<const void*>(int8_products_wgmma_kernel<true>)
                                 : reinterpret_cast<const void*>(int8_products_wgmma_kernel<false>);
  const int smem = karatsuba ? kSmemBytesKaratsuba : kSmemBytes;
  allow_smem(kernel, smem, device);
  const int groups = karatsuba ? ozaki::kKaratsubaSets : 0;
  const CUtensorMap x_map = lines_map(x, kc, rows, ld, count, x_stride, kTileM, groups, x_sets),
                    y_map = lines_map(y, kc, cols, ld, count, y_stride, kTileN, groups, y_sets);
  const std::int64_t tiles = ((rows + kTileM - 1) / kTileM) * ((cols + kTileN - 1) / kTileN) * count;
  if (tiles > 0x7fffffff) raise<ValueError>("gemm: ", tiles, " product tiles are too many for one launch");
  if (karatsuba)
    int8_products_wgmma_kernel<true><<<unsigned(tiles), kThreads, smem, stream>>>(x_map, y_map, out, rows, cols, kc);
  else
    int8_products_wgmma_kernel<false><<<unsigned(tiles), kThreads, smem, stream>>>(x_map, y_map, out, rows, cols, kc);
  IK_CUDA_CHECK_LAUNCH("int8_products_wgmma_kernel");
}

/// As gemm_mma::int8_products, on wgmma: ld a multiple of 16, x and y 16-byte aligned, kc < 2^31,
/// `device` one where available() holds.
inline void int8_products(const std::int8_t* x, const std::int8_t* y, std::int32_t* c, std::int64_t rows,
                          std::int64_t cols, std::int64_t kc, std::int64_t ld, std::int64_t ldc, int device,
                          cudaStream_t stream) {
  ProductOutput out;
  out.c = c, out.ldc = ldc;
  launch(x, y, out, rows, cols, kc, ld, 1, rows * ld, cols * ld, device, stream);
}

/// The same products for `count` moduli in one launch, each reduced modulo its own: modulus t's
/// lines at x + t·x_stride and y + t·y_stride, its residues (bytes, column-major, leading dimension
/// ldc, rows a multiple of 16, planes and ldc too) written into plane + t·plane_stride, or added to
/// them mod p where `accumulate` (the products of a later K chunk), for the moduli t < *live where
/// `live` is given. Strides multiples of 16.
inline void int8_product_residues(const std::int8_t* x, std::int64_t x_stride, const std::int8_t* y,
                                  std::int64_t y_stride, std::uint8_t* plane, std::int64_t plane_stride,
                                  std::int64_t rows, std::int64_t cols, std::int64_t kc, std::int64_t ld,
                                  std::int64_t ldc, const ozaki::ResidueConstants* moduli, int count, const int* live,
                                  bool accumulate, int device, cudaStream_t stream) {
  if (count > kGemmMaxModuli) raise<ValueError>("gemm: ", count, " moduli in one launch; at most ", kGemmMaxModuli);
  ProductOutput out;
  out.plane = plane, out.ldc = ldc, out.plane_stride = plane_stride, out.live = live, out.accumulate = accumulate;
  for (int t = 0; t < count; ++t) out.moduli[t] = moduli[t];
  launch(x, y, out, rows, cols, kc, ld, count, x_stride, y_stride, device, stream);
}

/// Karatsuba's three products for `count` moduli in one launch (kc <= ozaki::kKaratsubaChunkK): X's sets
/// (Re A, Im A, Re A + Im A) at x, x + x_sets, x + 2·x_sets and Y's (Re B, Re B + Im B, Im B − Re B)
/// at y, y + y_sets, y + 2·y_sets, each laid out as int8_product_residues' x and y; the residues of
/// Re(A·B) into re + t·plane_stride and of Im(A·B) into im + t·plane_stride, added to them mod p
/// where `accumulate`.
inline void int8_product_residues_karatsuba(const std::int8_t* x, std::int64_t x_stride, std::int64_t x_sets,
                                            const std::int8_t* y, std::int64_t y_stride, std::int64_t y_sets,
                                            std::uint8_t* re, std::uint8_t* im, std::int64_t plane_stride,
                                            std::int64_t rows, std::int64_t cols, std::int64_t kc, std::int64_t ld,
                                            std::int64_t ldc, const ozaki::ResidueConstants* moduli, int count,
                                            bool accumulate, int device, cudaStream_t stream) {
  if (count > kGemmMaxModuli) raise<ValueError>("gemm: ", count, " moduli in one launch; at most ", kGemmMaxModuli);
  if (kc > ozaki::kKaratsubaChunkK)
    raise<ValueError>("gemm: Karatsuba products of ", kc, " positions; at most ", ozaki::kKaratsubaChunkK);
  ProductOutput out;
  out.plane = re, out.plane_im = im, out.ldc = ldc, out.plane_stride = plane_stride, out.accumulate = accumulate;
  for (int t = 0; t < count; ++t) out.moduli[t] = moduli[t];
  launch(x, y, out, rows, cols, kc, ld, count, x_stride, y_stride, device, stream, x_sets, y_sets);
}

}  // namespace ironkernels::detail::gemm_wgmma
