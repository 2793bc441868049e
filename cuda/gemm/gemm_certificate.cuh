#pragma once
// The certificate of a certified contract on the device (gemm/certificate.hpp has the arithmetic):
// each line's count table, each element's count from Λ, the histogram the host decides from, and
// the lines the decision sends to native float64.
#include <cub/block/block_scan.cuh>

#include <cstdint>

#include "gemm/certificate.hpp"
#include "gemm/gemm_lines.cuh"
#include "gemm/gemm_plan_impl.hpp"

namespace ironkernels::detail {
namespace {
namespace oz = ozaki;

// Per line, after the spread pass: its exponent, lower-bound offset, exactness and θ bits, and its
// table of counts by bits needed (norm scaling's bits at every count lo … 20; side 0: op(A)).
__global__ void line_facts_kernel(LineInfo info, std::int64_t lines, Budgets budgets, int lo, int side,
                                  std::int64_t k1) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= lines) return;
  const double largest = __longlong_as_double(static_cast<long long>(info.largest[i]));
  const int exponent = largest == 0.0 ? oz::kNoExponent : oz::exponent_bound(largest), nonzeros = info.nonzeros[i];
  const double sum = info.norm_sum[i];
  info.exponent[i] = exponent;
  info.offset[i] = certify::lower_offset(sum, nonzeros);
  alignas(16) std::uint8_t table[certify::kNeedTable];
  if (info.nonfinite[i] || nonzeros == 0) {  // never read: no element of the line is certified
    for (auto& t : table) t = certify::kNoCount;
  } else {
    const certify::LineFacts facts = certify::line_facts(0, exponent, info.lowest_bit[i], nonzeros);
    info.exact_bits[i] = facts.exact_bits, info.theta_bits[i] = facts.theta_bits;
    certify::count_table(lo, [&](int c) {
      return certify::norm_bits(budgets.by_count[c], side, largest, sum, nonzeros, k1);
    }, table);
  }
  auto* to = reinterpret_cast<uint4*>(info.count_for + i * certify::kNeedTable);
  const auto* from = reinterpret_cast<const uint4*>(table);
#pragma unroll
  for (int q = 0; q < certify::kNeedTable / 16; ++q) to[q] = from[q];
}

// Each element's count (the larger of its row's and its column's, certify::line_count) over tiles of
// 32 × 32 elements of Λ (column-major, mp), each line's largest into info.most. Elements of a line
// holding Inf/NaN or no nonzero need none (computed natively, or exactly zero).
constexpr int kCertifyTile = 32;
__global__ void __launch_bounds__(256) certify_elements_kernel(const std::int32_t* lambda, std::int64_t m,
                                                               std::int64_t n, std::int64_t mp, LineInfo rows,
                                                               LineInfo cols, double rho_factor) {
  constexpr int kT = kCertifyTile;
  __shared__ __align__(16) std::uint8_t table[2][kT][certify::kNeedTable];
  __shared__ certify::LineFacts facts[2][kT];
  __shared__ int offset[2][kT], live[2][kT], row_most[8][kT];
  const std::int64_t i0 = std::int64_t(blockIdx.x) * kT;
  const int tid = threadIdx.y * kT + threadIdx.x;
  for (std::int64_t j0 = std::int64_t(blockIdx.y) * kT; j0 < n; j0 += std::int64_t(gridDim.y) * kT) {
    // The tile's 32 rows and 32 columns: facts, then tables (16 bytes a thread). Each side's LineInfo
    // is named, not chosen at run time (which would copy both to local memory).
    auto load_facts = [&](const LineInfo& info, int side, int at, std::int64_t line, std::int64_t lines) {
      const bool real = line < lines && !info.nonfinite[line] && info.nonzeros[line] > 0;
      live[side][at] = real;
      if (!real) return;
      facts[side][at] = certify::LineFacts{double(info.units[line]), info.exact_bits[line], info.theta_bits[line]};
      offset[side][at] = info.offset[line];
    };
    if (tid < kT) load_facts(rows, 0, tid, i0 + tid, m);
    else if (tid < 2 * kT) load_facts(cols, 1, tid - kT, j0 + tid - kT, n);
    {
      const int line_of = tid / 4, quarter = tid % 4, at = line_of % kT;
      const bool column = line_of >= kT;
      const std::int64_t line = (column ? j0 : i0) + at;
      const std::uint8_t* from = column ? cols.count_for : rows.count_for;
      if (line < (column ? n : m))
        reinterpret_cast<uint4*>(&table[column][at][0])[quarter] =
            reinterpret_cast<const uint4*>(from + line * certify::kNeedTable)[quarter];
    }
    __syncthreads();
    const int x = threadIdx.x;
    const std::int64_t i = i0 + x;
    int most = 0;
    for (int y = threadIdx.y; y < kT; y += 8) {
      const std::int64_t j = j0 + y;
      int need = 0;
      if (i < m && j < n && live[0][x] && live[1][y]) {
        const double rho = certify::rho(rho_factor, lambda[j * mp + i], offset[0][x], offset[1][y]);
        need = max(certify::line_count(table[0][x], facts[0][x], facts[1][y].units, rho),
                   certify::line_count(table[1][y], facts[1][y], facts[0][x].units, rho));
      }
      most = max(most, need);
      const int column_most = __reduce_max_sync(0xffffffffu, unsigned(need));
      if (x == 0 && column_most > 0) atomicMax(&cols.most[j], column_most);
    }
    row_most[threadIdx.y][x] = most;
    __syncthreads();
    if (threadIdx.y == 0) {
      for (int y = 1; y < 8; ++y) most = max(most, row_most[y][x]);
      if (i < m && most > 0) atomicMax(&rows.most[i], most);
    }
    __syncthreads();  // the tile's facts are read before the next tile's are written
  }
}

__global__ void count_histogram_kernel(LineInfo info, std::int64_t lines, unsigned long long* hist) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < lines) atomicAdd(&hist[info.nonfinite[i] ? kHistogramBins - 1 : info.most[i]], 1ull);
}

// The lines the decision sends to native float64: all, or the finite lines needing more than `moduli`.
__global__ void mark_native_kernel(LineInfo info, std::int64_t lines, int moduli, bool all) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < lines) info.native[i] = all || (!info.nonfinite[i] && info.most[i] > moduli);
}

// The indices of the native lines in ascending order (one block: the lists are short or the decision
// took the whole call, which needs none).
constexpr int kListThreads = 1024;
__global__ void __launch_bounds__(kListThreads) list_native_kernel(const int* native, std::int64_t lines, int* list) {
  using Scan = cub::BlockScan<int, kListThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ int base;
  if (threadIdx.x == 0) base = 0;
  __syncthreads();
  for (std::int64_t i0 = 0; i0 < lines; i0 += kListThreads) {
    const std::int64_t i = i0 + threadIdx.x;
    const int flag = i < lines && native[i];
    int position, total;
    Scan(scan).ExclusiveSum(flag, position, total);
    if (flag) list[base + position] = int(i);
    __syncthreads();
    if (threadIdx.x == 0) base += total;
    __syncthreads();
  }
}

}  // namespace
}  // namespace ironkernels::detail
