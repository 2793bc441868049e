// H_{2^A} along a strided axis of 2^11 to 2^13 lines in one pass over a thread-block cluster
// (sm_90+): the column pass (fwt_factor_passes.cu) for lines whose column tile is larger than one
// CTA's shared memory. A cluster takes a column of WB bytes of every line of one batch row, each
// CTA 2^LB consecutive lines of it in shared memory (64 KB: three CTAs per SM): 128-byte columns
// (whole cache lines) on 2^9 lines a CTA, clusters of 4 or 8; at 2^13 lines, or blocks of 64 bytes,
// 64-byte columns on 2^10 lines, clusters of 2 to 8; 32 bytes where that is the whole block. A
// tile is loaded by 16-byte cp.async (all of it in flight at once, in two halves, no registers
// held) and its low LB bits transformed there, H_32 over line bits 0-4 (the first half while the
// second lands) and then H_{2^(LB-5)} over the rest, a thread per column of lines. After a cluster
// barrier each CTA takes 1/2^c of the positions: the 2^c values at a position across the cluster's
// tiles (distributed shared memory, 16 bytes per read), H_{2^c} in registers, stored from there
// (each warp store 512 bytes in runs of WB); it arrives at the closing barrier after its last read,
// before its last stores. One read and one write of each element; x into y, or in place (every
// tile is read before the first barrier, every store is after it).
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "common/ptx.cuh"
#include "core/cuda_check.hpp"
#include "fwt/fwt_line_launch.cuh"
#include "fwt/fwt_line_passes.hpp"
#include "fwt/fwt_tile.cuh"
#include "fwt/fwt_values.cuh"

namespace ironkernels::detail::fwt_gpu {
namespace {

constexpr int kCtaLineBits = 10;
// Threads per CTA: 256 for 4-byte values in 64- and 128-byte columns (three 64 KB CTAs per SM at up
// to 85 registers a thread), else 128: 8-byte values (32 of a column take 64 registers) and
// 32-byte columns.
template <class T, int WB>
constexpr int cluster_column_threads() {
  return WB == 32 || sizeof(T) == 8 ? 128 : 256;
}

// A line of WB bytes fills 1/S of the banks (S = 128 / WB lines per 128-byte row): line l lies in
// slot l ^ (l >> 5 & (S - 1)), so the S groups of threads on one bank row in both in-CTA stages
// (chunks of 32 lines S·i to S·i + S - 1; lines S·i to S·i + S - 1) meet different banks.
template <int WB>
__device__ __forceinline__ int line_slot(int l) {
  return l ^ ((l >> 5) & (128 / WB - 1));
}

// One 16-byte store (st.global.v4: a plain vector assignment here was split into scalar stores).
template <class C, int N>
__device__ __forceinline__ void store_chunk(C* p, const C (&v)[N]) {
  static_assert(N * sizeof(C) == 16);
  __stwb(reinterpret_cast<uint4*>(p), chunk_bits(v));
}

template <class T, int CLUSTER, int WB, int LB>
__global__ void __launch_bounds__(cluster_column_threads<T, WB>(), 3)
    fwt_cluster_columns_kernel(const KernelArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using C = typename Compute<T>::type;
  static_assert(sizeof(C) == sizeof(T) && (sizeof(T) == 4 || sizeof(T) == 8) && CLUSTER >= 2 && CLUSTER <= 8);
  static_assert(WB == 32 || WB == 64 || WB == 128);
  constexpr int W = WB / int(sizeof(T)), kPerCopy = 16 / int(sizeof(T)), kCopies = W / kPerCopy;
  constexpr int kThreads = cluster_column_threads<T, WB>();
  constexpr int kLines = 1 << LB, kSlice = kLines / CLUSTER;
  constexpr int kItems = kSlice * kCopies / kThreads;  // 16-byte positions per thread in the exchange
  constexpr int kGroup = CLUSTER >= 8 ? 1 : 8 / CLUSTER;  // positions in registers at once: 32 registers of values
  static_assert(kItems * kThreads == kSlice * kCopies && kItems % kGroup == 0);
  const std::int64_t stride = std::int64_t(1) << a.log_n;  // between lines (the axis stride)
  const std::int64_t segments = stride / W;
  const int rank = int(blockIdx.x % CLUSTER);  // 1-D clusters: consecutive blocks
  const std::int64_t column = blockIdx.x / CLUSTER, r = column / segments, seg = column - r * segments;
  std::int64_t xo, yo;
  row_offsets(a, r, xo, yo);
  extern __shared__ uint4 cluster_column_smem[];
  C* tile = reinterpret_cast<C*>(cluster_column_smem);  // [kLines][W], lines in line_slot order

  const T* in = static_cast<const T*>(a.x) + xo + seg * W + (std::int64_t(rank) << LB) * stride;
  // Two halves in flight: the first half's H_32 runs while the second half lands.
  auto load = [&](int from, int to) {
    for (int i = from + threadIdx.x; i < to; i += kThreads) {
      const int l = i / kCopies, q = i % kCopies;
      ptx::cp_async_16(tile + line_slot<WB>(l) * W + q * kPerCopy, in + l * stride + q * kPerCopy, true);
    }
    ptx::cp_async_commit();
  };
  load(0, kLines * kCopies / 2);
  load(kLines * kCopies / 2, kLines * kCopies);
  // H_{2^bits} over line bits [lo, lo + bits) of every column, in place: a thread per (the other line
  // bits, column), tasks [from, to) of them.
  auto in_cta_stage = [&](auto lo_bits, auto bits, int from = 0, int to = -1) {
    constexpr int lo = decltype(lo_bits)::value, kH = 1 << decltype(bits)::value;
    if (to < 0) to = (kLines / kH) * W;
    for (int t = from + threadIdx.x; t < to; t += kThreads) {
      const int col = t % W, g = t / W;
      auto line = [&](int h) { return lo == 0 ? g * kH + h : (h << lo) | g; };
      C v[1][kH];
#pragma unroll
      for (int h = 0; h < kH; ++h) v[0][h] = tile[line_slot<WB>(line(h)) * W + col];
#pragma unroll
      for (int b = 0; (1 << b) < kH; ++b) butterfly_value_bit(v, b);
#pragma unroll
      for (int h = 0; h < kH; ++h) tile[line_slot<WB>(line(h)) * W + col] = v[0][h];
    }
  };
  constexpr int half = (kLines / 32) * W / 2;  // stage tasks of the first half's lines
  ptx::cp_async_wait<1>();
  __syncthreads();
  in_cta_stage(std::integral_constant<int, 0>{}, std::integral_constant<int, 5>{}, 0, half);
  ptx::cp_async_wait<0>();
  __syncthreads();
  in_cta_stage(std::integral_constant<int, 0>{}, std::integral_constant<int, 5>{}, half, 2 * half);
  __syncthreads();
  in_cta_stage(std::integral_constant<int, 5>{}, std::integral_constant<int, LB - 5>{});
  ptx::cluster_sync();  // every CTA's low LB bits are done

  // This CTA's slice: lines rank·kSlice ... of every tile, (line, 16-byte chunk) per position.
  const C sc = scale_value<C>(a);
  T* out = static_cast<T*>(a.y) + yo + seg * W;
  const C* tiles[CLUSTER];
#pragma unroll
  for (int k = 0; k < CLUSTER; ++k) tiles[k] = ptx::map_cluster_rank(tile, k);
#pragma unroll 1
  for (int i0 = 0; i0 < kItems; i0 += kGroup) {
    C v[kGroup][CLUSTER][kPerCopy];
    auto position = [&](int i, int& l, int& q) {
      const int p = threadIdx.x + (i0 + i) * kThreads;
      l = rank * kSlice + p / kCopies;
      q = p % kCopies;
    };
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      int l, q;
      position(i, l, q);
#pragma unroll
      for (int k = 0; k < CLUSTER; ++k) load_chunk(tiles[k] + line_slot<WB>(l) * W + q * kPerCopy, v[i][k]);
    }
    // After the last read of the tiles: the partners may leave while this CTA still stores.
    if (i0 + kGroup == kItems) ptx::cluster_arrive_release();
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      int l, q;
      position(i, l, q);
#pragma unroll
      for (int s = 0; (1 << s) < CLUSTER; ++s) butterfly_vector_bit(v[i], s);
#pragma unroll
      for (int k = 0; k < CLUSTER; ++k) {
        if (a.scaled)
#pragma unroll
          for (int e = 0; e < kPerCopy; ++e) v[i][k][e] *= sc;
        store_chunk(out + ((std::int64_t(k) << LB) + l) * stride + q * kPerCopy, v[i][k]);
      }
    }
  }
  ptx::cluster_wait_acquire();  // no CTA leaves while another may still read its tile
#else
  __trap();  // launched only on compute capability >= 9.0
#endif
}

