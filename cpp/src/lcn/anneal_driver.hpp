#pragma once
// The host side of the annealer, shared by both backends: the graph in the chains' layout, the
// schedule (temperature, radius, phase) of each round, restarts from the best chain, the time and
// move budget, progress and the final exact check. A backend only runs rounds of moves on its chains.
#include <cstdint>
#include <climits>
#include <vector>

#include "ironkernels/lcn_solve.hpp"
#include "lcn/anneal_common.hpp"

namespace ironkernels::lcn::anneal {

/// The input drawing and graph as int32 arrays (coordinates are at most 2^30).
struct Problem {
  std::int32_t n = 0, m = 0, width = 0, height = 0;
  std::vector<std::int32_t> xy, ends, first, neighbour, edge;
  std::vector<std::int32_t> counts;  ///< the input drawing's crossings per edge
  std::int32_t max_degree = 0;
  GraphView view() const { return {n, m, ends.data(), first.data(), neighbour.data(), edge.data()}; }
};

/// What Backend::probe gives for an illegal move.
constexpr std::int64_t kIllegalMove = INT64_MIN;

struct Figures {
  std::int64_t k = 0, at_k = 0, total = 0;
};

/// Checks the input (ValueError) and evaluates it; the drawing must be valid.
Problem make_problem(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                     std::int64_t width, std::int64_t height, const char* fn);

/// -ln((i + 0.5) / kLogTable) for every i.
std::vector<double> log_table();

/// Proposals per chain in one round: from the graph's size only (not from time), so that a move budget
/// gives the same rounds, and the same chains, on every machine and backend.
std::int64_t round_moves(const Problem& p);

class Backend {
 public:
  virtual ~Backend() = default;
  /// Every chain starts from the input drawing, with its own random numbers.
  virtual void start(std::int64_t chains, std::uint64_t seed) = 0;
  /// `moves` proposals on every chain.
  virtual void run_round(const Round& round, std::int64_t moves) = 0;
  /// The first-phase energy rises of moving q[i].v to (q[i].x, q[i].y) on the input drawing (kIllegalMove
  /// where illegal), for all of q or a prefix of it with at least `uphill` rises above 0. After start().
  virtual std::vector<std::int64_t> probe(const std::vector<Proposal>& q, int uphill) = 0;
  /// Each chain's best figures so far.
  virtual std::vector<Figures> bests() = 0;
  /// Chain c continues from chain from[c]'s best drawing (from[c] < 0: unchanged).
  virtual void restart(const std::vector<std::int32_t>& from) = 0;
  /// Chain c's best drawing (2n coordinates).
  virtual std::vector<std::int32_t> best_drawing(std::int64_t c) = 0;
  /// Seconds the device spent in search kernels so far (0 on the CPU).
  virtual double busy_seconds() { return 0; }
};

SolveResult run_search(const Problem& p, const SolveOptions& options, std::int64_t chains, Backend& backend,
                       const SolveCallback& callback);

}  // namespace ironkernels::lcn::anneal
