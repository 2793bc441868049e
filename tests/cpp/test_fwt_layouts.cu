// Host-only checks of the CUDA FWT kernels' shared-memory exchanges (cuda/fwt/fwt_layouts.cuh), no
// GPU needed: in every corner turn each element leaves and arrives at the same offset, the offsets
// of one pass cover the buffer exactly once, and no 16-byte access of a quarter warp hits a bank
// group twice; the outputs leave in whole 512-byte segments per warp; the lane turn moves each
// value to the lane and register it should, conflict-free. A split row's slots (SplitSlots) stay in
// their area, and a parked vector never overwrites a raw vector not yet read. The single-exchange
// kernel with its gathered stage read (fwt_single_exchange.cuh, 16-bit rows of 2^12-2^15): its
// layouts are permutations, every shared-memory access is conflict-free, and its data flow on the
// host computes the transform exactly, also for rows split in halves that each read both halves of
// the stage. The chained tensor-core stages (ChainedHadamardMma): the mma fragments as PTX lays
// them out, the permutations, the packing, the shuffle and the store slots compute the transform of
// a one-warp row exactly. The single-pass fwt_quantize kernel (fwt_quantize_layout.cuh): its
// shared-memory words and turn are permutations, conflict-free, and its data flow (registers, lane
// butterflies, the turn) gives the host transform's float32 values bit for bit.
#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "check.hpp"
#include "fwt/fwt_layouts.cuh"
#include "fwt/fwt_quantize_layout.cuh"
#include "fwt/hadamard_factors.hpp"
#include "fwt/quantize_formats.hpp"

namespace fg = ironkernels::detail::fwt_gpu;

