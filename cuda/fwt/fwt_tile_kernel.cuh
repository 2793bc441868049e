#pragma once
// The FWT tile kernel, fwt_tile_kernel.
//
// One read and one write of global memory; the row lives in registers (the longest float32 and
// float64 rows half at a time: SPLIT_TOP). A block transforms a tile of 2^TILE_BITS elements: one
// row of N = 2^n (n = TILE_BITS) or several short rows (then the bits >= n are row bits). Each
// element's index bits are owned as
//   [0, v)            inside the thread's 16-byte vectors          (register butterflies)
//   [v, v+5)          the lane                                     (__shfl_xor_sync butterflies)
//   [v+5, v+5+h)      which of the thread's K vectors              (register butterflies)
//   [v+5+h, TILE)     the warp                                     (corner turns through shared memory)
// so every load and store instruction of a warp covers 512 contiguous bytes. A corner turn swaps up
// to h warp bits with the h register-vector bits (already transformed) through shared memory, then
// those bits are butterflied in registers; the low v+5 bits never move, so the final layout still
// stores 512-byte segments. The per-bit stages commute, so their order does not change H_N.
// Shared memory is written and read as 16-byte vectors at 512-byte contiguous runs per warp:
// conflict-free without swizzling. The one exception is the lane turn (LANE_TURN, where it won):
// lane bits [v+2, v+5) trade places with three register bits inside each warp, so lanes then hold
// 64-byte runs, and both shared-memory exchanges XOR one address bit to stay conflict-free; the
// corner turn after it gives the lanes their loaded bits back.
//
// N is a template parameter (every stage and address weight is a compile-time constant). 16-bit
// rows do their first four stages on the tensor cores (HadamardMma), or (CHAINED_MMA, Hopper's
// 2^12 and 2^14) seven of their first eight in two chained mma stages (ChainedHadamardMma), which
// leaves the lanes no bits to shuffle. Off Hopper, 16-bit rows from 2^13 run on a resident grid
// whose next tiles' inputs are already in flight to shared memory (cp.async) and leave through bulk
// stores (cp.async.bulk, sm_90+). On Hopper 16-bit rows of 2^13 and 2^15 take fwt_single_exchange.cuh
// (see launch_tile). Float32 rows of 2^15 and float64 rows of 2^14 are split in halves (SPLIT_TOP): half
// a row in registers at a time, the other half in shared memory, two blocks per SM; rows of 256 KB
// (8-byte 2^15, 4-byte 2^16) the same on each of a pair of CTAs (CLUSTER = 2), the top two bits
// through distributed shared memory.
// Rows the vector path cannot take (misaligned, odd strides, batches that do not collapse to one
// stride) go to fwt_smem_kernel. bench/DECISIONS.md (fwt) has the measurements behind each choice;
// bench/fwt_sweep.cu re-measures the configurations on another GPU.
#include <cuda_runtime.h>

#include <cstdint>

#include "common/ptx.cuh"
#include "fwt/fwt_budgets.cuh"
#include "fwt/fwt_layouts.cuh"
#include "fwt/fwt_mma_stages.cuh"
#include "fwt/fwt_values.cuh"

