#pragma once
// The FWT along a strided axis, fwt_strided_kernel: the lines of a (outer, L, inner) layout, inner
// contiguous, transformed along L without transposes. It also takes the outer passes of rows longer
// than one tile (a row of N = L1·L2 is L1 strided lines of inner = L2), and lines whose 16-byte
// vectors hold several rows (inner < one vector: complex parts and short inner extents off the
// table's layouts).
//
// A block holds a tile of U = 2^log_u vectors of 16 bytes, u = [column bits | row bits | outer bits]
// from the lowest: 2^cb neighbouring vectors of one row (W = 2^cb·V contiguous elements), 2^(log_l -
// rv) rows (or row groups: with inner < V a vector holds 2^rv consecutive rows), 2^ob outer lines.
// Each thread holds P = 2^PB vectors; a round puts a window of PB row bits of u into its registers
// (the rest of u's bits are thread bits, lowest first, so the accesses of a warp stay contiguous),
// transforms those bits there, and the next round exchanges the tile through shared memory to the
// next window down. Loads and stores use the first and last windows where their thread bits cover
// the bits over which memory is contiguous, else the tile's top window and one more exchange.
//
// Lines longer than one tile (Hopper) span a cluster of 2^CB blocks: block `rank` holds rows
// [rank·2^row_bits, (rank+1)·2^row_bits) of the same tile and transforms them; then each block
// parks its tile in its shared memory, and block `rank` reads slice `rank` of the tile (the vectors
// whose top CB bits of u equal `rank`) from every block of the cluster, does the CB cluster bits in
// registers and stores that slice for all 2^CB row blocks. One pass over global memory; each block
// reads (2^CB - 1)/2^CB of a tile from its partners.
#include <cuda_runtime.h>

#include <cstdint>

#include "common/ptx.cuh"
#include "fwt/fwt_layouts.cuh"
#include "fwt/fwt_plan.hpp"
#include "fwt/fwt_values.cuh"