namespace {

// The layout the outputs leave in (after the last turn): a permutation of the tile, and each warp
// instruction's 32 vectors cover 32 consecutive vector slots (512 contiguous bytes), so the direct
// stores are whole segments and the 16-byte writes into a bulk-store buffer in memory order hit
// eight different bank groups per quarter warp.
template <class L, int t>
void check_final_layout() {
  constexpr int v = L::kV, h = L::kH, w = L::kW, m = L::kM;
  std::set<int> seen;
  for (int warp = 0; warp < (1 << w); ++warp)
    for (int j = 0; j < (1 << h); ++j) {
      std::set<int> vectors;
      for (int lane = 0; lane < 32; ++lane) {
        const int idx = L::template index<t>(lane, warp, j);
        seen.insert(idx >> v);
        vectors.insert(idx >> v);
      }
      CHECK(*vectors.rbegin() - *vectors.begin() == 31 && vectors.size() == 32,
            "v%d h%d w%d m%d final layout: warp %d vector %d covers %zu vectors over %d slots", v, h, w, m, warp, j,
            vectors.size(), *vectors.rbegin() - *vectors.begin() + 1);
    }
  CHECK(int(seen.size()) == 1 << (5 + h + w), "v%d h%d w%d m%d final layout: %zu of %d vectors", v, h, w, m, seen.size(),
        1 << (5 + h + w));
}

// One configuration: v vector bits, h register-vector bits, w warp bits, m lane-turn bits, the
// turn's passes, compute-type elements per 16-byte chunk and chunks per vector.
template <int v, int h, int w, int m, int PASSES, int kChunkLen, int kChunks>
void check_turns() {
  using L = fg::Layout<v, h, w, m>;
  using Turn = fg::TurnBuffer<L, PASSES, kChunkLen>;
  constexpr int turns = fg::turns_needed<v, h, w>();
  constexpr int buffer = (kChunks << (v + 5 + h + w)) >> fg::ilog2(PASSES) >> v;  // 16-byte slots
  auto offset = [](auto t_const, int lane, int warp, int j, int c) {
    return Turn::template offset<decltype(t_const)::value>(lane, warp, j, c);
  };
  auto one_turn = [&](auto t_const) {
    constexpr int t = decltype(t_const)::value;  // writes in layout t, reads in layout t + 1
    for (int pass = 0; pass < PASSES; ++pass) {
      auto in_pass = [&](int j) { return PASSES == 1 || ((j >> (h - 1)) & 1) == pass; };
      std::vector<int> written(std::size_t(kChunks) << (v + 5 + h + w), -1);  // by (element, chunk)
      std::set<int> slots;
      for (int warp = 0; warp < (1 << w); ++warp)
        for (int j = 0; j < (1 << h); ++j)
          for (int c = 0; c < kChunks; ++c) {
            if (!in_pass(j)) continue;
            for (int quarter = 0; quarter < 4; ++quarter) {
              std::set<int> write_banks;
              for (int lane = 8 * quarter; lane < 8 * quarter + 8; ++lane) {
                const int at = offset(t_const, lane, warp, j, c);
                CHECK(at % kChunkLen == 0 && at / kChunkLen < buffer, "v%d h%d w%d m%d turn %d: offset %d outside", v, h, w, m, t, at);
                slots.insert(at / kChunkLen);
                write_banks.insert(at / kChunkLen % 8);
                written[(std::size_t(L::template index<t>(lane, warp, j)) >> v) * kChunks + c] = at;
              }
              CHECK(write_banks.size() == 8, "v%d h%d w%d m%d turn %d: write conflict (%zu bank groups)", v, h, w, m, t, write_banks.size());
            }
          }
      CHECK(int(slots.size()) == buffer, "v%d h%d w%d m%d turn %d pass %d: %zu of %d slots written", v, h, w, m, t, pass,
            slots.size(), buffer);
      for (int warp = 0; warp < (1 << w); ++warp)
        for (int j = 0; j < (1 << h); ++j)
          for (int c = 0; c < kChunks; ++c) {
            if (!in_pass(j)) continue;
            constexpr std::integral_constant<int, t + 1> next{};
            for (int quarter = 0; quarter < 4; ++quarter) {
              std::set<int> read_banks;
              for (int lane = 8 * quarter; lane < 8 * quarter + 8; ++lane) {
                const int at = offset(next, lane, warp, j, c);
                read_banks.insert(at / kChunkLen % 8);
                const int from = written[(std::size_t(L::template index<t + 1>(lane, warp, j)) >> v) * kChunks + c];
                CHECK(from == at, "v%d h%d w%d m%d turn %d: element read at %d, written at %d", v, h, w, m, t, at, from);
              }
              CHECK(read_banks.size() == 8, "v%d h%d w%d m%d turn %d: read conflict (%zu bank groups)", v, h, w, m, t, read_banks.size());
            }
          }
    }
  };
  if constexpr (turns > 0) one_turn(std::integral_constant<int, 0>{});
  if constexpr (turns > 1) one_turn(std::integral_constant<int, 1>{});
  if constexpr (turns > 2) one_turn(std::integral_constant<int, 2>{});
  if constexpr (turns > 0) check_final_layout<L, turns>();
}

// The lane turn: lane (quad, G) writes register J to slot write(lane, J); lane (quad, J) reads slot
// read(lane, G) into register G. Every value must arrive, and each quarter warp must touch eight
// different 16-byte bank groups on both sides.
void check_lane_turn() {
  for (int jl = 0; jl < 8; ++jl)
    for (int quarter = 0; quarter < 4; ++quarter) {
      std::set<int> write_banks, read_banks;
      for (int lane = 8 * quarter; lane < 8 * quarter + 8; ++lane) {
        write_banks.insert(fg::LaneTurnSlots::write(lane, jl) % 8);
        read_banks.insert(fg::LaneTurnSlots::read(lane, jl) % 8);
      }
      CHECK(write_banks.size() == 8 && read_banks.size() == 8, "lane turn register %d: bank conflict", jl);
    }
  std::set<int> slots;
  for (int lane = 0; lane < 32; ++lane)
    for (int jl = 0; jl < 8; ++jl) {
      const int w = fg::LaneTurnSlots::write(lane, jl);
      slots.insert(w);
      const int reader = (lane & 3) + 4 * jl, reg = lane >> 2;  // lane bits 2-4 and the register swap
      CHECK(fg::LaneTurnSlots::read(reader, reg) == w, "lane turn: lane %d register %d is read elsewhere", lane, jl);
    }
  CHECK(slots.size() == 256 && *slots.rbegin() == 255, "lane turn: %zu of 256 slots used", slots.size());
}

// A split row's slots: raw vector i of every thread and parked chunk (j, c) stay inside the area
// of K · CHUNKS slots per thread, each thread has its own, a warp's 32 accesses are 32 consecutive
// slots (conflict-free), and parking vector j (after reading raw vector j) overwrites no raw vector
// i > j of the same thread.
template <int K, int CHUNKS>
void check_split_slots() {
  using S = fg::SplitSlots<K, CHUNKS>;
  constexpr int threads = 256, area = K * CHUNKS * threads;
  std::set<int> parked, raw;
  for (int thread = 0; thread < threads; ++thread)
    for (int j = 0; j < K; ++j) {
      raw.insert(S::raw(j, threads, thread));
      for (int c = 0; c < CHUNKS; ++c) {
        const int at = S::park(j, c, threads, thread);
        parked.insert(at);
        for (int i = j + 1; i < K; ++i)
          CHECK(at != S::raw(i, threads, thread), "split K%d chunks %d: parking (%d, %d) overwrites raw vector %d", K,
                CHUNKS, j, c, i);
      }
      if (thread % 32 == 31) {
        CHECK(S::raw(j, threads, thread) - S::raw(j, threads, thread - 31) == 31, "split: raw vector %d not contiguous", j);
        CHECK(S::park(j, 0, threads, thread) - S::park(j, 0, threads, thread - 31) == 31, "split: park %d not contiguous", j);
      }
    }
  CHECK(int(parked.size()) == area && *parked.begin() == 0 && *parked.rbegin() == area - 1,
        "split K%d chunks %d: %zu parked slots", K, CHUNKS, parked.size());
  CHECK(int(raw.size()) == K * threads && *raw.rbegin() < area, "split K%d chunks %d: raw slots outside", K, CHUNKS);
}

// (a, b) <- (a + b, a - b), on the host.
void bfly(double& a, double& b) {
  const double s = a + b;
  b = a - b;
  a = s;
}

// Butterflies on logical bit b of values held as reg[warp][lane][j][e] at index(lane, warp, j, e).
template <int K, int E, class Index>
void butterfly_held(std::vector<double>& reg, int warps, int n, Index index, int b) {
  std::vector<double> by_index(n);
  auto at = [&](int warp, int lane, int j, int e) -> double& { return reg[((size_t(warp) * 32 + lane) * K + j) * E + e]; };
  for (int warp = 0; warp < warps; ++warp)
    for (int lane = 0; lane < 32; ++lane)
      for (int j = 0; j < K; ++j)
        for (int e = 0; e < E; ++e) by_index[index(lane, warp, j, e)] = at(warp, lane, j, e);
  for (int i = 0; i < n; ++i)
    if (!(i & (1 << b))) bfly(by_index[i], by_index[i | (1 << b)]);
  for (int warp = 0; warp < warps; ++warp)
    for (int lane = 0; lane < 32; ++lane)
      for (int j = 0; j < K; ++j)
        for (int e = 0; e < E; ++e) at(warp, lane, j, e) = by_index[index(lane, warp, j, e)];
}

int bit_position(int one_bit) {
  int b = 0;
  while ((1 << b) != one_bit) ++b;
  return b;
}

// H_n x of integers in [-1000, 1000] in float64 (exact), and the input.
void random_row_and_transform(int log_n, std::vector<double>& x, std::vector<double>& ref) {
  const int n = 1 << log_n;
  x.resize(n);
  unsigned state = 12345u;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    x[i] = double(int(state >> 9) % 2001 - 1000);
  }
  ref = x;
  for (int b = 0; b < log_n; ++b)
    for (int i = 0; i < n; ++i)
      if (!(i & (1 << b))) bfly(ref[i], ref[i | (1 << b)]);
}