namespace ironkernels::detail::fwt_gpu {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr bool kBulkCopyArch = false;  // cp.async.bulk (sm_90+); older GPUs store the same kernels' rows directly
#else
constexpr bool kBulkCopyArch = true;
#endif

// ------------------------------------------------------------------ bulk stores (sm_90+)
// A whole row leaves shared memory for global memory in one cp.async.bulk (the TMA engine), so the
// warps go on to the next row instead of queueing 16-byte stores behind the memory system. With
// kEvictFirst the lines are marked evict-first in L2, as the streaming stores are.
template <bool kEvictFirst>
__device__ __forceinline__ void bulk_store(void* dst, const void* src, unsigned bytes) {
  if constexpr (kEvictFirst) ptx::cp_async_bulk_shared_to_global(dst, src, bytes, ptx::create_policy_evict_first());
  else ptx::cp_async_bulk_shared_to_global(dst, src, bytes);
  ptx::cp_async_bulk_commit();
}
// Waits until the bulk copies committed by this thread have read their shared memory (kReadOnly)
// or have completed.
template <bool kReadOnly>
__device__ __forceinline__ void bulk_wait() {
  if constexpr (kReadOnly) ptx::cp_async_bulk_wait_read();
  else ptx::cp_async_bulk_wait();
}

// The row (or the rows) of a tile of 2^TILE_BITS elements. LOG_N is a template parameter so that
// every stage, bit position and address weight is a compile-time constant: no run-time branches
// (and the register moves they force) between the butterflies.
// CLUSTER = 2 (Hopper, with SPLIT_TOP): a row is split over a pair of CTAs of one thread-block
// cluster, each holding 2^(LOG_N - 1) contiguous elements as two halves; the top two bits are
// butterflied with the partner's values read from distributed shared memory (the pair's epilogue).
// STAGES > 0: a resident grid loops over the tiles, with the next STAGES tiles' inputs in flight
// to shared memory (cp.async) while it transforms the current one; STAGES = 0 loads directly.
// TURN_PASSES = 2 (one corner turn with a register bit it does not move): the turn runs in two
// passes, over the values with that bit 0 and then 1, through half the shared memory, which leaves
// room for input stages or a second block.
// OPTIONS, or-ed TileOption flags:
// kBulkStore (BULK_STORE; one row per tile, sm_90+): the row's outputs are written to the corner-turn buffer
// in memory order and leave in one bulk copy, whose read of shared memory is awaited only before
// the next tile's turn.
// kLaneTurn (LANE_TURN; rows that fill K >= 8 vectors of a warp): the three lane / 4 bits are swapped with
// three register bits through a warp-private shared-memory buffer (layout 0 of Layout), so they are
// butterflied in registers: two 16-byte shared accesses per 4 values instead of a shuffle and an
// FMA per value and bit.
// kChainedMma (CHAINED_MMA; 16-bit rows of >= 2^8, stored directly): logical bits 0 and 2-7 in two chained
// tensor-core stages (ChainedHadamardMma), so no lane bit is left to shuffle; the values leave in a permuted lane
// order (ChainedMmaLayout::lane_slot), each warp store still one 512-byte segment.
// kSplitTop (SPLIT_TOP; one row per block, loaded and stored directly): the block holds half its row in
// registers at a time. The second half's inputs go to shared memory (cp.async) while the first half
// is transformed as a row of 2^(LOG_N-1); then that result is parked there in their place, the second
// half transformed the same way, and the row's top bit butterflied as both halves leave. Half the
// registers per row let two blocks share an SM, each with its own loads and stores in flight. Its
// lane turns use the corner turn's bytes (a barrier between them), so the two blocks still fit.
template <class T, int V, int K, int LOG_N, int CLUSTER, int OCC_WARPS, int STAGES, int TURN_PASSES = 1,
          unsigned OPTIONS = 0>
__global__ void __launch_bounds__(32 * tile_warps(ilog2(V), ilog2(K), LOG_N - has(OPTIONS, kSplitTop) - ilog2(CLUSTER)),
                                  min_blocks(tile_warps(ilog2(V), ilog2(K), LOG_N - has(OPTIONS, kSplitTop) - ilog2(CLUSTER)),
                                             OCC_WARPS))
    fwt_tile_kernel(const KernelArgs a) {
  constexpr bool BULK_STORE = has(OPTIONS, kBulkStore), LANE_TURN = has(OPTIONS, kLaneTurn);
  constexpr bool CHAINED_MMA = has(OPTIONS, kChainedMma), SPLIT_TOP = has(OPTIONS, kSplitTop);
  using C = typename Compute<T>::type;
  constexpr int v = ilog2(V), h = ilog2(K), c_bits = ilog2(CLUSTER);
  constexpr int LOG_SUB = LOG_N - (SPLIT_TOP ? 1 : 0);
  constexpr int kN = LOG_SUB - c_bits;  // transform bits held in one CTA's registers at a time
  constexpr int WARPS = tile_warps(v, h, kN), w = ilog2(WARPS);
  [[maybe_unused]] constexpr int kThreads = 32 * WARPS;
  constexpr int kTileBits = v + 5 + h + w;
  static_assert(CLUSTER == 1 || (CLUSTER == 2 && SPLIT_TOP && kTileBits == kN), "a pair of CTAs holds exactly one split row");
  static_assert(STAGES >= 0 && (STAGES == 0 || CLUSTER == 1), "cluster kernels load directly");
  static_assert(TURN_PASSES == 1 || (TURN_PASSES == 2 && kN > v + 5 + h && w < h),
                "two turn passes need one corner turn with a register bit it does not move");
  static_assert(!SPLIT_TOP || (CLUSTER <= 2 && kTileBits == kN && !BULK_STORE && STAGES == 0),
                "a split row is one block's (or a pair's), loaded and stored directly");
  static_assert(!BULK_STORE || (CLUSTER == 1 && kTileBits == kN &&
                                (int(sizeof(T)) << kN) <= turn_smem_bytes<T, V, K, LOG_N, 1, TURN_PASSES>()),
                "a bulk store takes one row per tile, staged in the corner-turn buffer");
  constexpr bool kBulkStore = BULK_STORE && kBulkCopyArch;
  // Configurations that apply an output order in their store (the others leave it to the order pass).
  constexpr bool kOrderedStore = tile_orders_in_store(CLUSTER, STAGES, OPTIONS);
  constexpr int m = lane_turn_bits(LANE_TURN, h);
  static_assert(!LANE_TURN || (m > 0 && kN >= v + 5 + h && (TURN_PASSES == 1 || m < h)),
                "a lane turn needs 8 vectors per thread inside one row, and keeps the turn's pass bit");
  using L = Layout<v, h, w, m>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  C* smem = reinterpret_cast<C*>(smem_raw);

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int rank = CLUSTER > 1 ? int(blockIdx.x % CLUSTER) : 0;  // 1-D clusters: consecutive blocks
  constexpr bool kSplit = SPLIT_TOP;
  constexpr int kCtaBits = kN + (kSplit ? 1 : 0);  // a cluster's CTA holds 2^kCtaBits contiguous elements of the row
  constexpr bool kStaged = STAGES > 0;
  constexpr bool kEvictFirstStores = evict_first_stores<T>(LOG_N);
  constexpr int kRowsLog = kTileBits - kN;  // rows per tile, log2
  std::int64_t tile = blockIdx.x / CLUSTER;
  const T* __restrict__ x = static_cast<const T*>(a.x);
  T* __restrict__ y = static_cast<T*>(a.y);
  constexpr std::integral_constant<int, -1> kLoadLayout{};

  // Tile index of register vector j in layout t (see Layout: -1 loaded, then after each turn).
  auto tile_index = [&](auto t_const, int j) { return L::template index<decltype(t_const)::value>(lane, warp, j); };

  // Rows are a uniform stride apart (the launcher sends other batches to the fallback), so the
  // memory offset of a tile index is linear in its bits: bit p weighs 2^p inside a row and
  // 2^(p-n)·stride above. Each layout needs one per-thread base plus h per-register-bit weights.
  const std::int64_t xs = a.batch_ndim ? a.xs[0] : 0, ys = a.batch_ndim ? a.ys[0] : 0;
  auto weight = [&](int p, std::int64_t stride) -> std::int64_t {
    return p < kN ? std::int64_t(1) << p : stride << (p - kN);
  };
  // The thread's offset inside a tile (row 0 of the tile at offset 0) in the layout after t turns:
  // the sum of weight(p) over the set bits p of its lane and warp bits, i.e. the in-row part of its
  // tile index plus its row part times the stride (a few instructions instead of one conditional
  // 64-bit add per bit). Computed once, since the tile loop only adds row0 · stride.
  auto thread_base = [&](auto t_const, std::int64_t stride) {
    const int idx = tile_index(t_const, 0);  // register bits zero
    return (std::int64_t(rank) << kCtaBits) + (idx & ((1 << kN) - 1)) + std::int64_t(idx >> kN) * stride;
  };
  // Full tiles (all but possibly the last) skip the per-vector row check.
  auto in_tile = [&](std::int64_t r0, bool full, auto t_const, int j) {
    return full || r0 + (tile_index(t_const, j) >> kN) < a.rows;
  };
  auto is_full = [&](std::int64_t r0) { return r0 + (std::int64_t(1) << kRowsLog) <= a.rows; };
  // The offset of register vector j from the thread's base in the layout after t turns.
  auto vector_offset = [&](auto t_const, int j, std::int64_t stride) {
    constexpr int t = decltype(t_const)::value;
    std::int64_t off = 0;
#pragma unroll
    for (int s = 0; s < h; ++s)
      if ((j >> s) & 1) off += weight(L::reg_pos(t, s), stride);
    return off;
  };
  auto load_offset = [&](int j) { return vector_offset(kLoadLayout, j, xs); };
  constexpr int kTurns = kN > v + 5 + h ? turns_needed<v, h, w>() : 0;  // corner turns (warp bits)
  const std::int64_t x_base = thread_base(kLoadLayout, xs);
  const std::int64_t y_base = thread_base(std::integral_constant<int, kTurns>{}, ys);
  // Input vector j of the tile at row r0, raw, straight from global memory (zeros past the rows).
  auto global_vector = [&](std::int64_t r0, bool full, int j) {
    return in_tile(r0, full, kLoadLayout, j)
               ? VecIO<T, V>::load_raw(x + (r0 * xs + x_base) + load_offset(j))
               : make_uint4(0, 0, 0, 0);
  };

  // 16-bit rows of >= 32 elements: logical bits {0, 2, 3, 4} on the tensor cores (the row must
  // hold all four bits, or the mma would mix rows).
  constexpr bool kMma = sizeof(T) == 2 && kTensorCoreArch && kN >= 5;
  // CHAINED_MMA: logical bits 0 and 2-7 (the row must hold them) on the tensor cores, in two stages.
  constexpr bool kChained = CHAINED_MMA && kMma;
  static_assert(!CHAINED_MMA || (sizeof(T) == 2 && kN >= 8 && m == 0 && !BULK_STORE && CLUSTER == 1),
                "chained tensor-core stages: 16-bit rows of >= 256 elements, no lane turn, direct stores");
  [[maybe_unused]] const std::conditional_t<kChained, ChainedHadamardMma<T>, HadamardMma<T>> hadamard_mma(lane);
  auto done_by_mma = [&](int bit) { return kMma && (bit == 0 || bit == 2 || bit == v || bit == v + 1); };
  auto to_compute = [&](const uint4& q, C(&o)[V]) {
    if constexpr (kMma) {
      hadamard_mma.apply(q, o);
    } else {
      VecIO<T, V>::unpack(q, o);
    }
  };

  // Staged inputs: slot (stage, j) of this thread; only this thread writes and reads it.
  constexpr int kStagedVecs = staged_vectors<T, V, K, LOG_SUB, STAGES, TURN_PASSES, LANE_TURN>();
  [[maybe_unused]] uint4* const stages =
      reinterpret_cast<uint4*>(smem_raw + exchange_smem_bytes<T, V, K, LOG_SUB, CLUSTER, TURN_PASSES, LANE_TURN, kSplit>());
  auto staged_slot = [&](int s, int j) { return stages + (s * kStagedVecs + j) * kThreads + int(threadIdx.x); };
  auto stage_tile = [&](std::int64_t t, int s) {
    if (t < a.tiles) {
      const std::int64_t r0 = t << kRowsLog;
      const bool full = is_full(r0);
      const T* xt = x + (r0 * xs + x_base);
#pragma unroll
      for (int j = 0; j < kStagedVecs; ++j) {
        const bool valid = in_tile(r0, full, kLoadLayout, j);
        ptx::cp_async_16(staged_slot(s, j), valid ? xt + load_offset(j) : x, valid);
      }
    }
    ptx::cp_async_commit();  // an empty group past the last tile keeps the count
  };
  if constexpr (kStaged) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) stage_tile(tile + std::int64_t(s) * gridDim.x, s);
  }
  [[maybe_unused]] int stage = 0;

  constexpr int kChunk = 16 / sizeof(C);  // compute-type elements per 16-byte shared access
  constexpr int kChunks = V / kChunk > 0 ? V / kChunk : 1;
  constexpr int kChunkLen = V < kChunk ? V : kChunk;

  // SPLIT_TOP: this thread's slots (SplitSlots) first hold the raw second half of its row as loaded
  // (cp.async), then the first half's transform.
  [[maybe_unused]] uint4* const park = stages;  // after the exchange buffers, as the stages otherwise
  using Split = SplitSlots<K, kChunks>;
  auto park_slot = [&](int j, int c) { return park + Split::park(j, c, kThreads, int(threadIdx.x)); };
  auto top_slot = [&](int j) { return park + Split::raw(j, kThreads, int(threadIdx.x)); };
  if constexpr (kSplit) {  // in flight while the first half is transformed
    const T* xt = x + (tile * xs + x_base + (std::int64_t(1) << kN));
#pragma unroll
    for (int j = 0; j < K; ++j) ptx::cp_async_16(top_slot(j), xt + load_offset(j), true);
    ptx::cp_async_commit();
  }

  // The butterflies of one tile (or one half of a split row) held in r: the bits inside the vectors,
  // across a thread's vectors, across its lanes, and across the warps by corner turns.
  auto transform = [&](C(&r)[K][V]) {
    // Bits inside the vectors.
    if constexpr (kChained) {
      butterfly_value_bit(r, 2);  // logical 1 (ChainedHadamardMma's register layout)
    } else {
#pragma unroll
      for (int b = 0; b < v && b < kN; ++b)
        if (!done_by_mma(b) && b >= a.skip_low_bits) butterfly_value_bit(r, b);
    }
    // Bits across the thread's vectors.
#pragma unroll
    for (int s = 0; s < h && v + 5 + s < kN; ++s) butterfly_vector_bit(r, s);
    // Lane bits by shuffles (those the tensor cores and the lane turn leave; none after the chained stages).
    if constexpr (!kChained) {
#pragma unroll
      for (int b = 0; b < 5 && v + b < kN; ++b)
        if (!done_by_mma(v + b) && !(b >= L::kLaneTurnLow && b < L::kLaneTurnLow + m)) butterfly_lane_bit(r, lane, b);
    }

    // Warp bits: corner turns through shared memory (only when a row spans several warps).
    // Two passes: register bit h - 1 is not moved by the (single) turn, so its logical bit is the
    // same before and after; each pass holds the elements with that bit fixed, indexed without it.
    using Turn = TurnBuffer<L, TURN_PASSES, kChunkLen>;
    auto smem_at = [&](auto t_const, int j, int c) { return Turn::template offset<decltype(t_const)::value>(lane, warp, j, c); };

    if constexpr (m > 0) {
      // Lane turn: one round per (higher register bits, 16-byte chunk), 2^m vectors of 16 bytes per
      // lane through this warp's buffer (slots: LaneTurnSlots).
      static_assert(m == 3, "LaneTurnSlots holds 8 rows of 8 slots per lane quad");
      // A split row's lane turns use the corner turn's bytes (its shared memory holds two blocks per SM).
      C* const buf = reinterpret_cast<C*>(smem_raw + (kSplit ? 0 : turn_smem_bytes<T, V, K, LOG_SUB, CLUSTER, TURN_PASSES>())) +
                     warp * ((32 << m) * kChunkLen);
#pragma unroll
      for (int hi = 0; hi < (K >> m); ++hi)
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
          __syncwarp();  // the previous round's reads are done
#pragma unroll
          for (int jl = 0; jl < (1 << m); ++jl)
#pragma unroll
            for (int e = 0; e < kChunkLen; ++e)
              buf[LaneTurnSlots::write(lane, jl) * kChunkLen + e] = r[(hi << m) | jl][c * kChunkLen + e];
          __syncwarp();
#pragma unroll
          for (int jl = 0; jl < (1 << m); ++jl)
#pragma unroll
            for (int e = 0; e < kChunkLen; ++e)
              r[(hi << m) | jl][c * kChunkLen + e] = buf[LaneTurnSlots::read(lane, jl) * kChunkLen + e];
        }
#pragma unroll
      for (int s = 0; s < m; ++s) butterfly_vector_bit(r, s);
    }
    auto turn = [&](auto t_const) {
      constexpr int t = decltype(t_const)::value;
#pragma unroll
      for (int pass = 0; pass < TURN_PASSES; ++pass) {
        auto in_pass = [&](int j) { return TURN_PASSES == 1 || ((j >> (h - 1)) & 1) == pass; };
        if (t > 0 || pass > 0) {
          __syncthreads();  // the previous turn's (pass's) reads are done
        } else if constexpr (kBulkStore) {
          if (threadIdx.x == 0) bulk_wait<true>();  // the previous row's bulk store has read the buffer
          __syncthreads();
        } else if constexpr (kSplit && m > 0) {
          __syncthreads();  // every warp's lane-turn reads of these bytes are done
        }
        // Every value of this pass, as (register vector j, 16-byte chunk c, element e).
        auto for_pass_values = [&](auto&& f) {
#pragma unroll
          for (int j = 0; j < K; ++j) {
            if (!in_pass(j)) continue;
#pragma unroll
            for (int c = 0; c < kChunks; ++c)
#pragma unroll
              for (int e = 0; e < kChunkLen; ++e) f(j, c, e);
          }
        };
        for_pass_values([&](int j, int c, int e) {
          smem[smem_at(std::integral_constant<int, t>{}, j, c) + e] = r[j][c * kChunkLen + e];
        });
        __syncthreads();
        for_pass_values([&](int j, int c, int e) {
          r[j][c * kChunkLen + e] = smem[smem_at(std::integral_constant<int, t + 1>{}, j, c) + e];
        });
      }
#pragma unroll
      for (int s = 0; s < h && t * h + s < w; ++s) butterfly_vector_bit(r, s);
    };
    if constexpr (kTurns > 0) turn(std::integral_constant<int, 0>{});
    if constexpr (kTurns > 1) turn(std::integral_constant<int, 1>{});
    if constexpr (kTurns > 2) turn(std::integral_constant<int, 2>{});
    if constexpr (kTurns > 3) turn(std::integral_constant<int, 3>{});
    if constexpr (kTurns > 4) turn(std::integral_constant<int, 4>{});
  };

  // The thread's store offset in a tile (chained: logical 3-7 sit on lane bits (3, 4, 2, 0, 1)
  // instead of 0-4, see store_vector).
  const std::int64_t y_thread = y_base + (kChained ? (ChainedMmaLayout::lane_slot(lane) - lane) << v : 0);
  [[maybe_unused]] const bool lane_bit2 = (lane >> 2) & 1;
  // Stores register vector j (final layout) at yt, the thread's address in its tile, unless it lies past the rows.
  auto store_vector = [&](T* yt, int j, const C(&vals)[V], std::int64_t row0, bool full_tile) {
    constexpr int t = kTurns;
    const std::int64_t off = vector_offset(std::integral_constant<int, t>{}, j, ys);
    if constexpr (kChained) {
      // Pairs over logical 0 (registers i = 0/2 and 1/3), then logical 5 (which pair) swapped with
      // logical 2 (lane bit 2) by one shuffle per two packed registers, outside the row check (the
      // same for the whole warp: kN >= 8).
      std::uint32_t w2[2][2];  // [logical 1][logical 2]
#pragma unroll
      for (int f = 0; f < 2; ++f) {
        const std::uint32_t p0 = pack_two<T>(vals[4 * f], vals[4 * f + 2]);
        const std::uint32_t p1 = pack_two<T>(vals[4 * f + 1], vals[4 * f + 3]);
        const std::uint32_t recv = __shfl_xor_sync(0xffffffffu, lane_bit2 ? p0 : p1, 4);
        w2[f][0] = lane_bit2 ? recv : p0;
        w2[f][1] = lane_bit2 ? p1 : recv;
      }
      if (in_tile(row0, full_tile, std::integral_constant<int, t>{}, j))
        store16<kEvictFirstStores>(yt + off, make_uint4(w2[0][0], w2[1][0], w2[0][1], w2[1][1]));
    } else if (in_tile(row0, full_tile, std::integral_constant<int, t>{}, j)) {
      VecIO<T, V>::template store<kEvictFirstStores>(yt + off, vals);
    }
  };

  // Sequency or dyadic order (a.order): the tile's values permuted through shared memory (a tile
  // of the compute type, which launch_tile_config adds) before the stores, so that each register
  // vector holds the outputs at its memory positions. Natural in-tile index i goes to pos(i): the
  // row bits and the skipped low bits kept, the others σ⁻¹ (inverse_order_index), which is linear
  // over GF(2), so pos of a value is the xor of pos of its thread's base, of its register bits and
  // of its element. Positions are xor-swizzled (phys: bits 0-4 with 5-9) against the bank
  // conflicts of bit-reversed writes, so vectors are read back value by value.
  [[maybe_unused]] auto to_output_order = [&](C(&r)[K][V]) {
    const bool sequency = a.order == int(FwtOrder::sequency);
    const int skip = a.skip_low_bits;
    auto pos = [&](int i) {
      constexpr int kRowMask = (1 << kN) - 1;
      const int low = (1 << skip) - 1;
      return (i & ~kRowMask) | (i & low) |
             int(inverse_order_index(std::uint32_t(i & kRowMask) >> skip, kN - skip, sequency) << skip);
    };
    auto phys = [](int p) { return p ^ ((p >> 5) & 31); };
    constexpr std::integral_constant<int, kTurns> kFinal{};
    const int base = pos(tile_index(kFinal, 0));
    int element_pos[V];
#pragma unroll
    for (int e = 0; e < V; ++e) element_pos[e] = pos(e);
    __syncthreads();  // every turn's shared reads are done
#pragma unroll
    for (int j = 0; j < K; ++j) {
      int reg_bits = 0;
#pragma unroll
      for (int s = 0; s < h; ++s)
        if ((j >> s) & 1) reg_bits |= 1 << L::reg_pos(kTurns, s);
      const int vector_pos = base ^ pos(reg_bits);
#pragma unroll
      for (int e = 0; e < V; ++e) smem[phys(vector_pos ^ element_pos[e])] = r[j][e];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const int first = phys(tile_index(kFinal, j));  // the vector's values at first ^ e (e < V <= 32)
#pragma unroll
      for (int e = 0; e < V; ++e) r[j][e] = smem[first ^ e];
    }
  };

  for (;;) {
  const std::int64_t row0 = tile << kRowsLog;
  const bool full_tile = is_full(row0);
  C r[K][V];
  if constexpr (kStaged) {
    ptx::cp_async_wait<STAGES - 1>();
#pragma unroll
    for (int j = 0; j < kStagedVecs; ++j) to_compute(*staged_slot(stage, j), r[j]);
    // Refill the slots just read with the tile STAGES ahead: this thread's shared loads above are
    // issued before these copies, and no other thread touches its slots, so no barrier is needed.
    stage_tile(tile + std::int64_t(STAGES) * gridDim.x, stage);
    stage = stage + 1 == STAGES ? 0 : stage + 1;
#pragma unroll
    for (int j = kStagedVecs; j < K; ++j) to_compute(global_vector(row0, full_tile, j), r[j]);
  } else {
    // All K loads are issued before any is used. With a per-vector row check (rows shorter than
    // the tile) the compiler otherwise interleaves load and use, one load in flight at a time.
    uint4 q[K];
    if (full_tile) {
      const T* xt = x + (row0 * xs + x_base);
#pragma unroll
      for (int j = 0; j < K; ++j) q[j] = VecIO<T, V>::load_raw(xt + load_offset(j));
    } else {
#pragma unroll
      for (int j = 0; j < K; ++j) q[j] = global_vector(row0, false, j);
    }
#pragma unroll
    for (int j = 0; j < K; ++j) to_compute(q[j], r[j]);
  }

  transform(r);
  if constexpr (kSplit) {
    // The first half is done: park it in this thread's slots, over the second half's raw vectors,
    // which take its place in registers.
    ptx::cp_async_wait<0>();
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const uint4 raw = *top_slot(j);
#pragma unroll
      for (int c = 0; c < kChunks; ++c) *park_slot(j, c) = chunk_bits(r[j] + c * kChunkLen);
      to_compute(raw, r[j]);
    }
    // A pair's partner reads these parked values (after the pair's epilogue waits on this arrive).
    if constexpr (CLUSTER == 2) ptx::cluster_arrive_release();
    if constexpr (kTurns > 0) __syncthreads();  // every warp has read the first half's last turn
    transform(r);
  }

  if constexpr (!kSplit) scale_held(r, a);
  // A split row's values are scaled one by one as they leave (scale_held per vector changed these
  // kernels' register allocation).
  [[maybe_unused]] auto scale_out = [&](auto&... values) {
    if (a.scaled) {
      if constexpr (std::is_integral_v<C>) ((values *= C(a.int_scale)), ...);
      else ((values *= C(a.scale)), ...);
    }
  };
  if constexpr (kBulkStore) {
    T* row = reinterpret_cast<T*>(smem_raw);
    __syncthreads();  // every thread's turn reads are done
#pragma unroll
    for (int j = 0; j < K; ++j)
      VecIO<T, V>::template store<false>(row + tile_index(std::integral_constant<int, kTurns>{}, j), r[j]);
    ptx::fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) bulk_store<kEvictFirstStores>(y + row0 * ys, row, unsigned(sizeof(T)) << kN);
  } else if constexpr (kSplit && CLUSTER == 2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // A row over a pair of CTAs, each holding half of it as two halves of 2^kN: a (parked, its
    // arrive above) and b (in r). Thread t's slots in both CTAs hold the same in-CTA positions p,
    // whose four outputs y[p + 2^kN·h + 2^(kN+1)·q] are H_4 of (a0, b0, a1, b1), the rank-0 and
    // rank-1 values. Each CTA outputs the vectors j of its own parity: it reads the partner's a
    // of them remotely and refills those slots with its own b of the partner's parity; after the
    // second cluster barrier its own slots of vector j ^ 1 hold the partner's b of vector j. The
    // first barrier was arrived at when a was parked, so its wait rarely waits; 32 KB read and
    // 32 KB written remotely per CTA and row, no CTA-wide barrier.
    ptx::cluster_wait_acquire();  // both CTAs' a is parked
    uint4* const partner_park = ptx::map_cluster_rank(park, rank ^ 1);
    T* const yt = y + (row0 * ys + y_thread - (std::int64_t(rank) << kCtaBits));
    // Vector j's slots in the parked area at `base` (this CTA's or the partner's).
    auto read_vector = [&](C(&o)[V], const uint4* base, int j) {
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        C part[kChunkLen];
        load_chunk(reinterpret_cast<const C*>(base + (park_slot(j, c) - park)), part);
#pragma unroll
        for (int e = 0; e < kChunkLen; ++e) o[c * kChunkLen + e] = part[e];
      }
    };
    // Which vectors a CTA outputs is a compile-time parity, so r stays in registers.
    auto outputs = [&](auto rank_const) {
      constexpr int kRank = decltype(rank_const)::value;
      C partner_a[K / 2][V];
#pragma unroll
      for (int i = 0; i < K / 2; ++i) {
        const int j = 2 * i + kRank;
        read_vector(partner_a[i], partner_park, j);
#pragma unroll
        for (int c = 0; c < kChunks; ++c) partner_park[park_slot(j, c) - park] = chunk_bits(r[j ^ 1] + c * kChunkLen);
      }
      ptx::cluster_sync();  // the partner's b of this parity is in this CTA's slots
#pragma unroll
      for (int i = 0; i < K / 2; ++i) {
        const int j = 2 * i + kRank;
        C own_a[V], partner_b[V];
        read_vector(own_a, park, j);
        read_vector(partner_b, park, j ^ 1);
        C(&a0)[V] = kRank == 0 ? own_a : partner_a[i];
        C(&b0)[V] = kRank == 0 ? r[j] : partner_b;
        C(&a1)[V] = kRank == 0 ? partner_a[i] : own_a;
        C(&b1)[V] = kRank == 0 ? partner_b : r[j];
#pragma unroll
        for (int e = 0; e < V; ++e) {
          bfly(a0[e], b0[e]);
          bfly(a1[e], b1[e]);
          bfly(a0[e], a1[e]);
          bfly(b0[e], b1[e]);
          scale_out(a0[e], a1[e], b0[e], b1[e]);
        }
        constexpr std::int64_t kHalf = std::int64_t(1) << kN;
        store_vector(yt, j, a0, row0, full_tile);
        store_vector(yt + kHalf, j, b0, row0, full_tile);
        store_vector(yt + 2 * kHalf, j, a1, row0, full_tile);
        store_vector(yt + 3 * kHalf, j, b1, row0, full_tile);
      }
    };
    if (rank == 0) outputs(std::integral_constant<int, 0>{});
    else outputs(std::integral_constant<int, 1>{});
