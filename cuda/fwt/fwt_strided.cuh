#pragma once
// Host side of the strided kernel: whether a plan's layout suits it, the tile it takes (its shape,
// and how many columns, rows and outer lines), and its launcher.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda_check.hpp"
#include "core/dev_overrides.hpp"
#include "fwt/fwt_plan.hpp"
#include "fwt/fwt_strided_kernel.cuh"
#include "fwt/fwt_tile.cuh"

namespace ironkernels::detail::fwt_gpu {

// Columns of a tile (log2 vectors of a row side by side) when rows are strided: a pass whose tile
// would be narrower than kStridedWantedColumnBits (128 bytes of each row) while the inner extent
// allows more is split instead.
constexpr int kStridedWantedColumnBits = 3;

/// Vector bits of a shape's tile (threads × vectors per thread; strided_window and strided_threads
/// at run time).
inline int strided_max_log_u(std::int64_t elem_bytes, StridedShape shape) {
  const int window = (elem_bytes == 2 ? 3 : 4) - (shape == StridedShape::narrow ? 1 : 0);
  return window + (shape == StridedShape::tall ? 9 : 8);
}

/// The strided kernel's layout of plan p: its inner extent (the innermost batch dimension when it is
/// contiguous in x and y, else 1), its outer lines (the other batch dimensions), the vector split.
struct StridedLayout {
  bool vectorizable = false;
  std::int64_t inner = 1;
  int column_bits_max = 0;  // log2 of the largest power of two dividing inner / V
  int rv = 0;               // rows per vector (inner < V)
  int max_log_u = 0;        // of the largest shape's tile
  int min_column_bits() const { return std::min(column_bits_max, kStridedWantedColumnBits); }
  /// Rows one pass takes (log2): the largest tile's row bits at the narrowest column width allowed.
  int max_log_rows() const { return max_log_u - min_column_bits() + rv; }
};

inline int ceil_log2(std::int64_t v) {
  int b = 0;
  while ((std::int64_t(1) << b) < v) ++b;
  return b;
}
inline int floor_log2(std::int64_t v) { return 63 - __builtin_clzll(static_cast<unsigned long long>(v)); }

inline StridedLayout strided_layout(const FwtPlan& p) {
  StridedLayout s;
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(p.dtype)), V = 16 / es;
  s.max_log_u = strided_max_log_u(es, StridedShape::tall);
  if (!aligned16(p.x) || !aligned16(p.y)) return s;
  int outer_dims = p.batch_ndim;
  const int last = p.batch_ndim - 1;
  if (last >= 0 && p.x_stride[last] == 1 && p.y_stride[last] == 1) {
    s.inner = p.batch_shape[last];
    outer_dims = last;
  }
  for (int d = 0; d < outer_dims; ++d)
    if (p.x_stride[d] % V || p.y_stride[d] % V) return s;
  if (s.inner >= V) {
    if (s.inner % V || p.x_axis_stride % V || p.y_axis_stride % V) return s;
    s.column_bits_max = __builtin_ctzll(static_cast<unsigned long long>(s.inner / V));
  } else {  // a vector holds V / inner consecutive rows: rows contiguous, and a whole vector of them
    if (V % s.inner || p.x_axis_stride != s.inner || p.y_axis_stride != s.inner) return s;
    s.rv = floor_log2(V / s.inner);
    if (p.log_n < s.rv) return s;
  }
  s.vectorizable = true;
  return s;
}

// The shape for `row_bits` row bits, measured on H200 (bench/DECISIONS.md, fwt): rows that lie
// back to back (slabs) take the smallest shape that spans them; strided rows the
// smallest whose columns are at least 128 bytes wide (narrower ones cost more than the tall shape's
// single block per SM), or as wide as any shape reaches. IRONKERNELS_FWT_STRIDED_SHAPE=narrow|wide|
// tall fixes it where the rows fit (bench sweeps).
inline StridedShape strided_shape(const StridedLayout& s, std::int64_t elem_bytes, int row_bits, bool slab_rows) {
  static const int forced = [] {
    const char* env = dev_override("IRONKERNELS_FWT_STRIDED_SHAPE");
    return env ? (env[0] == 'n' ? 0 : env[0] == 'w' ? 1 : env[0] == 't' ? 2 : -1) : -1;
  }();
  const StridedShape shapes[] = {StridedShape::narrow, StridedShape::wide, StridedShape::tall};
  int columns[3];
  int best = -1;
  for (int i = 0; i < 3; ++i) {
    const int room = strided_max_log_u(elem_bytes, shapes[i]) - row_bits;
    // A tile across the whole inner extent of rows that lie back to back reads one contiguous run.
    columns[i] = room < 0 ? -1 : slab_rows && room >= s.column_bits_max ? kStridedWantedColumnBits : std::min(s.column_bits_max, room);
    best = std::max(best, columns[i]);
  }
  if (forced >= 0 && columns[forced] >= s.min_column_bits()) return shapes[forced];
  for (int i = 0; i < 3; ++i)
    if (columns[i] >= std::min(best, kStridedWantedColumnBits)) return shapes[i];
  return StridedShape::tall;
}