namespace ironkernels::detail::fwt_gpu {

struct StridedArgs {
  const void* x;
  void* y;
  int outer_ndim;  // the outer lines' dimensions (outer to inner)
  std::int64_t shape[kFwtBatchCapacity];
  std::int64_t xs[kFwtBatchCapacity];
  std::int64_t ys[kFwtBatchCapacity];
  std::int64_t outer;                   // outer lines
  std::int64_t x_row_stride, y_row_stride;  // elements between the tile's consecutive rows (row groups)
  int tile_shape;                              // StridedShape
  int cb, row_bits, ob, rv, log_u;            // column / row / outer bits, rows per vector, tile
  int x_contiguous_bits, y_contiguous_bits;    // low bits of u over which x (y) is contiguous, at most 5
  std::int64_t column_tiles;  // tiles across one outer line's inner extent
  int cluster_bits;           // the line's top row bits across a cluster's blocks (0: one block)
  double scale;
  std::uint64_t int_scale;
  bool scaled;
};

/// The tile shapes: the window (log2 of the vectors a thread holds) and threads per block. Wide,
/// 256 bytes of values per thread, for many row bits (fewer exchanges); narrow, 128 bytes, for few
/// (more blocks per SM); tall, the wide window in 512 threads (128 KB of shared memory), for the
/// rows of the long passes whose lines are strided (wider columns per row).
enum class StridedShape : int { narrow = 0, wide = 1, tall = 2 };
template <class T, StridedShape S>
constexpr int strided_window() {
  return (sizeof(T) == 2 ? 3 : 4) - (S == StridedShape::narrow ? 1 : 0);  // 16-bit: vectors of 8 float32
}
template <StridedShape S>
constexpr int strided_threads() {
  return S == StridedShape::tall ? 512 : 256;
}
/// Blocks per SM the register allocation leaves room for.
template <StridedShape S>
constexpr int strided_blocks_per_sm() {
  return S == StridedShape::narrow ? 4 : S == StridedShape::wide ? 2 : 1;
}

// Vector u of the tile at register i of thread t, when the window starts at bit lo.
template <int PB>
__device__ __forceinline__ int strided_u(int t, int lo, int i) {
  return (t & ((1 << lo) - 1)) | (i << lo) | ((t >> lo) << (lo + PB));
}
// Shared-memory slot of vector u: the low three bits xor-ed with the three above the window's width,
// so that both the top window (threads over u's low bits) and the bottom one (threads over the bits
// above PB) touch distinct 16-byte bank groups.
template <int PB>
__device__ __forceinline__ int strided_slot(int u) {
  return u ^ ((u >> PB) & 7);
}

template <class T, int PB>
__device__ __forceinline__ void strided_exchange(typename Compute<T>::type (&v)[1 << PB][16 / sizeof(T)], uint4* smem,
                                                 int t, int from, int to) {
  using C = typename Compute<T>::type;
  constexpr int V = 16 / sizeof(T), CH = V * int(sizeof(C)) / 16;
  __syncthreads();  // the previous exchange's reads are done
#pragma unroll
  for (int i = 0; i < (1 << PB); ++i) {
    uint4* p = smem + strided_slot<PB>(strided_u<PB>(t, from, i)) * CH;
#pragma unroll
    for (int c = 0; c < CH; ++c) p[c] = chunk_bits(&v[i][c * 16 / sizeof(C)]);
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < (1 << PB); ++i) {
    const C* p = reinterpret_cast<const C*>(smem + strided_slot<PB>(strided_u<PB>(t, to, i)) * CH);
    load_chunk(p, v[i]);
  }
}

template <class T, StridedShape S, int CB = 0>
__global__ void __launch_bounds__(strided_threads<S>(), strided_blocks_per_sm<S>()) fwt_strided_kernel(const StridedArgs a) {
  using C = typename Compute<T>::type;
  constexpr int PB = strided_window<T, S>(), V = 16 / sizeof(T), P = 1 << PB, LOG_V = ilog2(V);
  static_assert(CB <= PB, "a cluster's slice is at least one vector per thread");
  extern __shared__ uint4 strided_smem[];
  const int t = threadIdx.x;
  const int rank = CB ? int(blockIdx.x & ((1u << CB) - 1)) : 0;  // 1-D clusters: consecutive blocks
  const std::int64_t tile = CB ? blockIdx.x >> CB : blockIdx.x;
  const std::int64_t og = tile / a.column_tiles, ct = tile % a.column_tiles;
  const int row_hi = a.cb + a.row_bits;
  // The first window: the top PB row bits, or (fewer row bits than PB) from the lowest row bit,
  // as far as the tile reaches.
  const int lowest = a.cb < a.log_u - PB ? a.cb : a.log_u - PB;
  const int first = row_hi - PB > lowest ? row_hi - PB : lowest;

  // Offsets are linear in each bit field of u inside a tile (the tile's outer lines lie along the
  // innermost outer dimension), so a vector's offset is the block's base, plus its thread's part,
  // plus its register's part.
  std::int64_t o0 = og << a.ob, bx = 0, by = 0;
  for (int d = a.outer_ndim - 1; d >= 0; --d) {
    const std::int64_t i = d == 0 ? o0 : o0 % a.shape[d];
    o0 = d == 0 ? 0 : o0 / a.shape[d];
    bx += i * a.xs[d];
    by += i * a.ys[d];
  }
  bx += (std::int64_t(rank) * a.x_row_stride) << a.row_bits;  // row block `rank` of the line
  const std::int64_t ox = a.outer_ndim ? a.xs[a.outer_ndim - 1] : 0, oy = a.outer_ndim ? a.ys[a.outer_ndim - 1] : 0;
  const std::int64_t first_line = og << a.ob;
  auto part = [&](int u, std::int64_t& xo, std::int64_t& yo) {
    const int cv = u & ((1 << a.cb) - 1), r = (u >> a.cb) & ((1 << a.row_bits) - 1), ol = u >> row_hi;
    xo = ol * ox + r * a.x_row_stride + cv * V;
    yo = ol * oy + r * a.y_row_stride + cv * V;
    return ol;
  };
  // Element offsets of register i's vector when the window starts at bit w; false past the last
  // outer line. The thread's part is computed once per window used (loads, and stores).
  struct ThreadPart {
    std::int64_t x, y;
    int line;
  };
  auto thread_part = [&](int w) {
    ThreadPart p;
    p.line = part(strided_u<PB>(t, w, 0), p.x, p.y);
    p.x += bx + (ct << a.cb) * V;
    p.y += by + (ct << a.cb) * V;
    return p;
  };
  auto offsets = [&](const ThreadPart& tp, int w, int i, std::int64_t& xo, std::int64_t& yo) {
    const int line = tp.line + part(i << w, xo, yo);
    xo += tp.x;
    yo += tp.y;
    return first_line + line < a.outer;
  };

  // Global accesses in a window whose thread bits start with the bits over which memory is
  // contiguous (a warp's 32 vectors in one run where the layout allows); else in the tile's top
  // window, with an exchange to or from the butterflies' window.
  const int outermost = a.log_u - PB;
  const int load_window = first >= a.x_contiguous_bits ? first : outermost;
  C v[P][V];
  const ThreadPart load_part = thread_part(load_window);
#pragma unroll
  for (int i = 0; i < P; ++i) {
    std::int64_t xo, yo;
    if (offsets(load_part, load_window, i, xo, yo)) {
      VecIO<T, V>::unpack(VecIO<T, V>::load_raw(static_cast<const T*>(a.x) + xo), v[i]);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) v[i][e] = C(0);
    }
  }
  // Rows inside a vector (inner < V): its top rv value bits.
#pragma unroll
  for (int b = 0; b < LOG_V; ++b)
    if (b >= LOG_V - a.rv) butterfly_value_bit<P, V>(v, b);

