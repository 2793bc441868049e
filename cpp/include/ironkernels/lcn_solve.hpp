#pragma once
// The local-crossing-number solver: simulated annealing on a valid grid drawing, minimising
// (k, edges at k, total crossings) lexicographically, on the CPU (all cores) or on a CUDA device
// (the whole search in kernels, the host only reading progress between rounds).
//
// Both backends run the same chains: the same proposals, energy, schedule and restarts
// (cpp/src/lcn/anneal_common.hpp); they differ in how a proposal's crossings are counted and in
// how many chains run at once.
#include <cstdint>
#include <functional>
#include <vector>

#include "ironkernels/core/export.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/lcn.hpp"

namespace IRONKERNELS_EXPORT ironkernels {
namespace lcn {

struct SolveOptions {
  double time_limit = 10.0;     ///< seconds of wall clock; <= 0 for none (then max_moves must be > 0)
  std::int64_t max_moves = 0;   ///< proposals over all chains; > 0 makes the search independent of time
  std::uint64_t seed = 0;
  std::int64_t chains = 0;      ///< chains run at once; 0 picks from the backend and the drawing's size
};

/// A point of the search's history: the best drawing found so far and the work done.
struct SolveSnapshot {
  double seconds = 0;
  std::int64_t k = 0, edges_at_k = 0, total_crossings = 0;
  std::int64_t moves = 0;  ///< proposals evaluated so far, all chains
};

/// Called on the calling thread between rounds (at most every ~0.2 s, and once at the end) with the best
/// so far; returning false stops the search, which then returns the best drawing found. An exception
/// it throws propagates (after the worker threads or kernels have finished their round).
using SolveCallback = std::function<bool(const SolveSnapshot&)>;

struct SolveResult {
  std::vector<std::int64_t> xy;        ///< the best drawing, n (x, y) pairs; checked by evaluate()
  Evaluation evaluation;               ///< its exact evaluation (valid)
  std::vector<SolveSnapshot> history;  ///< each improvement of the best, and the last point
  std::int64_t moves = 0;
  double seconds = 0;
  double busy_fraction = 0;            ///< share of the wall time the device ran search kernels (CUDA only)
  std::int64_t chains = 0;
  bool stopped_by_callback = false;
};

/// Improves the valid drawing `xy` ((n, 2) int64 host; edges (m, 2)) on the CPU. Throws ValueError for an invalid
/// drawing or bad options before any work.
SolveResult solve_cpu(const ArrayView& xy, const ArrayView& edges, std::int64_t width, std::int64_t height,
                      const SolveOptions& options, const SolveCallback& callback = {});

/// The same search on a CUDA device (all chains resident there; `stream` orders its work).
SolveResult solve_cuda(const ArrayView& xy, const ArrayView& edges, std::int64_t width, std::int64_t height,
                       const SolveOptions& options, Device device, Stream stream = nullptr,
                       const SolveCallback& callback = {});

}  // namespace lcn
}  // namespace ironkernels