// The single-exchange data-flow checks, value e of vector j of (warp, lane) at reg[warp][lane][j][e]:
// a random row read from the stage in the gathered layout, its tensor-core bits, value bit 1 and
// vector bits butterflied there; and the registers, stored in the final layout, against the transform.
template <class Lay>
void gathered_row_first_bits(std::vector<double>& reg, const std::vector<double>& x) {
  constexpr int n = 1 << (Lay::kW + 12), warps = 1 << Lay::kW, K = Lay::kK;
  reg.assign(size_t(warps) * 32 * K * 8, 0.0);
  for (int warp = 0; warp < warps; ++warp)
    for (int lane = 0; lane < 32; ++lane)
      for (int j = 0; j < K; ++j)
        for (int e = 0; e < 8; ++e)  // the stage holds the loaded layout; the read gathers
          reg[((size_t(warp) * 32 + lane) * K + j) * 8 + e] =
              x[Lay::loaded(Lay::source_lane(lane, j), warp, Lay::source_vector(lane, j), e)];
  auto gathered = [](int l, int w, int j, int e) { return Lay::gathered(l, w, j, e); };
  for (int b : {0, 2, 3, 4, 1}) butterfly_held<K, 8>(reg, warps, n, gathered, b);  // tensor cores, value bit 1
  for (int s = 0; s < 4; ++s) butterfly_held<K, 8>(reg, warps, n, gathered, bit_position(Lay::gathered(0, 0, 1 << s, 0)));
}
template <class Lay>
double final_layout_error(const std::vector<double>& reg, const std::vector<double>& ref) {
  constexpr int warps = 1 << Lay::kW, K = Lay::kK;
  std::vector<double> out(ref.size());
  for (int warp = 0; warp < warps; ++warp)
    for (int lane = 0; lane < 32; ++lane)
      for (int j = 0; j < K; ++j)
        for (int e = 0; e < 8; ++e) out[Lay::final_index(lane, warp, j, e)] = reg[((size_t(warp) * 32 + lane) * K + j) * 8 + e];
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(out[i] - ref[i]));
  return worst;
}

// The single-exchange pipeline on the host, each phase's butterflies on the values where the phase
// holds them: the largest difference of its output (final layout) to ref.
template <class Lay>
double single_exchange_data_flow(const std::vector<double>& x, const std::vector<double>& ref) {
  constexpr int n = 1 << (Lay::kW + 12), warps = 1 << Lay::kW, K = Lay::kK;
  std::vector<double> reg;
  gathered_row_first_bits<Lay>(reg, x);
  auto at = [&](int warp, int lane, int j, int e) -> double& { return reg[((size_t(warp) * 32 + lane) * K + j) * 8 + e]; };
  auto gathered = [](int l, int w, int j, int e) { return Lay::gathered(l, w, j, e); };
  auto final_layout = [](int l, int w, int j, int e) { return Lay::final_index(l, w, j, e); };
  if (Lay::kW == 3) butterfly_held<K, 8>(reg, warps, n, gathered, bit_position(Lay::gathered(16, 0, 0, 0)));
  for (int pass = 0; pass < 2; ++pass) {  // the exchange, through the units
    std::vector<double> units(size_t(Lay::kUnits) * 2);
    for (int warp = 0; warp < warps; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < K; ++j)
          for (int c = 0; c < 2; ++c)
            for (int e0 = 0; e0 < 2; ++e0)
              units[size_t(Lay::unit(Lay::gathered(lane, warp, j, 4 * c + 2 * pass))) * 2 + e0] =
                  at(warp, lane, j, 4 * c + 2 * pass + e0);
    for (int warp = 0; warp < warps; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < K; ++j)
          for (int c = 0; c < 2; ++c)
            for (int e0 = 0; e0 < 2; ++e0)
              at(warp, lane, j, 4 * c + 2 * pass + e0) =
                  units[size_t(Lay::unit(Lay::final_index(lane, warp, j, 4 * c + 2 * pass))) * 2 + e0];
  }
  butterfly_held<K, 8>(reg, warps, n, final_layout, bit_position(Lay::final_index(0, 0, 0, 4)));
  for (int s = 0; s < Lay::kFinalVectorBits; ++s)
    butterfly_held<K, 8>(reg, warps, n, final_layout, bit_position(Lay::final_index(0, 0, 1 << s, 0)));
  return final_layout_error<Lay>(reg, ref);
}

