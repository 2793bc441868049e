#pragma once
// Host side of the strided kernel: whether a plan's layout suits it, the tile it takes (how many
// columns, rows and outer lines), and its launcher.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>

#include "core/cuda_check.hpp"
#include "fwt/fwt_plan.hpp"
#include "fwt/fwt_strided_kernel.cuh"
#include "fwt/fwt_tile.cuh"

namespace ironkernels::detail::fwt_gpu {

// A tile narrower than 2^kStridedMinColumnBits vectors (64 bytes of each row) when the inner extent
// allows a wider one is not taken: the transform is split into more passes instead.
constexpr int kStridedMinColumnBits = 2;

/// The strided kernel's layout of plan p: its inner extent (the innermost batch dimension when it is
/// contiguous in x and y, else 1), its outer lines (the other batch dimensions), the vector split.
struct StridedLayout {
  bool vectorizable = false;
  std::int64_t inner = 1;
  int column_bits_max = 0;  // log2 of the largest power of two dividing inner / V
  int rv = 0;               // rows per vector (inner < V)
  int wide = 0, narrow = 0;  // the two windows (log2 vectors per thread)
  int max_log_u = 0;         // of the wide window's tile
  /// Rows one pass takes (log2): the tile's row bits at the narrowest column width allowed.
  int max_log_rows() const {
    const int cb = column_bits_max < kStridedMinColumnBits ? column_bits_max : kStridedMinColumnBits;
    return max_log_u - cb + rv;
  }
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
  s.wide = es == 2 ? strided_wide_window<__half>() : strided_wide_window<float>();
  s.narrow = s.wide - 1;
  s.max_log_u = strided_max_log_u(s.wide);
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

/// The kernel's arguments for plan p in one pass, or false when p needs more rows than one tile holds
/// (or so few elements that a tile would be less than a warp).
// The window for `row_bits` row bits: narrow up to two rounds, wide beyond (fewer exchanges);
// IRONKERNELS_FWT_STRIDED_WINDOW=wide|narrow fixes it (bench/fwt sweeps).
inline int strided_window(const StridedLayout& s, int row_bits) {
  static const int forced = [] {
    const char* env = std::getenv("IRONKERNELS_FWT_STRIDED_WINDOW");
    return env ? (env[0] == 'w' ? 1 : env[0] == 'n' ? 2 : 0) : 0;
  }();
  const bool narrow = forced ? forced == 2 : row_bits <= 2 * s.narrow;
  // The narrow tile must still hold the rows at the narrowest column width allowed.
  const int cb_min = s.column_bits_max < kStridedMinColumnBits ? s.column_bits_max : kStridedMinColumnBits;
  return narrow && row_bits + cb_min <= strided_max_log_u(s.narrow) ? s.narrow : s.wide;
}

inline bool strided_args(const FwtPlan& p, const StridedLayout& s, StridedArgs& a) {
  if (!s.vectorizable || p.log_n > s.max_log_rows()) return false;
  const std::int64_t V = 16 / static_cast<std::int64_t>(dtype_size(p.dtype));
  a = StridedArgs{};
  a.x = p.x;
  a.y = p.y;
  const int row_bits = p.log_n - s.rv;
  a.pb = strided_window(s, row_bits);
  const int max_log_u = strided_max_log_u(a.pb);
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
  if (a.log_u < a.pb + 5) return false;
  a.x_row_stride = s.rv ? V : p.x_axis_stride;
  a.y_row_stride = s.rv ? V : p.y_axis_stride;
  a.column_tiles = s.inner >= V ? (s.inner / V) >> cb : 1;
  a.scale = p.scale;
  a.int_scale = static_cast<std::uint64_t>(p.int_scale);
  a.scaled = p.scaled();
  return true;
}

template <class T, int PB>
void launch_strided_window(const StridedArgs& a, cudaStream_t stream, int device) {
  using C = typename Compute<T>::type;
  constexpr int V = 16 / sizeof(T);
  auto kernel = fwt_strided_kernel<T, PB>;
  const int smem = (V * int(sizeof(C))) << a.log_u;
  allow_smem(reinterpret_cast<const void*>(kernel), smem, device);
  const std::int64_t groups = (a.outer + (std::int64_t(1) << a.ob) - 1) >> a.ob;
  const unsigned grid = grid_size(groups * a.column_tiles, a.outer);
  kernel<<<grid, 1 << (a.log_u - PB), smem, stream>>>(a);
  IK_CUDA_CHECK_LAUNCH("fwt_strided_kernel");
}

template <class T>
void launch_strided(const StridedArgs& a, cudaStream_t stream, int device) {
  if (a.pb == strided_wide_window<T>()) return launch_strided_window<T, strided_wide_window<T>()>(a, stream, device);
  return launch_strided_window<T, strided_narrow_window<T>()>(a, stream, device);
}

}  // namespace ironkernels::detail::fwt_gpu
