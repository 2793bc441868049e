#pragma once
// Host side of fwt_order_pass.cu and fwt_factor_passes.cu: the output orders as a gather of the
// input before the transform, and N = m·2^k as one pass (a tile of whole lines), as H_m ⊗ H_{2^A}
// across the blocks of a long line (the factor columns), or as H_m across the m blocks of each line.
#include <cuda_runtime.h>

#include <cstdint>

#include "fwt/fwt_values.cuh"

namespace ironkernels::detail::fwt_gpu {

/// The lines of a plan (make_args: x the source, y the destination, log_n their log2 length — for
/// the factor pass k, the 2^k columns of each line) and what the pass does with them.
struct LinePassArgs {
  KernelArgs lines;
  bool sequency;  // order: sequency, else dyadic (y[j] = x[σ⁻¹(j)])
  int factor;     // factor: m = 12, 20, 28
  int device;     // the lines' device
  int outer_bits = 0;  // factor columns: A, the block bits of H_{2^A} folded in with H_m
};

void launch_order_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream);
void launch_factor_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream);
/// The factor pass with a caller's H_m (m × m ±1, device memory) in place of the built-in ones.
void launch_user_factor_pass(DType dtype, const LinePassArgs& a, const std::int8_t* h, int m, cudaStream_t stream);
/// H_m ⊗ H_{2^k} in one pass on unit strides, k = lines.log_n at most factor_tile_max_bits(dtype).
void launch_factor_tile_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream);
int factor_tile_max_bits(DType dtype);
/// (H_m ⊗ H_{2^A} ⊗ I) across the m·2^A blocks of 2^(lines.log_n) (unit strides; x into y, or in
/// place), A = a.outer_bits in 1..5: the outer pass of a long m·2^k with H_m in it; with factor 1,
/// H_{2^A} for A = a.outer_bits in 6..12 (8-byte values 6..11), the outer pass of long rows or a
/// strided axis. factor_columns_take says whether these lines fit it (4- and 8-byte values,
/// 16-byte aligned lines, blocks of at least `column_bytes`).
void launch_factor_columns_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream);
bool factor_columns_take(DType dtype, const KernelArgs& lines, int column_bytes);
/// The column width (bytes) of the factor-1 column pass of 2^outer_bits lines: 128, 64 at 2^11, 32 at 2^12.
int column_pass_bytes(int outer_bits);
/// H_{2^A} for A = a.outer_bits in 11..13 across lines 2^(lines.log_n) elements apart (a strided
/// axis; x into y, or in place) on clusters of CTAs (cluster_launch_supported): the column pass for
/// tiles larger than one CTA's. factor_columns_take(dtype, lines, cluster_column_bytes(...)) says
/// whether the lines fit it.
void launch_cluster_columns_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream);
/// Its column width (bytes) for blocks of `block_bytes` and 2^outer_bits lines: whole 128-byte
/// lines up to 2^12 lines (bench/DECISIONS.md: 2^13 lines on clusters of 16 were slower than
/// 64-byte columns on 8), else 64, or 32 where that is the whole block.
constexpr int cluster_column_bytes(std::int64_t block_bytes, int outer_bits) {
  return block_bytes >= 128 && outer_bits <= 12 ? 128 : block_bytes >= 64 ? 64 : 32;
}

}  // namespace ironkernels::detail::fwt_gpu