// The single-exchange kernel of 16-bit rows of 2^LOG_N (2^15: with a shuffle stage): its three layouts, the gathered stage read,
// the exchange, the row written for the bulk copy, which bits each phase butterflies, and the whole
// data flow against a float64 transform of a random row.
template <int LOG_N>
void check_single_exchange() {
  using Lay = fg::SingleExchangeLayout<LOG_N>;
  constexpr int n = 1 << LOG_N, warps = 1 << Lay::kW, K = Lay::kK;
  // Permutations; the gathered read takes the loaded vector it should.
  std::vector<int> seen_loaded(n), seen_gathered(n), seen_final(n);
  for (int warp = 0; warp < warps; ++warp)
    for (int lane = 0; lane < 32; ++lane)
      for (int j = 0; j < K; ++j) {
        for (int e = 0; e < 8; ++e) {
          ++seen_loaded.at(Lay::loaded(lane, warp, j, e));
          ++seen_gathered.at(Lay::gathered(lane, warp, j, e));
          ++seen_final.at(Lay::final_index(lane, warp, j, e));
          CHECK(Lay::gathered(lane, warp, j, e) ==
                    Lay::loaded(Lay::source_lane(lane, j), warp, Lay::source_vector(lane, j), e),
                "2^%d gathered read: lane %d vector %d takes the wrong vector", LOG_N, lane, j);
        }
        for (int c = 0; c < 2; ++c) {  // the kernel's per-thread bases plus constants
          CHECK(Lay::unit(Lay::gathered(lane, warp, j, 4 * c)) ==
                    Lay::unit(Lay::gathered(lane, warp, j & 1, 4 * c)) + Lay::gathered_unit_j(j) &&
                    Lay::unit(Lay::final_index(lane, warp, j, 4 * c)) ==
                        Lay::unit(Lay::final_index(lane, warp, j & 1, 4 * c)) + Lay::final_unit_j(j) &&
                    Lay::final_index(lane, warp, j, 4 * c) ==
                        Lay::final_index(lane, warp, 0, 0) + Lay::final_index(0, 0, j, 4 * c),
                "2^%d: a unit or row offset is not base plus constant (lane %d vector %d)", LOG_N, lane, j);
        }
      }
  for (int i = 0; i < n; ++i)
    CHECK(seen_loaded[i] == 1 && seen_gathered[i] == 1 && seen_final[i] == 1, "2^%d: index %d not a permutation", LOG_N, i);
  // Bank conflicts: 16-byte stage accesses per quarter warp, 8-byte exchange and row writes per half warp.
  for (int warp = 0; warp < warps; ++warp)
    for (int j = 0; j < K; ++j) {
      for (int q = 0; q < 4; ++q) {
        std::set<int> writes, reads;
        for (int lane = 8 * q; lane < 8 * q + 8; ++lane) {
          writes.insert(Lay::stage_lane(lane) % 8);
          reads.insert(Lay::stage_lane(Lay::source_lane(lane, j)) % 8);
        }
        CHECK(writes.size() == 8 && reads.size() == 8, "2^%d stage: bank conflict (vector %d)", LOG_N, j);
      }
      for (int c = 0; c < 2; ++c)
        for (int half = 0; half < 2; ++half) {
          std::set<int> written, read, row;
          for (int lane = 16 * half; lane < 16 * half + 16; ++lane) {
            written.insert(Lay::unit(Lay::gathered(lane, warp, j, 4 * c)) % 16);
            read.insert(Lay::unit(Lay::final_index(lane, warp, j, 4 * c)) % 16);
            row.insert((Lay::final_index(lane, warp, j, 4 * c) >> 2) % 16);
          }
          CHECK(written.size() == 16 && read.size() == 16 && row.size() == 16,
                "2^%d exchange or row write: bank conflict (vector %d chunk %d)", LOG_N, j, c);
        }
    }
  // The exchange: in each pass every unit is written once and read back by the value of the same index.
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<int> holder(Lay::kUnits, -1);
    for (int warp = 0; warp < warps; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < K; ++j)
          for (int c = 0; c < 2; ++c) {
            const int idx = Lay::gathered(lane, warp, j, 4 * c + 2 * pass), u = Lay::unit(idx);
            CHECK(u >= 0 && u < Lay::kUnits && holder[u] < 0, "2^%d pass %d: unit %d written twice or outside", LOG_N, pass, u);
            if (u >= 0 && u < Lay::kUnits) holder[u] = idx;
          }
    for (int warp = 0; warp < warps; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < K; ++j)
          for (int c = 0; c < 2; ++c) {
            const int idx = Lay::final_index(lane, warp, j, 4 * c + 2 * pass);
            CHECK(holder[Lay::unit(idx)] == idx, "2^%d pass %d: index %d reads another value", LOG_N, pass, idx);
          }
  }
  // Which logical bit each position holds, and the bits each phase butterflies: every bit once.
  std::vector<int> done(LOG_N);
  for (int e : {1, 4}) ++done[bit_position(Lay::gathered(0, 0, 0, e))];          // tensor cores: value bits 0, 2
  for (int l : {1, 2}) ++done[bit_position(Lay::gathered(l, 0, 0, 0))];          // and lane bits 0, 1
  ++done[bit_position(Lay::gathered(0, 0, 0, 2))];                               // value bit 1
  for (int s = 0; s < 4; ++s) ++done[bit_position(Lay::gathered(0, 0, 1 << s, 0))];  // vector bits
  if (Lay::kW == 3) ++done[bit_position(Lay::gathered(16, 0, 0, 0))];            // 2^15: lane bit 4, shuffled
  ++done[bit_position(Lay::final_index(0, 0, 0, 4))];                            // after the exchange: value bit 2
  for (int s = 0; s < Lay::kFinalVectorBits; ++s) ++done[bit_position(Lay::final_index(0, 0, 1 << s, 0))];
  for (int b = 0; b < LOG_N; ++b) CHECK(done[b] == 1, "2^%d: logical bit %d butterflied %d times", LOG_N, b, done[b]);
  // The data flow on a random row.
  std::vector<double> x, ref;
  random_row_and_transform(LOG_N, x, ref);
  const double worst = single_exchange_data_flow<Lay>(x, ref);
  CHECK(worst == 0, "2^%d single exchange: data flow differs from the transform by %g", LOG_N, worst);
}

