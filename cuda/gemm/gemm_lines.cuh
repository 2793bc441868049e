#pragma once
// The rows of op(A) and columns of op(B) as lines: their views and per-line device arrays, and the
// passes that scan them (largest magnitude, Inf/NaN) or, for certified contracts and norm scaling,
// also sum them (2-norm, nonzeros, lowest set bit).
#include <climits>
#include <cstdint>

#include "core/cuda_check.hpp"
#include "gemm/certificate.hpp"
#include "gemm/gemm_workspace.hpp"
#include "gemm/ozaki.hpp"

namespace ironkernels::detail {
namespace {
namespace oz = ozaki;

struct Lines {  // a strided float64 matrix with op() applied: line r, position l at data[r*rs + l*cs]
  const double* data;
  std::int64_t rows, cols, rs, cs;
  __device__ double operator()(std::int64_t r, std::int64_t l) const { return data[r * rs + l * cs]; }
};

// Device arrays of one side (rows of op(A) or columns of op(B)).
struct LineInfo {
  int* exponent;   // largest exponent bound (oz::kNoExponent for an all-zero line)
  int* nonfinite;  // 1 if the line holds Inf/NaN
  int* bits;       // bits kept (accurate and norm scaling)
  int* shift;      // the line's power-of-two shift
  int* fast;       // bits kept under fast scaling (oz::fitted_bits)
  int* nonzeros;   // nonzero elements (certified contracts and norm scaling)
  unsigned long long* largest;  // largest finite magnitude (bit pattern: positive doubles order as them)
  double* norm_sum;             // the line's canonical Σ (x·2^-exponent)² (certified contracts, norm scaling)
  // Certified contracts (certificate.hpp):
  int* lowest_bit;              // exponent of the lowest set bit over the line's nonzeros
  int* offset;                  // certify::lower_offset
  int* exact_bits;              // certify::LineFacts
  int* theta_bits;
  int* most;                    // the largest count any element of the line needs
  int* native;                  // 1: the certificate sends the line to native float64
  unsigned long long* units;    // T = Σ certify::magnitude_units
  std::uint8_t* count_for;      // certify::count_table, kNeedTable per line
};

// cols_prepared: the columns' scan is a prepared operand's (GemmPrepared): only their per-run marks
// are reset. counters may be null (a preparation).
__global__ void init_lines_kernel(LineInfo rows, std::int64_t m, LineInfo cols, std::int64_t n, int* counters,
                                  bool cols_prepared) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  auto init = [&](const LineInfo& side) {
    side.largest[i] = 0, side.nonfinite[i] = 0, side.nonzeros[i] = 0;
    if (side.most) side.units[i] = 0, side.lowest_bit[i] = INT_MAX;
  };
  auto mark = [&](const LineInfo& side) {
    if (side.most) side.most[i] = 0, side.native[i] = 0;
  };
  if (i < m) init(rows), mark(rows), rows.bits[i] = oz::kMaxBits;
  if (i < n) {
    if (!cols_prepared) init(cols);
    mark(cols);
  }
  if (counters && i < kCounters) counters[i] = i < 2 ? 0 : INT_MAX;
}

// Block (32, 8): threadIdx.x runs along the contiguous dimension of the matrix, so every warp reads
// 32 consecutive elements. grid.x: line tiles, grid.y: chunks of kScanChunk positions.

// fn(v, u) for the `count` values at from, from + stride, …, u the value's index mod 8 (a constant
// once unrolled): the loads of each batch of eight are issued before any is used (one load in flight
// per thread left these scans latency-bound); fn(0.0, u) must do nothing (it pads the last batch).
template <class Fn>
__device__ __forceinline__ void for_each_strided(const double* from, std::int64_t stride, std::int64_t count, Fn&& fn) {
  constexpr int kBatch = 8;
  for (std::int64_t i = 0; i < count; i += kBatch, from += kBatch * stride) {
    double v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) v[u] = i + u < count ? from[u * stride] : 0.0;
#pragma unroll
    for (int u = 0; u < kBatch; ++u) fn(v[u], u);
  }
}

