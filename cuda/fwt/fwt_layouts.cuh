#pragma once
// The FWT kernels' layouts as pure compile-time index algebra, host and device: which logical index
// bit each lane, register-vector and warp bit holds at every step, and where each value sits in the
// shared-memory exchanges. The kernels (fwt_tile_kernel.cuh, fwt_single_exchange.cuh) address with these;
// tests/cpp/test_fwt_layouts.cu checks them on the host (permutations, conflict-free accesses,
// whole 512-byte store segments, and the data flow computing the transform exactly).
namespace ironkernels::detail::fwt_gpu {

constexpr int ilog2(int x) { return x <= 1 ? 0 : 1 + ilog2(x / 2); }

// The chained tensor-core stages' permutations (ChainedHadamardMma in fwt_mma_stages.cuh).
struct ChainedMmaLayout {
  // Stage 1: output coordinate (in k bits) of D row m: k bit 0 <- m bit 3, k bit 3 <- m bit 0.
  __host__ __device__ static constexpr int sigma(int m) { return (m >> 3 & 1) | (m & 6) | (m & 1) << 3; }
  // Stage 2: output coordinate (in k' bits) of D column n': k' bit 2 <- n' bit 0, k' bits 0-1 <- n' bits 1-2.
  __host__ __device__ static constexpr int tau(int n) { return (n & 1) << 2 | n >> 1; }
  // Logical bits 3-7 of the vector a lane stores (they sit on lane bits 3, 4, 2, 0, 1).
  __host__ __device__ static constexpr int lane_slot(int lane) { return (lane >> 3 & 3) | (lane >> 2 & 1) << 2 | (lane & 3) << 3; }
};

// Logical bit position held by lane bit b / register-vector bit s / warp bit u. Layout t = -1 is the
// loaded one (lane bit b holds v + b, register bit s v + 5 + s, warp bit u v + 5 + h + u). Layout
// 0 follows the lane turn, if any (m > 0): lane bits [2, 2 + m) and register bits [0, m) swap places
// inside each warp. Layout t >= 1 follows corner turn t, which swaps warp bits [(t-1)*h, t*h) with
// register bits [0, h) and, after a lane turn, also gives the lanes back their loaded bits (a turn
// moves every value anyway): from layout 1 on, every layout is the one without a lane turn, so the
// final stores cover 512 contiguous bytes per warp instruction, as they do without one.
template <int v, int h, int w, int m = 0>
struct Layout {
  static constexpr int kV = v, kH = h, kW = w, kM = m;
  static constexpr int kLaneTurnLow = 2;  // the first lane bit the lane turn moves
  __host__ __device__ static constexpr int lane_pos(int t, int b) {
    return t == 0 && b >= kLaneTurnLow && b < kLaneTurnLow + m ? v + 5 + (b - kLaneTurnLow) : v + b;
  }
  // The layouts without a lane turn: turn t (1-based) gives register bit s the place of warp bit
  // (t-1)*h + s, if that exists; otherwise the bit keeps what it held after turn t-1.
  __host__ __device__ static constexpr int plain_reg_pos(int t, int s) {
    return t <= 0 ? v + 5 + s
           : (t - 1) * h + s < w ? v + 5 + h + (t - 1) * h + s
                                 : plain_reg_pos(t - 1, s);
  }
  __host__ __device__ static constexpr int reg_pos(int t, int s) {
    return t == 0 && s < m ? v + kLaneTurnLow + s : plain_reg_pos(t, s);
  }
  __host__ __device__ static constexpr int warp_pos(int t, int u) {
    // Warp bit u was swapped in turn u/h + 1 and gave its place to register bit u % h; that
    // register bit's logical position is the one it held before that turn (without a lane turn).
    return (t > u / h) ? plain_reg_pos(u / h, u % h) : v + 5 + h + u;
  }
  // Tile index of register vector j of thread (lane, warp) in layout t.
  template <int t>
  __host__ __device__ static int index(int lane, int warp, int j) {
    int idx = lane << v;
    if constexpr (m > 0 && t == 0) {  // after the lane turn
      idx = 0;
      for (int b = 0; b < 5; ++b) idx |= ((lane >> b) & 1) << lane_pos(t, b);
    }
    for (int s = 0; s < h; ++s) idx |= ((j >> s) & 1) << reg_pos(t, s);
    for (int u = 0; u < w; ++u) idx |= ((warp >> u) & 1) << warp_pos(t, u);
    return idx;
  }
};

// Corner-turn buffer offset (compute-type elements) of 16-byte chunk c of register vector j of
// thread (lane, warp) in layout t: the vector's index without the pass bit (TURN_PASSES = 2), in
// 16-byte slots, one plane of slots per chunk. It is the thread's part (lane and warp bits, the
// same for every j) plus j's part (a compile-time constant in the kernel). With a lane turn, slot
// bit 2 is XOR-ed with slot bit 5: after the lane turn, lane bit 2 holds slot bit 5, and the XOR
// keeps each quarter warp on eight different 16-byte bank groups (in the other layouts lane bit 2
// holds slot bit 2 and slot bit 5 is fixed per access, so the XOR changes nothing there). The XOR
// goes to whichever part holds slot bit 2, so every address stays a base plus a constant.
// tests/cpp/test_fwt_layouts.cu checks that each layout puts every element at the same offset,
// and that no access has a bank conflict.
template <class L, int TURN_PASSES, int kChunkLen>
struct TurnBuffer {
  static constexpr int v = L::kV, h = L::kH, m = L::kM;
  static constexpr int kPassBit = v + 5 + h - 1;  // register bit h - 1 in every layout a turn uses
  static constexpr int kSlotBits = v + 5 + h + L::kW - ilog2(TURN_PASSES) - v;  // slots per chunk plane, log2
  __host__ __device__ static constexpr int compact(int idx) {
    return TURN_PASSES == 2 ? ((idx >> (kPassBit + 1)) << kPassBit) | (idx & ((1 << kPassBit) - 1)) : idx;
  }
  template <int t>
  __host__ __device__ static int offset(int lane, int warp, int j, int c) {
    int j_index = 0;  // (constant bounds: unrolled without a pragma, which host compilers reject)
    for (int s = 0; s < h; ++s) j_index |= ((j >> s) & 1) << L::reg_pos(t, s);
    int thread_slot = compact(L::template index<t>(lane, warp, 0)) >> v, j_slot = compact(j_index) >> v;
    if constexpr (m > 0) {
      constexpr auto j_holds = [](int slot_bit) {
        for (int s = 0; s < h; ++s)
          if (L::reg_pos(t, s) == v + slot_bit) return true;
        return false;
      };
      static_assert(!j_holds(5) || j_holds(2), "slot bit 5 in a register bit needs slot bit 2 there too");
      if constexpr (j_holds(2) && j_holds(5)) {
        j_slot ^= (j_slot >> 3) & 4;
      } else if constexpr (j_holds(2)) {
        const int flip = (thread_slot >> 3) & 4;  // the thread's slot bit 5, in place 2
        j_slot = j_slot & 4 ? j_slot - flip : j_slot + flip;
      } else {
        thread_slot ^= (thread_slot >> 3) & 4;
      }
    }
    return (c << (kSlotBits + ilog2(kChunkLen))) + ((thread_slot + j_slot) << ilog2(kChunkLen));
  }
};

// Lane-turn buffer slots (16-byte units, 32·8 per warp) for three lane bits: slot (G, J) =
// (32G + 4J + lane % 4) ^ 4(G & 1) holds what lane lane % 4 + 4G had in register J, and lane
// lane % 4 + 4J reads it into register G. The XOR puts every quarter warp on eight different
// 16-byte bank groups, writing and reading. Written as a per-lane base for even and one for odd J
// (or G) plus a constant, so the kernel's addresses need no arithmetic per access.
struct LaneTurnSlots {
  __host__ __device__ static int write(int lane, int jl) {  // G = lane / 4, J = jl
    const int g = lane >> 2, base = 32 * g + (lane & 3), swap = 4 * (g & 1);
    return (jl & 1 ? base - swap : base + swap) + 4 * jl;
  }
  __host__ __device__ static int read(int lane, int jl) {  // G = jl, J = lane / 4
    const int base = 4 * (lane >> 2) + (lane & 3);
    return (jl & 1 ? base ^ 4 : base) + 32 * jl;
  }
};

// A split row's (SPLIT_TOP) slots in shared memory, 16-byte units: thread `thread` of `threads`
// keeps the raw second half of its row (K vectors) and then the first half's result (K vectors of
// CHUNKS 16-byte chunks in the compute type) there, thread-interleaved so that every warp access is
// conflict-free. Wider compute values (16-bit inputs: CHUNKS = 2) take twice the raw bytes, so the
// raw vectors sit at the top of the area and parked vector j overwrites only raw vectors up to j.
template <int K, int CHUNKS>
struct SplitSlots {
  __host__ __device__ static constexpr int park(int j, int c, int threads, int thread) {
    return (j * CHUNKS + c) * threads + thread;
  }
  __host__ __device__ static constexpr int raw(int j, int threads, int thread) {
    return (K * (CHUNKS - 1) + j) * threads + thread;
  }
};

// Lane bits the lane turn moves into registers: lane / 4, three bits, when the thread holds at least
// 8 vectors of one row (the 16-bit tensor-core stage takes lane % 4; wider types shuffle lane % 4).
constexpr int lane_turn_bits(bool lane_turn, int h) { return lane_turn && h >= 3 ? 3 : 0; }

template <int v, int h, int w>
constexpr int turns_needed() {
  return w == 0 ? 0 : (w + h - 1) / h;
}

// The single-exchange kernels' layouts (fwt_single_exchange.cuh, which describes them).
template <int LOG_N>
struct SingleExchangeLayout {
  static_assert(LOG_N >= 12 && LOG_N <= 15, "16-bit rows of 2^12-2^15");
  static constexpr int kK = 16;                 // vectors per thread
  static constexpr int kW = LOG_N - 12;         // warp bits
  static constexpr int kThreads = 32 << kW;
  static constexpr int kUnits = 1 << (LOG_N - 2);  // float2 units per pass (bit 0 inside, bit 1 the pass)
  __host__ __device__ static constexpr int bit(int x, int b) { return (x >> b) & 1; }
  __host__ __device__ static constexpr int loaded(int lane, int warp, int j, int e) {
    return e | lane << 3 | j << 8 | warp << 12;
  }
  __host__ __device__ static constexpr int gathered(int lane, int warp, int j, int e) {
    return e | (lane & 3) << 3 | bit(j, 0) << 5 | ((lane >> 2) & 3) << 6 | bit(lane, 4) << 8 | (j >> 1) << 9 |
           warp << 12;
  }
  __host__ __device__ static constexpr int final_index(int lane, int warp, int j, int e) {
    const int common = (e & 3) | (lane & 15) << 2 | bit(e, 2) << 6 | bit(j, 0) << 7 | bit(lane, 4) << 9;
    if (kW == 3) return common | bit(warp, 0) << 8 | (warp >> 1) << 10 | (j >> 1) << 12;
    if (kW == 0) return common | bit(j, 1) << 8 | bit(j, 2) << 10 | bit(j, 3) << 11;
    return common | bit(j, 1) << 8 | bit(warp, 0) << 10 |
           (kW == 2 ? bit(warp, 1) << 11 | bit(j, 3) << 13 : bit(j, 3) << 11) | bit(j, 2) << 12;
  }
  // The loaded (lane, vector) of the same warp that holds gathered vector j of `lane`.
  __host__ __device__ static constexpr int source_lane(int lane, int j) {
    return (lane & 3) | bit(j, 0) << 2 | ((lane >> 2) & 3) << 3;
  }
  __host__ __device__ static constexpr int source_vector(int lane, int j) { return bit(lane, 4) | (j & 14); }
  // Stage slot of a lane inside its warp's 32 (lane bit 2 XOR lane bit 3).
  __host__ __device__ static constexpr int stage_lane(int lane) { return lane ^ ((lane >> 1) & 4); }
  // Exchange-buffer unit of the float2 at logical index idx (bit 0 inside the unit, bit 1 the pass).
  __host__ __device__ static constexpr int unit(int idx) { return (idx >> 2) ^ bit(idx, 6) ^ bit(idx, 7) << 3; }
  // The kernel's split of a unit into a per-thread part (vector bit 0 and the chunk included: they
  // meet the swizzle) and a constant for vector bits 1-3: unit(gathered(lane, warp, j, e)) ==
  // unit(gathered(lane, warp, j & 1, e)) + gathered_unit_j(j) (the same for final_index).
  __host__ __device__ static constexpr int gathered_unit_j(int j) { return (j >> 1) << 7; }
  __host__ __device__ static constexpr int final_unit_j(int j) {
    if (kW == 3) return (j >> 1) << 10;
    if (kW == 0) return bit(j, 1) << 6 | bit(j, 2) << 8 | bit(j, 3) << 9;
    return bit(j, 1) << 6 | bit(j, 2) << 10 | bit(j, 3) << (kW == 2 ? 11 : 9);
  }
  // Vector bits butterflied after the exchange (the ones the final layout brings in).
  static constexpr int kFinalVectorBits = kW == 0 ? 2 : kW == 1 ? 3 : 4;
};

}  // namespace ironkernels::detail::fwt_gpu