// A split row of 2^LOG_N in the single-exchange kernel (SPLIT_TOP, 16-bit 2^13 and 2^15): the stage
// addressing of its two halves (each thread's cp.async of half h into planes h K + j, and each half's
// reads of both planes through the gathered read's bases) and the data flow: half h of the output is
// the 2^(n-1) pipeline run on x_lo + x_hi (h = 0) or x_lo - x_hi (h = 1).
template <int LOG_N>
void check_split_single_exchange() {
  using Lay = fg::SingleExchangeLayout<LOG_N - 1>;
  constexpr int half = 1 << (LOG_N - 1), warps = 1 << Lay::kW, K = Lay::kK, kThreads = Lay::kThreads;
  // Each slot of the stage: the row index of the first value of the 16-byte vector copied into it.
  std::vector<int> stage(size_t(2) * K * kThreads, -1);
  for (int warp = 0; warp < warps; ++warp)
    for (int lane = 0; lane < 32; ++lane)
      for (int h = 0; h < 2; ++h)
        for (int j = 0; j < K; ++j) {
          const size_t slot = size_t(warp * 32 + Lay::stage_lane(lane)) + size_t(h * K + j) * kThreads;
          CHECK(stage.at(slot) < 0, "2^%d split: stage slot %zu written twice", LOG_N, slot);
          stage.at(slot) = h * half + Lay::loaded(lane, warp, 0, 0) + Lay::loaded(0, 0, j, 0);
        }
  for (int warp = 0; warp < warps; ++warp)
    for (int lane = 0; lane < 32; ++lane) {
      const int src_base[2] = {warp * 32 + Lay::stage_lane(Lay::source_lane(lane, 0)),
                               warp * 32 + Lay::stage_lane(Lay::source_lane(lane, 1))};
      for (int j = 0; j < K; ++j) {
        const int src = src_base[j & 1] + Lay::source_vector(lane, 0) * kThreads;
        const int lo = stage.at(size_t(src + (j & 14) * kThreads)), hi = stage.at(size_t(src + (K + (j & 14)) * kThreads));
        CHECK(lo == Lay::gathered(lane, warp, j, 0) && hi == half + lo,
              "2^%d split: lane %d warp %d vector %d reads rows %d and %d", LOG_N, lane, warp, j, lo, hi);
      }
    }
  std::vector<double> x, ref;
  random_row_and_transform(LOG_N, x, ref);
  for (int h = 0; h < 2; ++h) {
    std::vector<double> part(half), ref_part(ref.begin() + h * half, ref.begin() + (h + 1) * half);
    for (int i = 0; i < half; ++i) part[i] = h ? x[i] - x[i + half] : x[i] + x[i + half];
    const double worst = single_exchange_data_flow<Lay>(part, ref_part);
    CHECK(worst == 0, "2^%d split, half %d: data flow differs from the transform by %g", LOG_N, h, worst);
  }
}

// The chained tensor-core stages on a 16-bit row of 2^11 (one warp, 8 vectors of 8 values per lane),
// with the fragment layouts of mma.m16n8k16 (B: rows 2t, 2t+1 | 2t+8, 2t+9 of column g = lane / 4,
// t = lane % 4; D: rows g | g+8, columns 2t, 2t+1) and mma.m16n8k8 (A: rows g | g+8, columns t | t+4;
// B: rows t | t+4 of column g), then the register butterflies, the pairs over logical 0, the shuffle
// that swaps logical 5 with lane bit 2, and the 16-byte stores at lane_slot.
void check_chained_mma() {
  using CL = fg::ChainedMmaLayout;
  constexpr int log_n = 11, n = 1 << log_n, K = 8;
  std::set<int> sig, ta, slots;
  for (int m = 0; m < 16; ++m) sig.insert(CL::sigma(m));
  for (int c = 0; c < 8; ++c) ta.insert(CL::tau(c));
  for (int lane = 0; lane < 32; ++lane) slots.insert(CL::lane_slot(lane));
  CHECK(sig.size() == 16 && *sig.rbegin() == 15 && ta.size() == 8 && *ta.rbegin() == 7 && slots.size() == 32 &&
            *slots.rbegin() == 31,
        "chained mma: sigma, tau and lane_slot must be permutations");
  auto parity = [](int v) { return __builtin_popcount(unsigned(v)) & 1 ? -1.0 : 1.0; };
  std::vector<double> x, ref;
  random_row_and_transform(log_n, x, ref);
  double r[32][K][8];  // [lane][j][4 f + i]
  for (int j = 0; j < K; ++j)
    for (int f = 0; f < 2; ++f) {
      // Stage 1: B[k][n] from fragment (q.x, q.z) or (q.y, q.w) of lane (g = n, t = k / 2 % 4).
      double b[16][8], d1[16][8], a2[16][8], d2[16][8];
      for (int lane = 0; lane < 32; ++lane)
        for (int reg = 0; reg < 2; ++reg)
          for (int half = 0; half < 2; ++half) {
            const int e = 4 * reg + 2 * f + half;  // q.x/q.z (f = 0) or q.y/q.w (f = 1), low half first
            b[2 * (lane & 3) + 8 * reg + half][lane >> 2] = x[e + 8 * lane + 256 * j];
          }
      for (int m = 0; m < 16; ++m)
        for (int c = 0; c < 8; ++c) {
          d1[m][c] = 0;
          for (int k = 0; k < 16; ++k) d1[m][c] += parity(CL::sigma(m) & k) * b[k][c];
        }
      // Stage 2: each lane's (c0, c2, c1, c3) as its A fragment (a0, a1, a2, a3).
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        const double c[4] = {d1[g][2 * t], d1[g][2 * t + 1], d1[g + 8][2 * t], d1[g + 8][2 * t + 1]};
        a2[g][t] = c[0], a2[g + 8][t] = c[2], a2[g][t + 4] = c[1], a2[g + 8][t + 4] = c[3];
      }
      for (int row = 0; row < 16; ++row)
        for (int c = 0; c < 8; ++c) {
          d2[row][c] = 0;
          for (int k = 0; k < 8; ++k) d2[row][c] += a2[row][k] * parity(k & CL::tau(c));
        }
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        const double out[4] = {d2[g][2 * t], d2[g][2 * t + 1], d2[g + 8][2 * t], d2[g + 8][2 * t + 1]};
        for (int i = 0; i < 4; ++i) r[lane][j][4 * f + i] = out[i];
      }
    }
  for (int lane = 0; lane < 32; ++lane) {
    for (int j = 0; j < K; ++j)
      for (int i = 0; i < 4; ++i) bfly(r[lane][j][i], r[lane][j][4 + i]);  // logical 1
    for (int s = 1; s < K; s <<= 1)
      for (int j = 0; j < K; ++j)
        if (!(j & s))
          for (int e = 0; e < 8; ++e) bfly(r[lane][j][e], r[lane][j | s][e]);
  }
  std::vector<double> out(n, NAN);
  for (int j = 0; j < K; ++j)
    for (int lane = 0; lane < 32; ++lane) {
      // Packed pairs p[f][l5] = (r[4f + l5], r[4f + l5 + 2]); a lane with lane bit 2 set keeps l5 = 1
      // and receives the partner's (lane ^ 4) l5 = 1 pair, and the other way round.
      const bool bit2 = (lane >> 2) & 1;
      double v[2][2][2];  // [logical 1][logical 2][logical 0]
      for (int f = 0; f < 2; ++f) {
        const double* own = r[lane][j] + 4 * f;
        const double* partner = r[lane ^ 4][j] + 4 * f;
        const int keep = bit2 ? 1 : 0;
        const double kept[2] = {own[keep], own[keep + 2]}, got[2] = {partner[keep], partner[keep + 2]};
        for (int h = 0; h < 2; ++h) {
          v[f][0][h] = bit2 ? got[h] : kept[h];
          v[f][1][h] = bit2 ? kept[h] : got[h];
        }
      }
      const int base = 8 * CL::lane_slot(lane) + 256 * j;
      for (int l2 = 0; l2 < 2; ++l2)
        for (int f = 0; f < 2; ++f)
          for (int h = 0; h < 2; ++h) out[base + 4 * l2 + 2 * f + h] = v[f][l2][h];
    }
  double worst = 0;
  for (int i = 0; i < n; ++i) worst = std::max(worst, std::isnan(out[i]) ? INFINITY : std::abs(out[i] - ref[i]));
  CHECK(worst == 0, "chained mma: data flow differs from the transform by %g", worst);
}

}  // namespace

