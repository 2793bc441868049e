#pragma once
// Block shapes and shared-memory budgets of the FWT tile kernels, at compile time: warps per block,
// the register cap for an occupancy, the corner-turn, exchange and staging bytes, and which row
// lengths store evict-first.
#include <cstdint>

#include "fwt/fwt_layouts.cuh"
#include "fwt/fwt_values.cuh"

namespace ironkernels::detail::fwt_gpu {

// What a tile configuration adds to the plain kernel (fwt_tile_kernel's OPTIONS), or-ed together;
// fwt_tile_kernel.cuh describes each.
enum TileOption : unsigned { kBulkStore = 1u, kLaneTurn = 2u, kChainedMma = 4u, kSplitTop = 8u };
constexpr bool has(unsigned options, TileOption o) { return (options & o) != 0; }

/// One configuration of the tile kernel, by name: `k` vectors of 16 bytes per thread, rows of
/// 2^log_n, `cluster` CTAs per row, a register cap that leaves room for `occupancy_warps` warps per SM
/// (0: none), `stages` cp.async input stages (0: loaded directly), the corner turn in `turn_passes`
/// passes, and TileOptions. Built as tile_shape(k, log_n).cluster_of(2).occupancy(16)...; a template
/// argument as its code() (C++17 has no class-type template parameters).
struct TileShape {
  int k = 1, log_n = 0, cluster = 1, occupancy_warps = 0, stages = 0, turn_passes = 1;
  unsigned options = 0;

  constexpr TileShape cluster_of(int ctas) const { return set(&TileShape::cluster, ctas); }
  constexpr TileShape occupancy(int warps) const { return set(&TileShape::occupancy_warps, warps); }
  constexpr TileShape staged(int count) const { return set(&TileShape::stages, count); }
  constexpr TileShape turn_in(int passes) const { return set(&TileShape::turn_passes, passes); }
  constexpr TileShape with(unsigned opts) const {
    TileShape s = *this;
    s.options |= opts;
    return s;
  }
  /// Eight bits a field (each below 256), the options in the top sixteen.
  constexpr std::uint64_t code() const {
    return std::uint64_t(k) | std::uint64_t(log_n) << 8 | std::uint64_t(cluster) << 16 |
           std::uint64_t(occupancy_warps) << 24 | std::uint64_t(stages) << 32 | std::uint64_t(turn_passes) << 40 |
           std::uint64_t(options) << 48;
  }
  static constexpr TileShape decode(std::uint64_t c) {
    TileShape s;
    s.k = int(c & 255), s.log_n = int(c >> 8 & 255), s.cluster = int(c >> 16 & 255);
    s.occupancy_warps = int(c >> 24 & 255), s.stages = int(c >> 32 & 255), s.turn_passes = int(c >> 40 & 255);
    s.options = unsigned(c >> 48);
    return s;
  }

