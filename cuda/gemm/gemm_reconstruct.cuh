#pragma once
// From the INT8 products to C: their reduction mod p into residue planes, and the Chinese remainder
// reconstruction, rounded once, with alpha and beta (Inf/NaN lines natively, as the CPU).
#include <cstdint>

#include "gemm/gemm_lines.cuh"
#include "gemm/gemm_plan_impl.hpp"
#include "gemm/ozaki.hpp"

namespace ironkernels::detail {
namespace {
namespace oz = ozaki;

struct OutputArgs {
  double* data;
  std::int64_t rs, cs;
  double alpha, beta;
};


// Four consecutive INT32 products mod p, packed one byte each.
__device__ __forceinline__ std::uint32_t packed_residues(const int4& x, const oz::ResidueConstants& c) {
  return oz::packed_product_residues(x.x, x.y, x.z, x.w, c);
}

// INT32 products of one group of moduli, reduced mod p and added to the per-modulus residues of C.
// Four elements per thread (16-byte loads, 4-byte stores); per_modulus is a multiple of 256.
__global__ void reduce_kernel(const std::int32_t* prod, std::int64_t per_modulus, int group, ResidueArgs mods,
                              int first_modulus, bool first_chunk, std::uint8_t* residues) {
  const std::int64_t i = 4 * (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x);
  if (i >= per_modulus) return;
  for (int u = 0; u < group; ++u) {
    const int t = first_modulus + u, p = mods.c[t].p;
    const int4 x = *reinterpret_cast<const int4*>(prod + u * per_modulus + i);
    auto* out = reinterpret_cast<std::uint32_t*>(residues + t * per_modulus + i);
    const std::uint32_t before = first_chunk ? 0u : *out;
    std::uint32_t packed = 0;
    const int xs[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      std::uint32_t r = oz::product_residue(xs[e], mods.c[t]) + ((before >> (8 * e)) & 0xff);
      if (r >= std::uint32_t(p)) r -= p;
      packed |= r << (8 * e);
    }
    *out = packed;
  }
}

// A block reconstructs tiles of 32 × 32 elements of C (columns j0 … n), in turn (a grid the size of
// the resident blocks), each in two phases. First each thread takes four consecutive rows of one column: one 32-bit load per
// modulus brings their residues (rows are contiguous in the residues and mp is a multiple of 16) or,
// with kFromProducts, one 16-byte load per modulus their INT32 products, reduced here; the products
// are parked in shared memory. Then the alpha/beta update and the store run along whichever of i and
// j is contiguous in C, so a row-major C is written in whole 256-byte runs instead of one 8-byte store
// per sector.
constexpr int kReconstructTile = 32, kReconstructRows = 4, kReconstructThreads = 256;
// The source holds column j of C at plane offset (j - src_j0)·mp, modulus t at t·plane.
struct ReconstructSource {
  const void* data;
  std::int64_t plane, src_j0;
};
// Four blocks per SM: 64 registers (the four elements' sums need more; 80 and 138 ran slower).
template <int COUNT, bool kFromProducts, int L = oz::crt_limbs(COUNT)>
__global__ void __launch_bounds__(kReconstructThreads, 4)
    reconstruct_kernel(const oz::CrtTable<L> crt, const ReconstructSource src, const ResidueArgs mods, std::int64_t m,
                       std::int64_t n, std::int64_t mp, LineInfo rows, LineInfo cols, Lines a, Lines bt, OutputArgs c,
                       std::int64_t j0) {
  constexpr int kT = kReconstructTile, kGroups = kT / kReconstructRows;
  __shared__ double tile[kT][kT + 1];  // [j][i], padded
  __shared__ bool remedied[kT][kT + 1];  // [j][i]: the certificate's native lines, written by their remedy
  const std::int64_t tiles_m = (m + kT - 1) / kT, tiles = tiles_m * ((n - j0 + kT - 1) / kT);
  for (std::int64_t t_index = blockIdx.x; t_index < tiles; t_index += gridDim.x) {
    const std::int64_t it = t_index % tiles_m * kT, jt = j0 + t_index / tiles_m * kT;
    // Elements in lines the certificate sent to native float64 are their remedy's, unless the other
    // line holds Inf/NaN (those are the reconstruction's, as on the CPU). Flagged here, in shared
    // memory, with the store's mapping: read where the stores are, they cost ~200 bytes of spills.
    if (rows.native) {
#pragma unroll
      for (int u = 0; u < kT * kT / kReconstructThreads; ++u) {
        const int e = int(threadIdx.x) + u * kReconstructThreads, di = e % kT, dj = e / kT;
        const std::int64_t i = it + di, j = jt + dj;
        remedied[dj][di] = i < m && j < n && (rows.native[i] || cols.native[j]) && !(rows.nonfinite[i] || cols.nonfinite[j]);
      }
    }
    {
      const int di0 = kReconstructRows * (int(threadIdx.x) % kGroups), dj = int(threadIdx.x) / kGroups;
      const std::int64_t i0 = it + di0, j = jt + dj;
      if (i0 < m && j < n) {
        std::uint32_t packed[COUNT];
        const std::int64_t at = (j - src.src_j0) * mp + i0;
#pragma unroll
        for (int t = 0; t < COUNT; ++t) {
          if constexpr (kFromProducts)
            packed[t] = packed_residues(*reinterpret_cast<const int4*>(static_cast<const std::int32_t*>(src.data) +
                                                                       t * src.plane + at),
                                        mods.c[t]);
          else
            packed[t] = *reinterpret_cast<const std::uint32_t*>(static_cast<const std::uint8_t*>(src.data) +
                                                                 t * src.plane + at);
        }
        const bool column_nonfinite = cols.nonfinite[j];
        const int column_shift = cols.shift[j];
        auto residue = [&](int t, int e) { return __byte_perm(packed[t], 0u, 0x4440u + e); };
        // Up to 16 moduli, the mixed digits' sums of the four elements together (each modulus's
        // constants read once for all four); the elements they leave (NaN), those of non-finite lines
        // and those of more moduli go the one-at-a-time way after.
        int slow = (1 << kReconstructRows) - 1;
        if constexpr (COUNT <= 16) {
          double H[kReconstructRows], B[kReconstructRows];
          std::uint64_t S_lo[kReconstructRows];
          oz::crt_mixed_sums<COUNT>(crt.mixed, COUNT, residue, H, B, S_lo);
          slow = 0;
#pragma unroll
          for (int e = 0; e < kReconstructRows; ++e) {
            const int shift = i0 + e < m ? rows.shift[i0 + e] + column_shift : 0;
            const double product = oz::crt_mixed_finish(crt.mixed, H[e], B[e], S_lo[e], shift);
            tile[dj][di0 + e] = product;
            if (product != product) slow |= 1 << e;
          }
        }
#pragma unroll 1
        for (int e = 0; e < kReconstructRows && i0 + e < m; ++e) {
          const std::int64_t i = i0 + e;
          if (column_nonfinite || rows.nonfinite[i]) {  // native arithmetic, in the reference's order
            double sum = 0.0;
            for (std::int64_t l = 0; l < a.cols; ++l) sum = fma(a(i, l), bt(j, l), sum);
            tile[dj][di0 + e] = sum;
          } else if (slow >> e & 1) {
            tile[dj][di0 + e] = oz::crt_limbs_to_double<L, COUNT>(
                crt, [&](int t) { return residue(t, e); }, rows.shift[i] + column_shift);
          }
        }
      }
    }
    __syncthreads();
    const bool along_j = c.cs == 1 && c.rs != 1;  // C's contiguous direction
    const int lane = int(threadIdx.x) % kT, group = int(threadIdx.x) / kT;
#pragma unroll
    for (int u = 0; u < kT * kT / kReconstructThreads; ++u) {
      const int across = group + u * (kReconstructThreads / kT);
      const int di = along_j ? across : lane, dj = along_j ? lane : across;
      const std::int64_t i = it + di, j = jt + dj;
      if (i >= m || j >= n) continue;
      if (rows.native && remedied[dj][di]) continue;
      double& out = c.data[i * c.rs + j * c.cs];
      out = oz::finish(c.alpha, tile[dj][di], c.beta, out);
    }
    __syncthreads();  // the tile is read before the next one is written
  }
}

}  // namespace
}  // namespace ironkernels::detail