// Float32 values of several magnitudes from `seed` (the quantize data-flow checks' inputs).
std::vector<float> random_floats(int n, unsigned seed, int exponent, unsigned spread) {
  std::vector<float> x(std::size_t(n), 0.0f);
  for (float& v : x) {
    seed = seed * 1664525u + 1013904223u;
    v = std::ldexp(float(int(seed >> 8) - (1 << 23)), exponent) * float(1 + (seed & spread));
  }
  return x;
}

// The host transform's order on float32: H over the lowest `bits` bits of the index of v, bit 0 first.
void ascending_butterflies(std::vector<float>& v, int bits) {
  for (int b = 0; b < bits; ++b)
    for (std::size_t e = 0; e < v.size(); ++e)
      if (!(e >> b & 1)) {
        const float lo = v[e], hi = v[e | std::size_t(1) << b];
        v[e] = lo + hi;
        v[e | std::size_t(1) << b] = lo - hi;
      }
}

// The single-pass kernel's runs of E (one per thread) after its register and lane stages over the
// lowest `bits` bits: the lower lane adds its partner's value, the upper subtracts its own.
template <int E>
std::vector<std::vector<float>> runs_after_lanes(const std::vector<float>& x, int threads, int bits) {
  constexpr int log_e = fg::quantize_layout::log_run<E>();
  std::vector<std::vector<float>> v(threads, std::vector<float>(E));
  for (int t = 0; t < threads; ++t) {
    for (int i = 0; i < E; ++i) v[t][i] = x[t * E + i];
    ascending_butterflies(v[t], std::min(log_e, bits));
  }
  for (int b = 0; b < 5 && log_e + b < bits; ++b) {
    const auto before = v;
    for (int t = 0; t < threads; ++t)
      for (int i = 0; i < E; ++i) {
        const float other = before[t ^ (1 << b)][i];
        v[t][i] = (t >> b & 1) ? other - before[t][i] : before[t][i] + other;
      }
  }
  return v;
}