 private:
  constexpr TileShape set(int TileShape::*field, int value) const {
    TileShape s = *this;
    s.*field = value;
    return s;
  }
};
constexpr TileShape tile_shape(int k, int log_n) {
  TileShape s;
  s.k = k, s.log_n = log_n;
  return s;
}

// Whether a tile configuration applies the sequency and dyadic orders as its tile leaves (through a
// tile of the compute type in shared memory): one CTA per tile, loaded directly, stored from
// registers in the plain layout.
constexpr bool tile_orders_in_store(int cluster, int stages, unsigned options) {
  return cluster == 1 && stages == 0 && !has(options, kSplitTop) && !has(options, kChainedMma) && !has(options, kBulkStore);
}

// Warps per block when rows fit one warp (several rows per warp): one, so that a finished warp's
// slot on the SM is refilled at once instead of waiting for the block's other warps (sweep on
// H200: one-warp rows +0.5-1.5% against 4 warps per block; bench/DECISIONS.md, fwt).
constexpr int kLocalWarps = 1;

// Resident blocks per SM of the architecture being compiled (a larger launch bound is ignored, with a
// ptxas warning): 16 on sm_86/87, 24 on sm_89, 32 elsewhere.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870)
constexpr int kMaxBlocksPerSm = 16;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 890
constexpr int kMaxBlocksPerSm = 24;
#else
constexpr int kMaxBlocksPerSm = 32;
#endif
// Blocks per SM the register allocation must leave room for, so that `occ_warps` warps fit on an SM
// (at most 65536 / (32·occ_warps) registers per thread: 64 for 32 warps, 128 for 16); 0 = no cap.
constexpr int min_blocks(int warps, int occ_warps) {
  const int blocks = occ_warps <= warps ? 1 : occ_warps / warps;
  return blocks < kMaxBlocksPerSm ? blocks : kMaxBlocksPerSm;
}

// Warps per CTA for rows of 2^n_cta elements with V-element vectors and K vectors per thread.
constexpr int tile_warps(int v, int h, int n_cta) {
  return n_cta <= v + 5 + h ? kLocalWarps : 1 << (n_cta - (v + 5 + h));
}

/// Shared memory for the corner turns of a tile configuration. A turn in
/// TURN_PASSES = 2 passes moves half the values at a time (see fwt_tile_kernel) through half the bytes.
template <class T, int V, int K, int LOG_N, int CLUSTER, int TURN_PASSES = 1>
constexpr int turn_smem_bytes() {
  using C = typename Compute<T>::type;
  constexpr int v = ilog2(V), h = ilog2(K), kN = LOG_N - ilog2(CLUSTER);
  constexpr int tile_bits = v + 5 + h + ilog2(tile_warps(v, h, kN));
  return kN > v + 5 + h ? (int(sizeof(C)) << tile_bits) / TURN_PASSES : 0;
}

// Input staging (STAGES > 0): every thread copies its own 16-byte input vectors of the next STAGES
// tiles into shared memory with cp.async, so the bytes in flight are bounded by shared memory, not
// by registers. Rows so long that the turn buffer plus whole stages exceed a block's shared memory
// stage only their first vectors per thread (the rest are loaded when the tile starts).
constexpr int kMaxBlockSmem = 227 * 1024;
/// The corner-turn buffer plus each warp's lane-turn buffer (one round: 2^m vectors of 16 bytes per
/// lane), or (LANE_TURN_IN_TURN) the larger of the two when the lane turn uses the corner turn's bytes.
template <class T, int V, int K, int LOG_N, int CLUSTER, int TURN_PASSES = 1, bool LANE_TURN = false,
          bool LANE_TURN_IN_TURN = false>
constexpr int exchange_smem_bytes() {
  const int warps = tile_warps(ilog2(V), ilog2(K), LOG_N - ilog2(CLUSTER));
  const int m = lane_turn_bits(LANE_TURN, ilog2(K));
  const int turn = turn_smem_bytes<T, V, K, LOG_N, CLUSTER, TURN_PASSES>(), lane = m > 0 ? warps * (32 << m) * 16 : 0;
  return LANE_TURN_IN_TURN ? (turn > lane ? turn : lane) : turn + lane;
}
template <class T, int V, int K, int LOG_N, int STAGES, int TURN_PASSES = 1, bool LANE_TURN = false>
constexpr int staged_vectors() {
  if (STAGES <= 0) return 0;
  const int threads = 32 * tile_warps(ilog2(V), ilog2(K), LOG_N);
  const int room = kMaxBlockSmem - exchange_smem_bytes<T, V, K, LOG_N, 1, TURN_PASSES, LANE_TURN>();
  int vectors = K;
  while (vectors > 0 && STAGES * vectors * threads * 16 > room) vectors /= 2;
  return vectors;
}

/// Dynamic shared memory of a tile configuration: corner turns, lane turns, input stages (SPLIT_TOP:
/// half the CTA's part of the row in the compute type instead of the stages).
template <class T, int V, int K, int LOG_N, int CLUSTER, int STAGES, int TURN_PASSES = 1, bool LANE_TURN = false,
          bool SPLIT_TOP = false>
constexpr int tile_smem_bytes() {
  if constexpr (SPLIT_TOP)
    return exchange_smem_bytes<T, V, K, LOG_N - 1, CLUSTER, TURN_PASSES, LANE_TURN, true>() +
           (int(sizeof(typename Compute<T>::type)) << (LOG_N - 1 - ilog2(CLUSTER)));
  const int threads = 32 * tile_warps(ilog2(V), ilog2(K), LOG_N - ilog2(CLUSTER));
  return exchange_smem_bytes<T, V, K, LOG_N, CLUSTER, TURN_PASSES, LANE_TURN>() +
         (STAGES > 0 ? STAGES * staged_vectors<T, V, K, LOG_N, STAGES, TURN_PASSES, LANE_TURN>() * threads * 16 : 0);
}

/// Streaming (evict-first) global stores, or plain ones, by row length; loads are always plain.
/// Measured with bench/bench_fwt.py on H200, each hint everywhere, the kernels otherwise the same:
/// streaming loads never helped (float32 2^13: 0.94 of clone against 0.97 plain); plain stores ran
/// the shorter rows at 0.97-0.99 of clone against 0.96-0.97, but were far slower for float32/float64
/// rows of 2^13-2^14 (float32 2^13: 0.71), 16-bit rows of 2^12 and 2^14-2^15, and float64 2^15.
template <class T>
constexpr bool evict_first_stores(int log_n) {
  if constexpr (sizeof(T) == 2) return log_n == 12 || log_n >= 14;
  else return log_n == 13 || log_n == 14 || (sizeof(T) == 8 && log_n == 15);
}

}  // namespace ironkernels::detail::fwt_gpu