// The line of this thread in a scan block (tile of lines blockIdx.x, chunk of positions blockIdx.y),
// after fn(v) over its values of the chunk (none where the line is past the last).
template <bool kPositionsContiguous, class Fn>
__device__ __forceinline__ std::int64_t scan_chunk(const Lines& x, Fn&& fn) {
  const std::int64_t tile = blockIdx.x, l0 = std::int64_t(blockIdx.y) * kScanChunk;
  const std::int64_t l1 = min(x.cols, l0 + kScanChunk);
  const std::int64_t line = kPositionsContiguous ? tile * 8 + threadIdx.y : tile * 32 + threadIdx.x;
  const int start = kPositionsContiguous ? threadIdx.x : threadIdx.y, step = kPositionsContiguous ? 32 : 8;
  if (line < x.rows)
    for_each_strided(x.data + line * x.rs + (l0 + start) * x.cs, step * x.cs, (l1 - l0 - start + step - 1) / step,
                     fn);
  return line;
}

// The grid of a scan over `chunks` chunks: tiles of 8 lines (contiguous positions) or 32.
dim3 scan_grid(const Lines& x, std::int64_t chunks) {
  return dim3(unsigned(x.cs == 1 ? (x.rows + 7) / 8 : (x.rows + 31) / 32), unsigned(chunks));
}

template <bool kPositionsContiguous>
__global__ void scan_lines_kernel(Lines x, LineInfo info) {
  double largest = 0.0;
  int bad = 0;
  const std::int64_t line = scan_chunk<kPositionsContiguous>(x, [&](double v, int) {
    if (!oz::finite(v)) bad = 1;
    else largest = fmax(largest, fabs(v));
  });
  if constexpr (kPositionsContiguous) {  // the warp holds one line
    for (int o = 16; o > 0; o >>= 1) largest = fmax(largest, __shfl_xor_sync(0xffffffffu, largest, o));
    bad = __reduce_or_sync(0xffffffffu, static_cast<unsigned>(bad));
    if (threadIdx.x != 0) return;
  }
  if (line >= x.rows) return;
  if (largest != 0.0) atomicMax(&info.largest[line], static_cast<unsigned long long>(__double_as_longlong(largest)));
  if (bad) atomicOr(&info.nonfinite[line], 1);
}

void scan_lines(const Lines& x, const LineInfo& info, cudaStream_t s) {
  const dim3 block(32, 8);
  const std::int64_t chunks = (x.cols + kScanChunk - 1) / kScanChunk;
  if (x.rows == 0 || chunks == 0) return;
  if (x.cs == 1) scan_lines_kernel<true><<<scan_grid(x, chunks), block, 0, s>>>(x, info);
  else scan_lines_kernel<false><<<scan_grid(x, chunks), block, 0, s>>>(x, info);
  IK_CUDA_CHECK_LAUNCH("scan_lines_kernel");
}