// The single-pass fwt_quantize kernel with runs of E, `threads` threads and rotations of 2^l (blocks
// of the span): every shared-memory word of a turn is written and read once; an 8-lane phase of
// 16-byte accesses hits 8 bank groups and a warp's scalar turn access 32 banks; and the kernel's data
// flow — register butterflies, lane butterflies (the lower lane adds, the upper subtracts), the turn
// over R = l - s bits — gives, in float32, exactly the values of the host's ascending-order transform
// (bit 0 first; the order the host and the kernel share, so the codes agree bit for bit).
template <int E, int R>
void check_quantize_turn(int threads) {
  namespace ql = fg::quantize_layout;
  constexpr int s = ql::turn_shift<E>();
  const int span = threads * E;
  std::vector<int> written(span, 0), read(span, 0);
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < E; ++i) {
      ++written[ql::smem_word<E>(t * E + i)];
      const int e = ql::turn_element<E, R>(i, t, threads);
      CHECK(e >= 0 && e < span, "quantize turn E=%d R=%d: element %d outside the span", E, R, e);
      if (e < 0 || e >= span) return;
      ++read[ql::smem_word<E>(e)];
      const int run_word = ql::turn_run_word<E, R>(i >> R, t, threads) + ((i & ((1 << R) - 1)) << s);
      CHECK(ql::smem_word<E>(e) == run_word, "quantize turn E=%d R=%d: register %d's word is not its run's first "
            "plus mid << s", E, R, i);
      for (int b = 0; b < R; ++b) {
        const int partner = ql::turn_element<E, R>(i ^ (1 << b), t, threads);
        CHECK((e ^ partner) == 1 << (s + b), "quantize turn E=%d R=%d: registers %d, %d do not differ in bit %d alone",
              E, R, i, i ^ (1 << b), s + b);
      }
    }
  CHECK(std::all_of(written.begin(), written.end(), [](int c) { return c == 1; }) &&
            std::all_of(read.begin(), read.end(), [](int c) { return c == 1; }),
        "quantize turn E=%d R=%d threads=%d: words not a permutation", E, R, threads);
  for (int warp = 0; warp < threads / 32; ++warp) {
    for (int k = 0; k < E / 4; ++k)
      for (int phase = 0; phase < 4; ++phase) {
        std::set<int> groups;
        for (int lane = 8 * phase; lane < 8 * phase + 8; ++lane)
          groups.insert((ql::smem_word<E>((32 * warp + lane) * E + 4 * k) >> 2) & 7);
        CHECK(groups.size() == 8, "quantize turn E=%d: vector %d of warp %d, phase %d: bank conflict", E, k, warp, phase);
      }
    for (int i = 0; i < E; ++i) {
      std::set<int> banks;
      for (int lane = 0; lane < 32; ++lane) {
        const int e = ql::turn_element<E, R>(i, 32 * warp + lane, threads);
        banks.insert(ql::smem_word<E>(e) & 31);
      }
      CHECK(banks.size() == 32, "quantize turn E=%d R=%d: register %d of warp %d: bank conflict", E, R, i, warp);
    }
  }
  // The data flow on random float32 values against the host's ascending-order transform.
  const int l = s + R;
  const std::vector<float> x = random_floats(span, 12345u + unsigned(E * 31 + R), -20, 7);
  std::vector<float> ref = x;
  ascending_butterflies(ref, l);
  std::vector<std::vector<float>> v = runs_after_lanes<E>(x, threads, l);
  std::vector<float> smem(span);
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < E; ++i) smem[ql::smem_word<E>(t * E + i)] = v[t][i];
  for (int t = 0; t < threads; ++t) {
    auto word = [&](int i) { return ql::turn_run_word<E, R>(i >> R, t, threads) + ((i & ((1 << R) - 1)) << s); };
    for (int i = 0; i < E; ++i) v[t][i] = smem[word(i)];
    ascending_butterflies(v[t], R);
    for (int i = 0; i < E; ++i) smem[word(i)] = v[t][i];
  }
  int differ = 0;
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < E; ++i) differ += smem[ql::smem_word<E>(t * E + i)] != ref[t * E + i];
  CHECK(differ == 0, "quantize data flow E=%d R=%d threads=%d: %d values differ from the host transform", E, R, threads, differ);
}

// Rotations of m·2^k in the single-pass kernel: the 2^k stages (registers, lanes) then H_m across the
// blocks through shared memory (factor_element), each output summed from 0 over the m inputs in order
// and then scaled: the host's float32 values (its 2^k transform, then apply_factor) bit for bit;
// every word is read once per H_m stage, and a warp's 32 columns hit 32 banks.
template <int E, int M>
void check_quantize_factor(int log_chunk, int threads) {
  namespace ql = fg::quantize_layout;
  const int span = threads * E, chunk = 1 << log_chunk, columns = span / M;
  const float scale = float(1.0 / std::sqrt(double(M * chunk)));
  std::vector<int> reads(span, 0);
  for (int col = 0; col < columns; ++col)
    for (int c = 0; c < M; ++c) ++reads[ql::smem_word<E>(ql::factor_element(col, c, log_chunk, M))];
  CHECK(std::all_of(reads.begin(), reads.end(), [](int r) { return r == 1; }),
        "quantize factor E=%d M=%d: the columns do not cover the span once", E, M);
  for (int first = 0; first + 32 <= columns; first += 32)
    for (int c = 0; c < M; ++c) {
      std::set<int> banks;
      for (int lane = 0; lane < 32; ++lane) banks.insert(ql::smem_word<E>(ql::factor_element(first + lane, c, log_chunk, M)) & 31);
      CHECK(banks.size() == 32, "quantize factor E=%d M=%d: columns from %d, input %d: bank conflict", E, M, first, c);
    }
  const std::vector<float> x = random_floats(span, 777u + unsigned(M), -21, 15);
  std::vector<float> ref = x;  // the host: H_{2^k} on each block (bit 0 first), then apply_factor
  ascending_butterflies(ref, log_chunk);
  std::vector<float> host(span);
  for (int rot = 0; rot < span / (M * chunk); ++rot)
    for (int j = 0; j < chunk; ++j)
      for (int r = 0; r < M; ++r) {
        float out = 0.0f;
        for (int a = 0; a < M; ++a) {
          const float in = ref[(rot * M + a) * chunk + j];
          out = ironkernels::detail::hadamard_factor_entry(M, r, a) > 0 ? out + in : out - in;
        }
        host[(rot * M + r) * chunk + j] = out * scale;
      }
  std::vector<std::vector<float>> v = runs_after_lanes<E>(x, threads, log_chunk);  // the kernel
  std::vector<float> smem(span);
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < E; ++i) smem[ql::smem_word<E>(t * E + i)] = v[t][i];
  for (int col = 0; col < columns; ++col) {
    float z[M];
    for (int c = 0; c < M; ++c) z[c] = smem[ql::smem_word<E>(ql::factor_element(col, c, log_chunk, M))];
    for (int r = 0; r < M; ++r) {
      float out = 0.0f;
      for (int c = 0; c < M; ++c) out = ironkernels::detail::hadamard_factor_entry(M, r, c) < 0 ? out - z[c] : out + z[c];
      smem[ql::smem_word<E>(ql::factor_element(col, r, log_chunk, M))] = out * scale;
    }
  }
  int differ = 0;
  for (int e = 0; e < span; ++e) differ += smem[ql::smem_word<E>(e)] != host[e];
  CHECK(differ == 0, "quantize factor E=%d M=%d 2^%d: %d values differ from the host's", E, M, log_chunk, differ);
}

