#pragma once
// Each line's bits and shift at the call's count: fast's fitted bits, norm scaling's from the 2-norm,
// accurate scaling's from its bound product; the report's fewest bits and Inf/NaN lines.
#include <climits>
#include <cstdint>

#include "gemm/gemm_lines.cuh"
#include "gemm/ozaki.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels::detail {
namespace {
namespace oz = ozaki;

// Each line's exponent bound and fast bits (oz::fitted_bits) from its largest magnitude, once the
// count is known (side 0: op(A), 1: op(B)); under norm scaling also the bits its 2-norm allows
// (oz::norm_line_bits, k1 = max(k, 1)).
__global__ void line_bits_kernel(LineInfo info, std::int64_t lines, oz::Budget b, int side, bool norm,
                                 std::int64_t k1) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= lines) return;
  const double largest = __longlong_as_double(static_cast<long long>(info.largest[i]));
  const double cap = side == 0 ? b.cap_a : b.cap_b;
  const int fast = oz::fitted_bits(largest, cap, side == 0 ? b.bits_a : b.bits_b);
  info.exponent[i] = largest == 0.0 ? oz::kNoExponent : oz::exponent_bound(largest);
  info.fast[i] = fast;
  if (norm) info.bits[i] = oz::norm_line_bits(info.norm_sum[i], info.nonzeros[i], cap, k1, fast);
}

// G_ij = accurate_pair_budget(b, C̄_ij) is accurate_pair_budget(b, 1) - ceil_log2(C̄_ij), or that
// constant where the budget is flat (mask 0): a line's least G_ij - x_j comes from its largest
// ceil_log2(C̄_ij)·[not flat] + x_j, one clz per element (C̄_ij in [0, 2^31)).
__device__ __forceinline__ int bound_log2(std::int32_t c, int mask) { return (32 - __clz(max(c - 1, 0))) & mask; }

// Column j keeps fast_j + (slack / 2) bits where that is more, slack = min_i (G_ij - fast_i - fast_j)
// (oz::raised_line_bits, as the reference). 16-byte loads of C̄'s column and of the rows' fast bits.
__global__ void column_bits_kernel(const std::int32_t* bound, std::int64_t m, std::int64_t mp, oz::Budget b,
                                   const int* row_fast, const int* col_fast, int* col_bits) {
  const std::int64_t j = blockIdx.x;
  const int mask = oz::flat_pair_budget(b) ? 0 : -1;
  const std::int32_t* column = bound + j * mp;  // mp is a multiple of 16
  int worst = INT_MIN;
  const std::int64_t m4 = m / 4 * 4;
#pragma unroll 2
  for (std::int64_t i = 4 * std::int64_t(threadIdx.x); i < m4; i += 4 * std::int64_t(blockDim.x)) {
    const int4 c = *reinterpret_cast<const int4*>(column + i);
    const int4 f = *reinterpret_cast<const int4*>(row_fast + i);
    worst = max(worst, max(max(bound_log2(c.x, mask) + f.x, bound_log2(c.y, mask) + f.y),
                           max(bound_log2(c.z, mask) + f.z, bound_log2(c.w, mask) + f.w)));
  }
  for (std::int64_t i = m4 + threadIdx.x; i < m; i += blockDim.x)
    worst = max(worst, bound_log2(column[i], mask) + row_fast[i]);
  __shared__ int part[32];
  worst = __reduce_max_sync(0xffffffffu, worst);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = worst;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < int(blockDim.x >> 5); ++w) worst = max(worst, part[w]);
    const int fast = col_fast[j], room = oz::accurate_pair_budget(b, 1) - worst;
    col_bits[j] = oz::raised_line_bits(fast, fast + (room - fast) / 2);
  }
}

// What row i may keep, min_j (G_ij - col_bits[j]), at most kMaxBits (row_bits starts at kMaxBits;
// finalize_lines_kernel raises the row's fast bits to it: oz::raised_line_bits).
// grid.x: rows (contiguous in C̄), grid.y: chunks of kRowBitsChunk columns (in turn past 65535).
constexpr int kRowBitsChunk = 64;
__global__ void row_bits_kernel(const std::int32_t* bound, std::int64_t m, std::int64_t n, std::int64_t mp,
                                oz::Budget b, const int* col_bits, int* row_bits) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int mask = oz::flat_pair_budget(b) ? 0 : -1;
  if (i >= m) return;
  int worst = INT_MIN;
  for (std::int64_t j0 = std::int64_t(blockIdx.y) * kRowBitsChunk; j0 < n; j0 += std::int64_t(gridDim.y) * kRowBitsChunk) {
    const std::int64_t j1 = min(n, j0 + kRowBitsChunk);
#pragma unroll 8
    for (std::int64_t j = j0; j < j1; ++j) worst = max(worst, bound_log2(bound[j * mp + i], mask) + col_bits[j]);
  }
  atomicMin(&row_bits[i], oz::accurate_pair_budget(b, 1) - worst);
}

// Each line's shift; the fewest bits and the non-finite lines for the report. Under fast scaling
// every line keeps its fast bits, under norm scaling line_bits_kernel's.
__global__ void finalize_lines_kernel(LineInfo info, std::int64_t lines, GemmScaling scaling, int* fewest_bits,
                                      int* nonfinite_lines) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= lines) return;
  const int bits = scaling == GemmScaling::accurate ? oz::raised_line_bits(info.fast[i], info.bits[i])
                   : scaling == GemmScaling::norm   ? info.bits[i]
                                                    : info.fast[i];
  info.shift[i] = oz::line_shift(info.exponent[i], bits);
  atomicMin(fewest_bits, bits);
  if (info.nonfinite[i]) atomicAdd(nonfinite_lines, 1);
}

}  // namespace
}  // namespace ironkernels::detail
