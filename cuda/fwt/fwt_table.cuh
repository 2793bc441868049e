#pragma once
// The CUDA FWT's whole choice of kernel and configuration per (dtype, N, architecture), and the entry
// point each fwt_<dtype>.cu instantiates: aligned rows of a uniform stride take the tile kernels
// (launch_tile below), everything else the shared-memory fallback.
#include <cuda_runtime.h>

#include <cstdint>

#include "fwt/fwt_plan.hpp"
#include "fwt/fwt_tile.cuh"

namespace ironkernels::detail::fwt_gpu {

/// The longest rows (log2) the table has a configuration for; longer ones are split into passes.
/// 4- and 8-byte rows of 256 KB (2^16, 2^15) only on a pair of CTAs (cluster_launch_supported).
template <class T>
constexpr int kTileMaxLog2N = sizeof(T) == 4 ? 16 : 15;
// Rows of 256 KB of 4- and 8-byte values: a pair of CTAs, each the split configuration of 128 KB.
template <class T, int LOG_N>
constexpr bool kPairRow = sizeof(T) != 2 && (int(sizeof(T)) << LOG_N) == 256 * 1024;

// Dispatches N = 2^a.log_n to its compile-time configuration. False, launching nothing, for an
// output order (a.order) that configuration does not apply in its store.
template <class T, int V, int K, int LOG_N = 0>
bool launch_tile(const KernelArgs& a, cudaStream_t stream, int device) {
  if constexpr (LOG_N > kTileMaxLog2N<T>) {
    raise<ValueError>("fwt: N = 2^", a.log_n, " is not supported on CUDA");
  } else if constexpr (kPairRow<T, LOG_N>) {
    if (a.log_n != LOG_N) return launch_tile<T, V, K, LOG_N + 1>(a, stream, device);
    // Rows of 256 KB (float32 and int32 2^16, float64 and int64 2^15) over a pair of CTAs, each the
    // split configuration of 128 KB below on its half, the row's top bit through distributed shared
    // memory (fwt_cuda.cu sends them here only where clusters launch).
    if (!cluster_launch_supported(device)) raise<ValueError>("fwt: internal error: a pair row without clusters");
    constexpr TileShape pair = tile_shape(2 * K, LOG_N).cluster_of(2).occupancy(16).turn_in(2).with(kLaneTurn | kSplitTop);
    return launch_tile_config<T, V, pair.code()>(a, stream, device);
  } else {
    if (a.log_n != LOG_N) return launch_tile<T, V, K, LOG_N + 1>(a, stream, device);
    constexpr int local = ilog2(V) + 5 + ilog2(K);
    constexpr bool fits_one_block = LOG_N <= local + 5;  // at most 32 warps
    // Configurations measured on H200 with bench/fwt_sweep.cu (bench/DECISIONS.md, fwt): values per
    // thread (K, 2K or 4K vectors of 16 bytes), the register cap (warps per SM), the input stages and
    // the corner turn's passes.
    if constexpr (sizeof(T) == 2) {
      // 16-bit rows: the element rate is twice float32's. Rows up to 2^11 load directly (2^11: 64
      // values per thread, 80 registers, 25 warps per SM). Hopper's 2^12-2^15 below; elsewhere 2^12
      // as 2^11 with 128 registers, and from 2^13 the inputs in flight through cp.async stages and
      // the lane turn (no shuffles).
      if constexpr (LOG_N <= 10) {
        return launch_tile_config<T, V, tile_shape(K, LOG_N).occupancy(32).code()>(a, stream, device);
      } else if constexpr (LOG_N == 11) {
        return launch_tile_config<T, V, tile_shape(2 * K, LOG_N).occupancy(24).code()>(a, stream, device);
      } else {
        // On Hopper (compute capability 9.0, where these were measured): 2^12 and 2^14 with 64
        // values per thread, loaded directly, and the chained tensor-core stages (no shuffles); 2^12
        // at 128 registers (16 warps per SM), 2^14 at 80, so three 8-warp blocks share an SM (3 x
        // 64 KB of corner-turn buffers). 2^13 and 2^15 as split rows of the single-exchange kernel
        // (fwt_single_exchange.cuh), a block per row; 2^15 stores straight from registers.
        if constexpr (LOG_N == 12 || LOG_N == 14) {
          constexpr TileShape chained = tile_shape(2 * K, LOG_N).occupancy(LOG_N == 14 ? 24 : 16).with(kChainedMma);
          if (hopper_or_newer(device)) return launch_tile_config<T, V, chained.code()>(a, stream, device);
        }
        if constexpr (LOG_N == 13 || LOG_N == 15) {
          constexpr bool kSplit = true, kDirectStores = LOG_N == 15;
          if (hopper_or_newer(device)) {
            if (a.order != 0) return false;
            launch_single_exchange<T, LOG_N, 1, kSplit, kDirectStores>(a, stream, device);
            return true;
          }
        }
        if constexpr (LOG_N == 12) {
          return launch_tile_config<T, V, tile_shape(2 * K, LOG_N).occupancy(16).code()>(a, stream, device);
        } else {  // 128 values per thread (one corner turn fewer), the turn in two passes
          constexpr TileShape staged = tile_shape(4 * K, LOG_N).staged(2).turn_in(2).with(kLaneTurn);
          return launch_tile_config<T, V, staged.code()>(a, stream, device);
        }
      }
    } else if constexpr ((sizeof(T) == 4 && LOG_N == 15) || (sizeof(T) == 8 && LOG_N == 14)) {
      // float32 rows of 2^15 and float64 rows of 2^14: split in halves of 64 KB (SPLIT_TOP), 64 (32)
      // values per thread, the lane turn, the corner turn in two passes, two 8-warp blocks per SM.
      constexpr TileShape split = tile_shape(2 * K, LOG_N).occupancy(16).turn_in(2).with(kLaneTurn | kSplitTop);
      return launch_tile_config<T, V, split.code()>(a, stream, device);
    } else if constexpr (LOG_N == 14) {
      // float32 rows of 2^14: 64 values per thread (one corner turn fewer) and the lane turn.
      return launch_tile_config<T, V, tile_shape(2 * K, LOG_N).with(kLaneTurn).code()>(a, stream, device);
    } else if constexpr (sizeof(T) == 4 && LOG_N <= 9) {
      // float32 rows that fit one warp with 16 values per thread: 2 KB per one-warp block.
      return launch_tile_config<T, V, tile_shape(K / 2, LOG_N).occupancy(32).code()>(a, stream, device);
    } else if constexpr (fits_one_block) {
      return launch_tile_config<T, V, tile_shape(K, LOG_N).occupancy(32).code()>(a, stream, device);
    } else {
      raise<UnsupportedError>("fwt: N = 2^", LOG_N, " of this dtype needs thread-block clusters (compute capability 9.0)");
    }
  }
}

// Vector path when both pointers are 16-byte aligned and every row start is too, and each vector
// lies inside one row (or the rows are packed back to back and the total is a whole number of vectors).
inline bool can_vectorize(const FwtPlan& p, int elems_per_vec) {
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(p.dtype));
  if (!aligned16(p.x) || !aligned16(p.y)) return false;
  const std::int64_t n = std::int64_t(1) << p.log_n;
  if (n >= elems_per_vec) {
    for (int d = 0; d < p.batch_ndim; ++d)
      if ((p.x_stride[d] * es) % 16 || (p.y_stride[d] * es) % 16) return false;
    return true;
  }
  const bool packed = p.batch_ndim == 0 || (p.batch_ndim == 1 && p.x_stride[0] == n && p.y_stride[0] == n);
  return packed && (p.rows * n) % elems_per_vec == 0;
}

/// Whether the register-tile kernel takes this plan (else the shared-memory fallback does).
inline bool uses_tile_kernel(const FwtPlan& p) {
  return p.batch_ndim <= 1 && can_vectorize(p, 16 / static_cast<int>(dtype_size(p.dtype)));
}

/// Vectors of 16 bytes per thread that launch_tile's configurations are multiples of: 32 values in
/// registers (16 for float64).
template <class T>
constexpr int kTableVectors = sizeof(T) == 2 ? 4 : 8;

/// The dtype's launcher: the tile kernels on the fast path, else the fallback. False, launching
/// nothing, for an output order (p.order) the row kernel does not apply in its store.
template <class T>
bool launch_dtype(const FwtPlan& p, cudaStream_t stream) {
  const KernelArgs a = make_args(p);
  if (uses_tile_kernel(p)) return launch_tile<T, 16 / sizeof(T), kTableVectors<T>>(a, stream, p.device.id);
  if (a.order != 0) return false;
  launch_smem<T>(a, stream, p.device.id);
  return true;
}

}  // namespace ironkernels::detail::fwt_gpu