#else
    __trap();  // cluster kernels are only launched on compute capability >= 9.0
#endif
  } else if constexpr (kSplit) {
    // Both halves leave together: bottom = parked + second, top = parked - second (the row's top bit).
    T* yt = y + (row0 * ys + y_thread);
#pragma unroll
    for (int j = 0; j < K; ++j) {
      C lo[V];
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        C parked[kChunkLen];
        load_chunk(reinterpret_cast<const C*>(park_slot(j, c)), parked);
#pragma unroll
        for (int e = 0; e < kChunkLen; ++e) lo[c * kChunkLen + e] = parked[e];
      }
#pragma unroll
      for (int e = 0; e < V; ++e) {
        bfly(lo[e], r[j][e]);
        scale_out(lo[e], r[j][e]);
      }
      store_vector(yt, j, lo, row0, full_tile);
      store_vector(yt + (std::int64_t(1) << kN), j, r[j], row0, full_tile);
    }
  } else {
    if constexpr (kOrderedStore) {
      if (a.order != 0) to_output_order(r);
    }
    T* yt = y + (row0 * ys + y_thread);
#pragma unroll
    for (int j = 0; j < K; ++j) store_vector(yt, j, r[j], row0, full_tile);
  }
  if constexpr (!kStaged) {
    break;
  } else {
    tile += gridDim.x;
    if (tile >= a.tiles) break;
    // This tile's shared-memory reads are done (a bulk store waits before the next turn instead).
    if constexpr (kTurns > 0 && !kBulkStore) __syncthreads();
  }
  }  // tile loop
  if constexpr (kBulkStore) {
    if (threadIdx.x == 0) bulk_wait<false>();  // the block's shared memory must outlive the last copy
  }
}

}  // namespace ironkernels::detail::fwt_gpu
