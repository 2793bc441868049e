#pragma once
// The CUDA FWT's launchers: one tile-kernel configuration (launch_tile_config), the single-exchange
// kernel (declared; fwt_single_exchange.cuh) and the shared-memory fallback, with the host-side
// caches and device limits they use. Which configuration runs is fwt_table.cuh's choice.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

#include "common/launch.cuh"
#include "common/ptx.cuh"
#include "core/cuda_check.hpp"
#include "core/dev_overrides.hpp"
#include "fwt/fwt_budgets.cuh"
#include "fwt/fwt_layouts.cuh"
#include "fwt/fwt_plan.hpp"
#include "fwt/fwt_smem_kernel.cuh"
#include "fwt/fwt_tile_kernel.cuh"
#include "fwt/fwt_values.cuh"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/fwt.hpp"

namespace ironkernels::detail::fwt_gpu {

// ------------------------------------------------------------------ host side
inline KernelArgs make_args(const FwtPlan& p) {
  KernelArgs a{};
  a.x = p.x;
  a.y = p.y;
  a.rows = p.rows;
  a.log_n = p.log_n;
  a.batch_ndim = p.batch_ndim;
  for (int d = 0; d < p.batch_ndim; ++d) {
    a.shape[d] = p.batch_shape[d];
    a.xs[d] = p.x_stride[d];
    a.ys[d] = p.y_stride[d];
  }
  a.x_axis_stride = p.x_axis_stride;
  a.y_axis_stride = p.y_axis_stride;
  a.scale = p.scale;
  a.int_scale = static_cast<std::uint64_t>(p.int_scale);
  a.scaled = p.scaled();
  a.skip_low_bits = p.skip_low_bits;
  a.order = static_cast<int>(p.order);
  return a;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// compute() once per key for the process (device attributes and occupancies do not change); each
// call site (a distinct lambda type) has its own cache.
template <class Key, class F>
auto once_per(const Key& key, F&& compute) {
  static std::mutex mutex;
  static std::map<Key, decltype(compute())> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(key);
  return it != known.end() ? it->second : known.emplace(key, compute()).first->second;
}

// Blocks of `kernel` that fit on the whole device at once (occupancy × SMs), per (kernel, device).
inline std::int64_t resident_blocks(const void* kernel, int threads, int smem, int device) {
  return once_per(std::make_pair(kernel, device), [&] {
    int per_sm = 0, sms = 0;
    IK_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    IK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return std::int64_t(per_sm > 0 ? per_sm : 1) * sms;
  });
}

// Blocks of a resident grid over `tiles` tiles: as many as fit on the device at once, at most one per tile.
inline std::int64_t resident_grid_blocks(const void* kernel, int threads, int smem, std::int64_t tiles, int device) {
  const std::int64_t resident = resident_blocks(kernel, threads, smem, device);
  return tiles < resident ? tiles : resident;
}
// `blocks` as a launch's grid size (at most 2^31 - 1 blocks), raised as too many rows otherwise.
inline unsigned grid_size(std::int64_t blocks, std::int64_t rows) {
  if (blocks > 0x7fffffff) raise<ValueError>("fwt: too many rows for one launch (", rows, ")");
  return static_cast<unsigned>(blocks);
}

// Shared memory one block may use on `device` (the opt-in maximum: 227 KB on sm_90, 163 KB on sm_80,
// 99 KB on sm_86/89), lowered by IRONKERNELS_FWT_MAX_SMEM (bytes) to test the fallback on a larger GPU.
// A host-side attribute read (no GPU work), asked only by the configurations above 99 KB: no cache.
inline int block_smem_limit(int device) {
  int limit = 0;
  IK_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const int cap = dev_override_int("IRONKERNELS_FWT_MAX_SMEM", 0);
  if (cap > 0 && cap < limit) limit = cap;
  return limit;
}
constexpr int kSmallestSmemLimit = 99 * 1024;  // sm_86/89; every configuration at most this large fits anywhere

// Compute capability 9.0 or newer: bulk copies (cp.async.bulk) and clusters, and the GPUs the
// table's Hopper configurations were measured on.
inline bool hopper_or_newer(int device) {
  return once_per(device, [&] {
    int major = 0;
    IK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    return major >= 9;
  });
}

// Thread-block clusters launch on `device` (compute capability 9.0 or newer).
inline bool cluster_launch_supported(int device) {
  return hopper_or_newer(device) && once_per(device, [&] {
           int cluster_launch = 0;
           IK_CUDA_CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device));
           return cluster_launch != 0;
         });
}

// A launch of `kernel(args)` in 1-D clusters of `cluster` consecutive blocks.
template <class Args>
void launch_on_clusters(void (*kernel)(Args), unsigned grid, unsigned threads, int smem, unsigned cluster,
                        cudaStream_t stream, const Args& args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = static_cast<std::size_t>(smem);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  IK_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args));
}

