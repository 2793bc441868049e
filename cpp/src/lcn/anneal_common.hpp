#pragma once
// What the CPU and CUDA annealers share, so that their chains are the same chains: the random
// numbers, the proposals, the energy and the acceptance test. Every quantity that decides a chain's
// path is an integer or a double computed by the host once per round (temperature, radius), so a
// chain takes the same path on either backend for the same seed and move budget.
//
// Energy of a drawing: sum over edges of c + penalty * max(0, c - target)^2, where c is the edge's
// crossing count and target is one below the chain's best k. With penalty 0 it is twice the total
// number of crossings (the first phase); with penalty > 0 (the second) every crossing above the
// target costs more the further the edge is above it, which draws the search toward lowering k
// while the linear term keeps the total down.
#include <cstdint>

#include "lcn/predicates.hpp"

namespace ironkernels::lcn::anneal {

/// splitmix64: one 64-bit state per chain, cheap on both backends, good enough for proposals.
struct Rng {
  std::uint64_t s;
  IRONKERNELS_HD std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, bound) for bound >= 1 (multiply-shift: no division, a bias below 2^-32).
  IRONKERNELS_HD std::uint32_t below(std::uint32_t bound) {
    return static_cast<std::uint32_t>(((next() >> 32) * static_cast<std::uint64_t>(bound)) >> 32);
  }
  /// Uniform in [-r, r].
  IRONKERNELS_HD std::int32_t offset(std::int32_t r) { return static_cast<std::int32_t>(below(2u * r + 1u)) - r; }
};

IRONKERNELS_HD std::uint64_t chain_seed(std::uint64_t seed, std::int64_t chain) {
  Rng r{seed ^ (0xD1B54A32D192ED03ull * static_cast<std::uint64_t>(chain + 1))};
  r.next();
  return r.next();
}

/// -ln(u) for u = (i + 0.5) / kLogTable: the acceptance test reads a table instead of calling exp or
/// log, whose last bit may differ between the host's and the device's maths libraries.
constexpr int kLogTableBits = 12;
constexpr int kLogTable = 1 << kLogTableBits;

/// What a round of moves needs, computed by the host (the same for every chain in the round).
struct Round {
  double temperature = 1;           ///< Metropolis: accept an energy rise dE iff dE <= temperature * (-ln u)
  std::int32_t radius = 1;          ///< local moves: within this many grid units on each axis
  std::int32_t neighbour_radius = 1;
  std::int64_t penalty = 0;         ///< 0: first phase (total crossings); else the second phase's weight
  std::uint32_t hot_threshold = 0;  ///< P(move a vertex of an edge at the chain's k) = threshold / 2^32
  std::uint32_t global_threshold = 0;     ///< P(jump anywhere in the box) = threshold / 2^32
  std::uint32_t neighbour_threshold = 0;  ///< P(move next to a neighbour) = threshold / 2^32
  std::int32_t width = 0, height = 0;
};

IRONKERNELS_HD std::int64_t edge_energy(std::int64_t c, std::int64_t target, std::int64_t penalty) {
  const std::int64_t above = c - target;
  return c + (above > 0 ? penalty * above * above : 0);
}

/// The graph as the annealers read it: edges, and each vertex's incident edges (CSR, in edge order).
struct GraphView {
  std::int32_t n = 0, m = 0;
  const std::int32_t* ends = nullptr;       ///< 2m: source, target
  const std::int32_t* first = nullptr;      ///< n + 1: the incidences of v are [first[v], first[v + 1])
  const std::int32_t* neighbour = nullptr;  ///< 2m: the other endpoint of each incidence
  const std::int32_t* edge = nullptr;       ///< 2m: the edge of each incidence
};

struct Proposal {
  std::int32_t v, x, y;
};

IRONKERNELS_HD std::int32_t clamp_to(std::int64_t a, std::int32_t hi) {
  return static_cast<std::int32_t>(a < 0 ? 0 : (a > hi ? hi : a));
}

/// A vertex and a point to move it to. `pos` holds the chain's 2n coordinates, `hot` its `hot_count`
/// edges at its current k (in edge order).
IRONKERNELS_HD Proposal propose(Rng& rng, const Round& round, const GraphView& g, const std::int32_t* pos,
                                const std::int32_t* hot, std::int32_t hot_count) {
  Proposal p;
  if (hot_count > 0 && static_cast<std::uint32_t>(rng.next() >> 32) < round.hot_threshold) {
    const std::int32_t e = hot[rng.below(static_cast<std::uint32_t>(hot_count))];
    p.v = g.ends[2 * e + (rng.next() >> 63)];
  } else {
    p.v = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(g.n)));
  }
  const std::uint32_t kind = static_cast<std::uint32_t>(rng.next() >> 32);
  const std::int32_t deg = g.first[p.v + 1] - g.first[p.v];
  if (kind < round.global_threshold) {
    p.x = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(round.width) + 1u));
    p.y = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(round.height) + 1u));
  } else if (deg > 0 && kind < round.global_threshold + round.neighbour_threshold) {
    const std::int32_t w = g.neighbour[g.first[p.v] + static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(deg)))];
    p.x = clamp_to(static_cast<std::int64_t>(pos[2 * w]) + rng.offset(round.neighbour_radius), round.width);
    p.y = clamp_to(static_cast<std::int64_t>(pos[2 * w + 1]) + rng.offset(round.neighbour_radius), round.height);
  } else {
    p.x = clamp_to(static_cast<std::int64_t>(pos[2 * p.v]) + rng.offset(round.radius), round.width);
    p.y = clamp_to(static_cast<std::int64_t>(pos[2 * p.v + 1]) + rng.offset(round.radius), round.height);
  }
  return p;
}

/// Metropolis with the table of -ln u (log_table: kLogTable doubles).
IRONKERNELS_HD bool accept(Rng& rng, std::int64_t rise, double temperature, const double* log_table) {
  if (rise <= 0) return true;
  const double l = log_table[rng.next() >> (64 - kLogTableBits)];
  return static_cast<double>(rise) <= temperature * l;
}

/// (k, edges at k, total) compared lexicographically: a better than b.
IRONKERNELS_HD bool better(std::int64_t ka, std::int64_t aa, std::int64_t ta, std::int64_t kb, std::int64_t ab,
                           std::int64_t tb) {
  if (ka != kb) return ka < kb;
  if (aa != ab) return aa < ab;
  return ta < tb;
}

}  // namespace ironkernels::lcn::anneal
