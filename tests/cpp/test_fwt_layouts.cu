// Host-only checks of the CUDA FWT kernels' shared-memory exchanges (cuda/fwt/fwt_tile.cuh), no
// GPU needed: in every corner turn each element leaves and arrives at the same offset, the offsets
// of one pass cover the buffer exactly once, and no 16-byte access of a quarter warp hits a bank
// group twice; the outputs leave in whole 512-byte segments per warp; the lane turn moves each
// value to the lane and register it should, conflict-free.
#include <set>
#include <vector>

#include "check.hpp"
#include "fwt/fwt_tile.cuh"

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

}  // namespace

int main() {
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
  check_turns<2, 5, 3, 0, 2, 4, 1>();  // 2^15 as the table runs it
  check_turns<2, 5, 3, 3, 2, 4, 1>();
  check_turns<2, 3, 5, 0, 1, 4, 1>();  // two turns
  check_turns<1, 4, 3, 0, 1, 2, 1>();  // float64 2^14 as the table runs it
  check_turns<1, 5, 3, 0, 2, 2, 1>();  // float64 2^14, the 64 KB configuration
  check_turns<1, 3, 4, 3, 1, 2, 1>();
  check_lane_turn();
  return report_and_exit_code();
}