// ------------------------------------------------------------------ the lines' 2-norms and spreads
// One read of each operand for certified contracts and norm scaling: a block takes the scan's tile of
// lines over one chunk of kScanChunk positions and writes, per line, the chunk's ScaledSum in the
// canonical order (oz::kLineSumChunk: the chunk's 32 lanes are a warp's lanes for contiguous
// positions; for strided ones each of a line's 8 threads holds 4 of them, lanes y, y + 8, y + 16,
// y + 24 for thread y), its largest magnitude, nonzeros, lowest set bit and non-finite mark; a
// per-line kernel adds the chunks in order (SpreadPart: gemm_workspace.hpp).
template <bool kPositionsContiguous>
__global__ void spread_parts_kernel(Lines x, SpreadPart* parts) {  // the scan's grid and blocks
  oz::ScaledSum lane[kPositionsContiguous ? 1 : 4];  // the canonical lanes this thread sums
  double largest = 0.0;
  int count = 0, bad = 0, lowest = INT_MAX;
  const std::int64_t line = scan_chunk<kPositionsContiguous>(x, [&](double v, int u) {
    if (!oz::finite(v)) bad = 1;
    if (!oz::finite(v) || v == 0.0) return;
    lane[kPositionsContiguous ? 0 : u & 3].add_value(v);
    largest = fmax(largest, fabs(v)), ++count;
    lowest = min(lowest, certify::lowest_bit_exponent(v));
  });
  oz::ScaledSum part = lane[0];
  if constexpr (kPositionsContiguous) {  // the warp holds one line: lanes v and v xor o, o = 16 … 1
    for (int o = 16; o > 0; o >>= 1) {
      oz::ScaledSum other;
      other.sum = __shfl_xor_sync(0xffffffffu, part.sum, o);
      other.exponent = __shfl_xor_sync(0xffffffffu, part.exponent, o);
      part.add(other);
      largest = fmax(largest, __shfl_xor_sync(0xffffffffu, largest, o));
    }
    count = __reduce_add_sync(0xffffffffu, count);
    bad = __reduce_or_sync(0xffffffffu, static_cast<unsigned>(bad));
    lowest = __reduce_min_sync(0xffffffffu, lowest);
    if (threadIdx.x != 0) return;
  } else {  // the 8 threads of a column of the block hold one line
    lane[0].add(lane[2]), lane[1].add(lane[3]);  // lane bit 4 (o = 16), then bit 3
    part = lane[0], part.add(lane[1]);
    __shared__ oz::ScaledSum shared_part[8][32];
    __shared__ double shared_largest[8][32];
    __shared__ int shared_count[8][32], shared_bad[8][32], shared_lowest[8][32];
    shared_part[threadIdx.y][threadIdx.x] = part, shared_largest[threadIdx.y][threadIdx.x] = largest;
    shared_count[threadIdx.y][threadIdx.x] = count, shared_bad[threadIdx.y][threadIdx.x] = bad;
    shared_lowest[threadIdx.y][threadIdx.x] = lowest;
    __syncthreads();
    if (threadIdx.y != 0) return;
    oz::ScaledSum level[8];
    for (int y = 0; y < 8; ++y) level[y] = shared_part[y][threadIdx.x];
    for (int o = 4; o > 0; o >>= 1)  // lane bits 2, 1, 0: the threads y and y xor o
      for (int y = 0; y < o; ++y) level[y].add(level[y + o]);
    part = level[0];
    for (int y = 1; y < 8; ++y) {
      largest = fmax(largest, shared_largest[y][threadIdx.x]);
      count += shared_count[y][threadIdx.x], bad |= shared_bad[y][threadIdx.x];
      lowest = min(lowest, shared_lowest[y][threadIdx.x]);
    }
  }
  if (line >= x.rows) return;
  parts[std::int64_t(blockIdx.y) * x.rows + line] =
      SpreadPart{part.sum, largest, part.exponent, count, lowest, bad};
}
// Per line: the chunks added in order; its largest magnitude, non-finite mark, sum, nonzeros and
// lowest set bit into `info`.
__global__ void combine_spreads_kernel(const SpreadPart* parts, std::int64_t lines, int chunks, LineInfo info) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= lines) return;
  oz::ScaledSum line;
  double largest = 0.0;
  int nonzeros = 0, lowest = INT_MAX;
  bool bad = false;
  for (int c = 0; c < chunks; ++c) {
    const SpreadPart part = parts[c * lines + i];
    bad = bad || part.nonfinite;
    line.add(oz::ScaledSum{part.sum, part.exponent}), nonzeros += part.nonzeros;
    largest = fmax(largest, part.largest), lowest = min(lowest, part.lowest_bit);
  }
  info.largest[i] = __double_as_longlong(largest), info.nonfinite[i] = bad;
  info.norm_sum[i] = line.sum, info.nonzeros[i] = nonzeros;
  if (info.lowest_bit) info.lowest_bit[i] = lowest;
}

// One side's largest magnitudes, non-finite marks, sums, nonzeros and lowest bits; `parts` holds
// ceil(k / kScanChunk) · x.rows SpreadParts.
void spread(const Lines& x, const LineInfo& info, SpreadPart* parts, cudaStream_t s) {
  const int chunks = int((x.cols + kScanChunk - 1) / kScanChunk);
  if (chunks == 0 || x.rows == 0) return;  // k = 0: every line all zero (as initialised)
  const dim3 block(32, 8);
  if (x.cs == 1) spread_parts_kernel<true><<<scan_grid(x, chunks), block, 0, s>>>(x, parts);
  else spread_parts_kernel<false><<<scan_grid(x, chunks), block, 0, s>>>(x, parts);
  IK_CUDA_CHECK_LAUNCH("spread_parts_kernel");
  combine_spreads_kernel<<<unsigned((x.rows + 255) / 256), 256, 0, s>>>(parts, x.rows, chunks, info);
  IK_CUDA_CHECK_LAUNCH("combine_spreads_kernel");
}

}  // namespace
}  // namespace ironkernels::detail