// The single-pass kernel's E2M1 encoding by thresholds equals the shared encode() on every float
// near each midpoint (a few hundred ulps either side), across every exponent, and at ±0, ±Inf and
// the subnormals.
void check_quantize_e2m1() {
  namespace q = ironkernels::detail::quant;
  auto same = [](float y) {
    const std::uint8_t fast = q::encode_e2m1(y), slow = q::encode(y, q::kE2M1);
    CHECK(fast == slow, "encode_e2m1(%a) = %d, encode = %d", double(y), fast, slow);
    return fast == slow;
  };
  for (float mid : {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f, 0.5f, 1.0f, 2.0f, 4.0f}) {
    float down = mid, up = mid;
    for (int step = 0; step < 300; ++step, down = std::nextafter(down, 0.0f), up = std::nextafter(up, 100.0f))
      if (!same(down) || !same(-down) || !same(up) || !same(-up)) return;
  }
  for (int e = -149; e <= 127; ++e)
    for (float m : {1.0f, 1.25f, 1.5f, 1.75f, 1.999f})
      if (!same(std::ldexp(m, e)) || !same(-std::ldexp(m, e))) return;
  for (float y : {0.0f, -0.0f, INFINITY, -INFINITY, 1e-45f, -1e-45f, 3.4e38f}) same(y);
}

// rint_bits (the CUDA kernel's rounding of integer codes and of E2M1's values below 1) against
// nearbyint, ties to even, near every half-integer of [-130, 130] and at ±0.
void check_rint_bits() {
  namespace q = ironkernels::detail::quant;
  for (int h = -261; h <= 261; h += 2)
    for (float y = 0.5f * float(h), down = y, up = y, step = 0; step < 40;
         ++step, down = std::nextafter(down, -1000.0f), up = std::nextafter(up, 1000.0f))
      for (float v : {down, up}) {
        const int want = int(std::nearbyint(v)), got = q::rint_bits(v) & 0xFF;
        CHECK(got == (want & 0xFF), "rint_bits(%a) low byte %d, nearbyint %d", double(v), got, want);
        if (got != (want & 0xFF)) return;
      }
  CHECK((q::rint_bits(-0.0f) & 0xFF) == 0 && (q::rint_bits(0.0f) & 0xFF) == 0, "rint_bits(±0) is not 0");
}

int main() {
  check_quantize_e2m1();
  check_rint_bits();
  check_quantize_factor<32, 12>(9, 192);   // 12·512, one rotation per block
  check_quantize_factor<32, 28>(9, 448);   // 28·512 (Llama-3-8B's 14336)
  check_quantize_factor<32, 20>(5, 320);   // 20·32, sixteen rotations per block
  check_quantize_factor<32, 12>(10, 384);  // 12·1024
  check_quantize_turn<16, 1>(256);  // rotations of 2^10 in spans of 4096
  check_quantize_turn<16, 2>(256);
  check_quantize_turn<16, 3>(256);
  check_quantize_turn<16, 4>(512);  // 2^13
  check_quantize_turn<32, 4>(512);  // 2^14
  check_quantize_turn<32, 5>(1024);  // 2^15
  check_quantize_turn<32, 1>(512);
  // 16-bit rows (v = 3; after the tensor-core stage, 8 floats per vector: two 16-byte chunks).
  check_turns<3, 3, 1, 0, 1, 4, 2>();  // 2^12, 64 values per thread
  check_turns<3, 3, 2, 0, 1, 4, 2>();  // 2^13
  check_turns<3, 3, 3, 0, 1, 4, 2>();  // 2^14
  check_turns<3, 3, 2, 3, 1, 4, 2>();  // 2^13 with the lane turn
  check_turns<3, 3, 3, 3, 1, 4, 2>();  // 2^14 with the lane turn
  check_turns<3, 4, 3, 0, 2, 4, 2>();  // 2^15, 128 values, two passes
  check_turns<3, 4, 3, 3, 2, 4, 2>();  // 2^15 as the table runs it (lane turn)
  check_turns<3, 4, 2, 3, 2, 4, 2>();  // 2^14, 128 values, lane turn, two passes
  check_turns<3, 2, 5, 0, 1, 4, 2>();  // 2^15, 32 values per thread: three turns
  // float32 (v = 2, one chunk per vector) and float64 (v = 1).
  check_turns<2, 3, 3, 0, 1, 4, 1>();  // 2^13
  check_turns<2, 3, 3, 3, 1, 4, 1>();
  check_turns<2, 4, 4, 0, 1, 4, 1>();  // 2^15, 64 values
  check_turns<2, 5, 3, 0, 2, 4, 1>();  // 2^15, 128 values, two passes
  check_turns<2, 5, 3, 3, 2, 4, 1>();
  check_turns<2, 4, 3, 3, 1, 4, 1>();  // 2^14 as the table runs it (lane turn)
  check_turns<2, 4, 3, 3, 2, 4, 1>();  // 2^15 as the table runs it: halves of 2^14, lane turn, two passes
  check_turns<2, 3, 5, 0, 1, 4, 1>();  // two turns
  check_turns<1, 4, 3, 0, 1, 2, 1>();  // float64 2^13, 32 values per thread
  check_turns<1, 4, 3, 3, 2, 2, 1>();  // float64 2^14 as the table runs it: halves of 2^13, lane turn, two passes
  check_turns<1, 5, 3, 0, 2, 2, 1>();  // float64 2^14, 64 values, two passes
  check_turns<1, 3, 4, 3, 1, 2, 1>();
  check_lane_turn();
  check_split_slots<16, 1>();  // float32 / float64 halves
  check_split_slots<8, 2>();   // 16-bit halves (float32 parked: two chunks per vector)
  check_single_exchange<12>();
  check_single_exchange<13>();
  check_single_exchange<14>();
  check_single_exchange<15>();
  check_split_single_exchange<13>();  // the table's 16-bit 2^13 and 2^15 on Hopper
  check_split_single_exchange<15>();
  check_chained_mma();
  return report_and_exit_code();
}