/// The kernel's arguments for plan p in one pass, its lines' top `cluster_bits` row bits across the
/// blocks of a cluster; false when p needs more rows than one tile holds (or so few elements that a
/// tile would be less than a warp).
inline bool strided_args(const FwtPlan& p, const StridedLayout& s, StridedArgs& a, int cluster_bits = 0) {
  if (!s.vectorizable || p.log_n - cluster_bits > s.max_log_rows()) return false;
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(p.dtype)), V = 16 / es;
  a = StridedArgs{};
  a.x = p.x;
  a.y = p.y;
  a.cluster_bits = cluster_bits;
  const int row_bits = p.log_n - s.rv - cluster_bits;  // of one block's tile
  if (row_bits < 0) return false;
  // Rows back to back, each one tile width (inner = V·2^column_bits_max, the axis stride inner).
  const bool slab_rows = s.rv || (p.x_axis_stride == s.inner && p.y_axis_stride == s.inner &&
                                  s.inner == (V << s.column_bits_max));
  const StridedShape shape = strided_shape(s, es, row_bits, slab_rows);
  a.tile_shape = static_cast<int>(shape);
  const int max_log_u = strided_max_log_u(es, shape);
  const int cb = s.column_bits_max < max_log_u - row_bits ? s.column_bits_max : max_log_u - row_bits;
  a.outer_ndim = p.batch_ndim - (s.inner > 1 ? 1 : 0);
  a.outer = 1;
  for (int d = 0; d < a.outer_ndim; ++d) {
    a.shape[d] = p.batch_shape[d];
    a.xs[d] = p.x_stride[d];
    a.ys[d] = p.y_stride[d];
    a.outer *= p.batch_shape[d];
  }
  int ob = 0;
  if (cb == s.column_bits_max) {  // the whole inner extent: fill the tile with outer lines
    ob = max_log_u - row_bits - cb;
    // Past one outer dimension, the tile's lines must not wrap its innermost one.
    const int outer_bits = a.outer_ndim > 1 ? __builtin_ctzll(static_cast<unsigned long long>(a.shape[a.outer_ndim - 1]))
                                            : ceil_log2(a.outer);
    if (ob > outer_bits) ob = outer_bits;
  }
  a.cb = cb;
  a.row_bits = row_bits;
  a.ob = ob;
  a.rv = s.rv;
  a.log_u = cb + row_bits + ob;
  if (a.log_u < max_log_u - (shape == StridedShape::tall ? 4 : 3)) return false;  // fewer threads than a warp
  a.x_row_stride = s.rv ? V : p.x_axis_stride;
  a.y_row_stride = s.rv ? V : p.y_axis_stride;
  // Memory is contiguous over the columns, and over the rows too where they lie back to back.
  auto contiguous_bits = [&](std::int64_t row_stride) {
    const int bits = row_stride == (V << cb) ? cb + row_bits : cb;
    return bits < 5 ? bits : 5;
  };
  a.x_contiguous_bits = contiguous_bits(a.x_row_stride);
  a.y_contiguous_bits = contiguous_bits(a.y_row_stride);
  a.column_tiles = s.inner >= V ? (s.inner / V) >> cb : 1;
  a.scale = p.scale;
  a.int_scale = static_cast<std::uint64_t>(p.int_scale);
  a.scaled = p.scaled();
  return true;
}

/// Cluster bits the strided kernel may use on `device` (log2 of the blocks per cluster): 3 (the
/// portable 8) where clusters launch (compute capability 9.0), else 0.
inline int strided_cluster_bits_max(int device) { return cluster_launch_supported(device) ? 3 : 0; }