template <class T, int CLUSTER, int WB, int LB>
void launch_cluster_columns_cw(const LinePassArgs& pass, cudaStream_t stream) {
  auto kernel = fwt_cluster_columns_kernel<T, CLUSTER, WB, LB>;
  constexpr int smem = WB << LB;
  allow_smem(reinterpret_cast<const void*>(kernel), smem, pass.device);
  constexpr int W = WB / int(sizeof(T));
  const std::int64_t blocks = pass.lines.rows * ((std::int64_t(1) << pass.lines.log_n) / W) * CLUSTER;
  launch_on_clusters(kernel, grid_size(blocks, pass.lines.rows), cluster_column_threads<T, WB>(), smem, CLUSTER, stream,
                     pass.lines);
}
// Clusters of 2^(A - LB) CTAs: 2 to 8.
template <class T, int WB, int LB>
void launch_cluster_columns_wb(const LinePassArgs& pass, cudaStream_t stream) {
  switch (pass.outer_bits - LB) {
    case 1:
      if constexpr (LB == kCtaLineBits) return launch_cluster_columns_cw<T, 2, WB, LB>(pass, stream);
      break;
    case 2: return launch_cluster_columns_cw<T, 4, WB, LB>(pass, stream);
    case 3: return launch_cluster_columns_cw<T, 8, WB, LB>(pass, stream);
  }
  raise<ValueError>("fwt: internal error: no cluster column pass of 2^", pass.outer_bits, " lines in columns of ", WB,
                    " bytes");
}

template <class T>
struct ClusterColumnsLaunch {
  static void run(const LinePassArgs& a, cudaStream_t s) {
    if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
      if (a.outer_bits >= 11 && a.outer_bits <= 13) {
        switch (cluster_column_bytes(std::int64_t(sizeof(T)) << a.lines.log_n, a.outer_bits)) {
          case 128: return launch_cluster_columns_wb<T, 128, kCtaLineBits - 1>(a, s);
          case 64: return launch_cluster_columns_wb<T, 64, kCtaLineBits>(a, s);
          default: return launch_cluster_columns_wb<T, 32, kCtaLineBits>(a, s);
        }
      }
    }
    raise<ValueError>("fwt: internal error: no cluster column pass of 2^", a.outer_bits, " lines of ", int(sizeof(T)),
                      "-byte values");
  }
};

}  // namespace

void launch_cluster_columns_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream) {
  by_dtype<ClusterColumnsLaunch>(dtype, a, stream);
}

}  // namespace ironkernels::detail::fwt_gpu