// One TileShape (as its code()): short rows pack several rows per block (kLocalWarps warps),
// long rows take one block (or one cluster) each, 2^(n - (v+5+h)) warps. STAGES > 0: a resident
// grid that loops over the tiles (see fwt_tile_kernel). False, launching nothing, for an output
// order (a.order) the configuration does not apply in its store (tile_orders_in_store), or whose
// tile in shared memory this GPU cannot give a block.
template <class T, int V, std::uint64_t SHAPE>
bool launch_tile_config(const KernelArgs& a, cudaStream_t stream, int device) {
  constexpr TileShape shape = TileShape::decode(SHAPE);
  constexpr int K = shape.k, LOG_N = shape.log_n, CLUSTER = shape.cluster, OCC_WARPS = shape.occupancy_warps;
  constexpr int STAGES = shape.stages, TURN_PASSES = shape.turn_passes;
  constexpr unsigned OPTIONS = shape.options;
  constexpr bool LANE_TURN = has(OPTIONS, kLaneTurn), SPLIT_TOP = has(OPTIONS, kSplitTop);
  constexpr int v = ilog2(V), h = ilog2(K), kN = LOG_N - (SPLIT_TOP ? 1 : 0) - ilog2(CLUSTER);
  constexpr int warps = tile_warps(v, h, kN), tile_bits = v + 5 + h + ilog2(warps);
  const std::int64_t rows_per_tile = std::int64_t(1) << (tile_bits - kN);
  KernelArgs args = a;
  args.tiles = (a.rows + rows_per_tile - 1) / rows_per_tile;
  constexpr int smem = tile_smem_bytes<T, V, K, LOG_N, CLUSTER, STAGES, TURN_PASSES, LANE_TURN, SPLIT_TOP>();
  static_assert(smem <= kMaxBlockSmem, "the configuration needs more shared memory than a block has");
  if constexpr (smem > kSmallestSmemLimit && CLUSTER == 1) {
    // A GPU with less shared memory per block takes the same row with 128 values per thread (64 for
    // float64), loaded directly, its corner turn in two passes: half the row's bytes (64 KB).
    constexpr int kCompactK = sizeof(T) == 8 ? 32 : 128 / V;
    static_assert(tile_smem_bytes<T, V, kCompactK, LOG_N, 1, 0, 2>() <= kSmallestSmemLimit);
    if (smem > block_smem_limit(device))
      return launch_tile_config<T, V, tile_shape(kCompactK, LOG_N).turn_in(2).code()>(a, stream, device);
  }
  int block_smem = smem;
  if (a.order != 0) {
    if constexpr (!tile_orders_in_store(CLUSTER, STAGES, OPTIONS)) {
      return false;
    } else {
      constexpr int tile_bytes = int(sizeof(typename Compute<T>::type)) << tile_bits;
      block_smem = smem > tile_bytes ? smem : tile_bytes;
      if (block_smem > block_smem_limit(device)) return false;
    }
  }
  auto kernel = fwt_tile_kernel<T, V, K, LOG_N, CLUSTER, OCC_WARPS, STAGES, TURN_PASSES, OPTIONS>;
  allow_smem(reinterpret_cast<const void*>(kernel), block_smem, device);
  std::int64_t blocks = args.tiles * CLUSTER;
  if constexpr (STAGES > 0) {
    blocks = resident_grid_blocks(reinterpret_cast<const void*>(kernel), 32 * warps, smem, blocks, device);
  }
  const unsigned grid = grid_size(blocks, a.rows);
  if constexpr (CLUSTER == 1) {
    kernel<<<grid, 32 * warps, block_smem, stream>>>(args);
    IK_CUDA_CHECK_LAUNCH("fwt_tile_kernel");
  } else {
    launch_on_clusters(kernel, grid, 32 * warps, smem, CLUSTER, stream, args);
  }
  return true;
}

// 16-bit rows with one float32 exchange (fwt_single_exchange.cuh, which the 16-bit kernel files include).
template <class T, int LOG_N, int STAGES, bool SPLIT_TOP, bool DIRECT_STORES>
void launch_single_exchange(const KernelArgs& a, cudaStream_t stream, int device);

template <class T>
void launch_smem(const KernelArgs& a, cudaStream_t stream, int device) {
  using C = typename Compute<T>::type;
  const int tile_bits = a.log_n > kSmemMinTileBits ? a.log_n : kSmemMinTileBits;
  const std::int64_t rows_per_tile = std::int64_t(1) << (tile_bits - a.log_n);
  const std::int64_t blocks = (a.rows + rows_per_tile - 1) / rows_per_tile;
  const int smem = int(sizeof(C)) << tile_bits;
  if (const int limit = block_smem_limit(device); smem > limit)
    raise<UnsupportedError>("fwt: a row of 2^", a.log_n, " that is not 16-byte aligned (or strided) needs ", smem / 1024,
                            " KB of shared memory per block on CUDA; this GPU has ", limit / 1024,
                            " KB: pass an aligned, contiguous array");
  allow_smem(reinterpret_cast<const void*>(fwt_smem_kernel<T>), smem, device);
  fwt_smem_kernel<T><<<grid_size(blocks, a.rows), kSmemThreads, smem, stream>>>(a, tile_bits);
  IK_CUDA_CHECK_LAUNCH("fwt_smem_kernel");
}

}  // namespace ironkernels::detail::fwt_gpu