/// IRONKERNELS_FWT_STRIDED_CLUSTERS (bench sweeps): "0" never, "all" wherever a cluster's tiles are
/// narrow or wide, else (unset) the measured rule of strided_cluster_args.
enum class ClusterUse { never, rule, all };
inline ClusterUse strided_cluster_use() {
  static const ClusterUse use = [] {
    const char* env = dev_override("IRONKERNELS_FWT_STRIDED_CLUSTERS");
    return !env ? ClusterUse::rule : env[0] == '0' ? ClusterUse::never : env[0] == 'a' ? ClusterUse::all : ClusterUse::rule;
  }();
  return use;
}

/// The arguments of one pass over a cluster of 8 blocks (IRONKERNELS_FWT_CLUSTER_BITS=1|2 asks for
/// 2 or 4, bench sweeps), for lines one block holds only on the tall shape or not at all, where
/// each block's tile is then narrow or wide: measured on H200, the tiles of 4 and 2 blocks per SM
/// overlap their loads with their partners' exchanges, while a tall one (a block per SM) waits on
/// both. 16-bit lines are left to two passes. False where the rule does not hold.
inline bool strided_cluster_args(const FwtPlan& p, const StridedLayout& s, StridedArgs& a) {
  static const int forced = dev_override_int("IRONKERNELS_FWT_CLUSTER_BITS", 0);
  const int most = strided_cluster_bits_max(p.device.id);
  const ClusterUse use = strided_cluster_use();
  if (!s.vectorizable || most == 0 || use == ClusterUse::never || dtype_size(p.dtype) == 2) return false;
  const int bits = forced > 0 && forced < most ? forced : most;
  if (use == ClusterUse::rule && p.log_n <= s.max_log_rows() &&
      (!strided_args(p, s, a) || a.tile_shape != static_cast<int>(StridedShape::tall)))
    return false;  // one block, on a narrow or wide tile
  return strided_args(p, s, a, bits) && a.tile_shape != static_cast<int>(StridedShape::tall);
}

template <class T, StridedShape S, int CB>
void launch_strided_shape(const StridedArgs& a, cudaStream_t stream, int device) {
  using C = typename Compute<T>::type;
  constexpr int V = 16 / sizeof(T);
  auto kernel = fwt_strided_kernel<T, S, CB>;
  const int smem = (V * int(sizeof(C))) << a.log_u;
  allow_smem(reinterpret_cast<const void*>(kernel), smem, device);
  const std::int64_t groups = (a.outer + (std::int64_t(1) << a.ob) - 1) >> a.ob;
  const unsigned grid = grid_size((groups * a.column_tiles) << CB, a.outer);
  const unsigned threads = 1u << (a.log_u - strided_window<T, S>());
  if constexpr (CB == 0) {
    kernel<<<grid, threads, smem, stream>>>(a);
    IK_CUDA_CHECK_LAUNCH("fwt_strided_kernel");
  } else {
    launch_on_clusters(kernel, grid, threads, smem, 1u << CB, stream, a);
  }
}

// Clusters take narrow and wide tiles of 32- and 64-bit types only (strided_cluster_args).
template <class T, int CB>
void launch_strided_clustered(const StridedArgs& a, cudaStream_t stream, int device) {
  if constexpr (sizeof(T) != 2) {
    if (a.tile_shape == static_cast<int>(StridedShape::narrow))
      return launch_strided_shape<T, StridedShape::narrow, CB>(a, stream, device);
    if (a.tile_shape == static_cast<int>(StridedShape::wide))
      return launch_strided_shape<T, StridedShape::wide, CB>(a, stream, device);
  }
  raise<ValueError>("fwt: internal error: no clustered strided kernel for this tile");
}

template <class T>
void launch_strided(const StridedArgs& a, cudaStream_t stream, int device) {
  switch (a.cluster_bits) {
    case 0:
      switch (static_cast<StridedShape>(a.tile_shape)) {
        case StridedShape::narrow: return launch_strided_shape<T, StridedShape::narrow, 0>(a, stream, device);
        case StridedShape::wide: return launch_strided_shape<T, StridedShape::wide, 0>(a, stream, device);
        case StridedShape::tall: return launch_strided_shape<T, StridedShape::tall, 0>(a, stream, device);
      }
      break;
    case 1: return launch_strided_clustered<T, 1>(a, stream, device);
    case 2: return launch_strided_clustered<T, 2>(a, stream, device);
    case 3: return launch_strided_clustered<T, 3>(a, stream, device);
  }
  raise<ValueError>("fwt: internal error: ", a.cluster_bits, " cluster bits");
}

}  // namespace ironkernels::detail::fwt_gpu