  if (load_window != first) strided_exchange<T, PB>(v, strided_smem, t, load_window, first);
  int lo = first, done = row_hi;
  while (true) {
#pragma unroll
    for (int j = 0; j < PB; ++j)
      if (lo + j >= a.cb && lo + j < done) butterfly_vector_bit<P, V>(v, j);
    done = lo > a.cb ? lo : a.cb;
    if (done <= a.cb) break;
    const int next = done - PB > a.cb ? done - PB : a.cb;
    strided_exchange<T, PB>(v, strided_smem, t, lo, next);
    lo = next;
  }
  const C sc = scale_value<C>(a);
  if constexpr (CB > 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Park the tile, then gather this block's slice from every block of the cluster in the top
    // window (threads over u's low bits): register j = (block k) << (PB - CB) | i holds block k's
    // vector u = t | (rank << (PB - CB) | i) << outermost.
    constexpr int CH = V * int(sizeof(C)) / 16, SLICE = P >> CB;
    const std::int64_t y_rank_stride = std::int64_t(a.y_row_stride) << a.row_bits;
    __syncthreads();  // the last exchange's reads are done
#pragma unroll
    for (int i = 0; i < P; ++i) {
      uint4* q = strided_smem + strided_slot<PB>(strided_u<PB>(t, lo, i)) * CH;
#pragma unroll
      for (int c = 0; c < CH; ++c) q[c] = chunk_bits(&v[i][c * 16 / sizeof(C)]);
    }
    ptx::cluster_sync();
#pragma unroll
    for (int k = 0; k < (1 << CB); ++k) {
      const uint4* part = ptx::map_cluster_rank(static_cast<const uint4*>(strided_smem), k);
#pragma unroll
      for (int i = 0; i < SLICE; ++i)
        load_chunk(reinterpret_cast<const C*>(part + strided_slot<PB>(strided_u<PB>(t, outermost, (rank * SLICE) | i)) * CH),
                   v[k * SLICE + i]);
    }
    ptx::cluster_arrive_release();  // this block's reads of its partners are done
#pragma unroll
    for (int j = ilog2(SLICE); j < PB; ++j) butterfly_vector_bit<P, V>(v, j);
    const ThreadPart store_part = thread_part(outermost);
#pragma unroll
    for (int j = 0; j < P; ++j) {
      std::int64_t xo, yo;
      if (!offsets(store_part, outermost, (rank * SLICE) | (j % SLICE), xo, yo)) continue;
      if (a.scaled)
#pragma unroll
        for (int e = 0; e < V; ++e) v[j][e] *= sc;
      VecIO<T, V>::template store<false>(static_cast<T*>(a.y) + yo + (j / SLICE) * y_rank_stride, v[j]);
    }
    ptx::cluster_wait_acquire();  // no block leaves (its shared memory) while partners read it
#else
    __trap();  // cluster kernels are only launched on compute capability >= 9.0
#endif
    return;
  }
  if (lo < a.y_contiguous_bits) {
    strided_exchange<T, PB>(v, strided_smem, t, lo, outermost);
    lo = outermost;
  }
  const ThreadPart store_part = thread_part(lo);
#pragma unroll
  for (int i = 0; i < P; ++i) {
    std::int64_t xo, yo;
    if (!offsets(store_part, lo, i, xo, yo)) continue;
    if (a.scaled)
#pragma unroll
      for (int e = 0; e < V; ++e) v[i][e] *= sc;
    VecIO<T, V>::template store<false>(static_cast<T*>(a.y) + yo, v[i]);
  }
}

}  // namespace ironkernels::detail::fwt_gpu
