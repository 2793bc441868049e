#pragma once
// The scaled, rounded lines as INT8 residues of each modulus, K contiguous and zero padded; in the
// same tiles, accurate scaling's grouped magnitude bounds and the certificate's lower-bound magnitudes.
#include <cstdint>

#include "core/cuda_check.hpp"
#include "gemm/certificate.hpp"
#include "gemm/gemm_lines.cuh"
#include "gemm/gemm_plan_impl.hpp"
#include "gemm/ozaki.hpp"

namespace ironkernels::detail {
namespace {
namespace oz = ozaki;

// Tiles of 32 lines × 128 positions through shared memory: read along the matrix's contiguous
// dimension, written K-contiguous as 4 residues per 32-bit store (a warp stores 128 contiguous bytes).
// Lines in [rows, padded_rows) and positions in [cols, kp) are zeros (kp is a multiple of 16).
// bound_max / bound_mean: instead of the residues, the grouped magnitude bounds of "accurate" scaling
// (one INT8 matrix, kp / kBoundGroup groups at the start of each line of kp: Â for op(A), B̂ for op(B),
// ozaki.hpp). lower: the certificate's lower-bound magnitudes (one INT8 matrix of lines of kp,
// certify::lower_magnitude with `lower_bits`), and each line's units T added to info.units.
// karatsuba_x / karatsuba_y: lines whose positions are pairs (e, o), as three residue sets of lines
// of kp / 2 (each COUNT planes of padded_rows lines): ozaki_karatsuba.hpp's sets of op(A)'s rows
// (Re A, Im A) and of Y_re's columns (Re B, −Im B), the operands of the wgmma engine's Karatsuba
// products (gemm_int8_wgmma.cuh).
enum class ResidueOutput { residues, bound_max, bound_mean, lower, karatsuba_x, karatsuba_y };
constexpr int kTileLines = 32, kTilePositions = 128;
// Position b of a tile row sits at column (b mod 4)·32 + b/4: the four positions a thread packs,
// 4x … 4x + 3 for lane x, are read by the warp from 32 consecutive columns (no bank conflicts).
__device__ __forceinline__ int tile_column(int b) { return (b & 3) * 32 + (b >> 2); }
// COUNT: the number of moduli as a compile-time constant (the loop over them unrolls and p, 2^32 mod p
// and 1/p become immediate operands).
template <ResidueOutput kOut, int COUNT>
__global__ void __launch_bounds__(256) residues_kernel(Lines x, LineInfo info, std::int64_t padded_rows,
                                                       std::int64_t kp, ResidueArgs mods, int lower_bits,
                                                       std::int8_t* out) {
  __shared__ double tile[kTileLines][kTilePositions + 1];
  const std::int64_t r0 = std::int64_t(blockIdx.x) * kTileLines, l0 = std::int64_t(blockIdx.y) * kTilePositions;
  const int tid = threadIdx.y * 32 + threadIdx.x;
  // 16 elements a thread, a warp along the matrix's contiguous dimension: with contiguous positions
  // one position b of lines a0, a0 + 2, …; otherwise one line a of positions b0, b0 + 8, ….
  constexpr int kLoads = kTileLines * kTilePositions / 256;
  if (x.cs == 1) {
    const int a0 = tid / kTilePositions, b = tid % kTilePositions;
    const bool real_position = l0 + b < x.cols;
    const double* from = x.data + (r0 + a0) * x.rs + (l0 + b);
#pragma unroll 4
    for (int e = 0; e < kLoads; ++e, from += 2 * x.rs)
      tile[a0 + 2 * e][tile_column(b)] = real_position && r0 + a0 + 2 * e < x.rows ? *from : 0.0;
  } else {
    const int a = tid % kTileLines, b0 = tid / kTileLines;
    const bool real_line = r0 + a < x.rows;
    const double* from = x.data + (r0 + a) * x.rs + (l0 + b0) * x.cs;
#pragma unroll 4
    for (int e = 0; e < kLoads; ++e, from += 8 * x.cs)
      tile[a][tile_column(b0 + 8 * e)] = real_line && l0 + b0 + 8 * e < x.cols ? *from : 0.0;
  }
  __syncthreads();
  const int b = 4 * threadIdx.x;
  const std::int64_t l = l0 + b;
  if (l >= kp && kOut != ResidueOutput::lower) return;  // lower: the whole warp sums its line's units
  for (int a = threadIdx.y; a < kTileLines; a += 8) {
    const std::int64_t r = r0 + a;
    if (r >= padded_rows) break;
    const bool real_line = r < x.rows;
    if constexpr (kOut == ResidueOutput::lower) {
      const int e = real_line ? info.exponent[r] : 0, offset = real_line ? info.offset[r] : 0;
      std::uint32_t packed = 0;
      unsigned long long units = 0;
      for (int u = 0; u < 4; ++u) {
        const double v = real_line && l + u < x.cols ? tile[a][u * 32 + threadIdx.x] : 0.0;
        packed |= std::uint32_t(certify::lower_magnitude(v, e, offset, lower_bits)) << (8 * u);
        units += certify::magnitude_units(v, e);
      }
      if (l < kp) *reinterpret_cast<std::uint32_t*>(out + r * kp + l) = packed;
      for (int o = 16; o > 0; o >>= 1) units += __shfl_xor_sync(0xffffffffu, units, o);
      if (threadIdx.x == 0 && units) atomicAdd(&info.units[r], units);  // integers: any order
    } else if constexpr (kOut == ResidueOutput::bound_max || kOut == ResidueOutput::bound_mean) {
      static_assert(oz::kBoundGroup == 4, "a thread's four positions are one group");
      std::uint32_t v[oz::kBoundGroup];
      for (int e = 0; e < 4; ++e) {
        const bool real = real_line && l + e < x.cols;
        v[e] = real ? std::uint32_t(oz::magnitude_bound(tile[a][e * 32 + threadIdx.x], info.exponent[r])) : 0u;
      }
      out[r * kp + l / oz::kBoundGroup] = static_cast<std::int8_t>(
          kOut == ResidueOutput::bound_max ? oz::bound_group_max(v) : oz::bound_group_mean(v));
    } else {
      oz::SplitInteger q[4];
      const int shift = real_line ? info.shift[r] : 0;
      for (int e = 0; e < 4; ++e)
        q[e] = oz::split_integer(real_line && l + e < x.cols ? oz::scaled_integer(tile[a][e * 32 + threadIdx.x], shift)
                                                             : 0.0);
      if constexpr (kOut == ResidueOutput::karatsuba_x || kOut == ResidueOutput::karatsuba_y) {
        // Positions l … l + 3 are pairs l/2 and l/2 + 1: (e, o) = (q[0], q[1]) and (q[2], q[3]).
        constexpr bool kX = kOut == ResidueOutput::karatsuba_x;
        const std::int64_t half = kp / 2, plane = padded_rows * half, set = COUNT * plane;
        std::uint8_t* to = reinterpret_cast<std::uint8_t*>(out) + r * half + l / 2;
#pragma unroll
        for (int t = 0; t < COUNT; ++t, to += plane) {
          const int p = mods.c[t].p;
          int sets[oz::kKaratsubaSets][2];
          for (int u = 0; u < 2; ++u) {
            const int e = oz::residue(q[2 * u], mods.c[t]), o = oz::residue(q[2 * u + 1], mods.c[t]);
            for (int v = 0; v < oz::kKaratsubaSets; ++v)
              sets[v][u] = kX ? oz::karatsuba_a_set(v, e, o, p) : oz::karatsuba_b_set(v, e, o, p);
          }
          for (int v = 0; v < oz::kKaratsubaSets; ++v)
            *reinterpret_cast<std::uint16_t*>(to + v * set) = std::uint16_t((sets[v][0] & 0xff) | (sets[v][1] & 0xff) << 8);
        }
        continue;
      }
      const std::int64_t plane_words = padded_rows * kp / 4;  // kp is a multiple of 16
      auto* to = reinterpret_cast<std::uint32_t*>(out + r * kp + l);
#pragma unroll
      for (int t = 0; t < COUNT; ++t, to += plane_words) {
        // The low bytes of the four residues, packed by byte permutes.
        const std::uint32_t lo =
            __byte_perm(oz::residue_bits(q[0], mods.c[t]), oz::residue_bits(q[1], mods.c[t]), 0x0040);
        const std::uint32_t hi =
            __byte_perm(oz::residue_bits(q[2], mods.c[t]), oz::residue_bits(q[3], mods.c[t]), 0x0040);
        *to = __byte_perm(lo, hi, 0x5410);
      }
    }
  }
}

template <ResidueOutput kOut>
void residues(const Lines& x, const LineInfo& info, std::int64_t padded_rows, std::int64_t kp, const ResidueArgs& mods,
              std::int8_t* out, cudaStream_t s, int lower_bits = 0) {
  if (padded_rows == 0 || kp == 0) return;
  const dim3 grid(unsigned((padded_rows + kTileLines - 1) / kTileLines),
                  unsigned((kp + kTilePositions - 1) / kTilePositions));
  if constexpr (kOut != ResidueOutput::residues && kOut != ResidueOutput::karatsuba_x &&
                kOut != ResidueOutput::karatsuba_y) {
    residues_kernel<kOut, 0><<<grid, dim3(32, 8), 0, s>>>(x, info, padded_rows, kp, mods, lower_bits, out);
  } else {
    oz::with_moduli_count(mods.count, [&](auto count) {
      residues_kernel<kOut, decltype(count)::value><<<grid, dim3(32, 8), 0, s>>>(x, info, padded_rows, kp, mods, 0,
                                                                               out);
    });
  }
  IK_CUDA_CHECK_LAUNCH("residues_kernel");
}

}  // namespace
}  // namespace ironkernels::detail
