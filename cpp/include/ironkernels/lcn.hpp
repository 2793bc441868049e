#pragma once
// Straight-line drawings on an integer grid (GD Contest 2025, "k-plane drawings"): exact crossing
// counts and validity.
//
// Semantics (the contest's): two edges cross iff they share no endpoint and their segments cross
// properly (strict orientation tests). A drawing is valid iff its vertices lie at distinct grid
// points inside [0, width] × [0, height] and no vertex lies on an edge it is not an endpoint of.
// k is the largest number of crossings on one edge. Every predicate is exact: coordinates are limited
// to [0, 2^30], so coordinate differences are at most 2^30 in magnitude, their products at most 2^60,
// and every orientation determinant (a difference of two such products) at most 2^61 in magnitude:
// exact in int64. The CPU kernels compute in double where every value is an integer it holds exactly
// (coordinate extents up to 2^26), and beyond that use double only as a filter with a proven error
// bound, deciding the uncertain cases in int64.
//
// Backends: the CPU evaluator (a sweep over the edges sorted by x, in horizontal strips for short
// edges, with SIMD kernels), incremental moves and batched candidates on the CPU (Evaluator) and on a
// CUDA device (GpuEvaluator).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ironkernels/core/array.hpp"
#include "ironkernels/core/export.hpp"

namespace IRONKERNELS_EXPORT ironkernels {
namespace lcn {

constexpr std::int64_t kMaxCoordinate = std::int64_t(1) << 30;

struct Violation {
  enum class Kind : std::uint8_t {
    same_point,      ///< vertex b at the point of vertex a, the lowest-numbered vertex there
    vertex_on_edge,  ///< vertex a on edge b (not one of its endpoints)
    outside_grid,    ///< vertex a outside [0, width] × [0, height]
  };
  Kind kind;
  std::int64_t a, b;  ///< vertex indices (b: the second vertex, or the edge index; -1 when unused)
};

struct Evaluation {
  std::vector<std::int64_t> edge_crossings;  ///< per edge, in input order
  std::int64_t k = 0;                        ///< max over edges
  std::int64_t edges_at_k = 0;               ///< edges with k crossings (0 when there are no edges)
  std::int64_t total_crossings = 0;          ///< number of crossing pairs
  std::vector<Violation> violations;         ///< sorted by kind, then a, then b
  bool valid() const { return violations.empty(); }
};

/// Progress and cancellation of long CPU work: progress(done, total) is called on the calling thread
/// with the work items finished so far (an unspecified unit, `total` fixed for the call, `done`
/// non-decreasing): once with done = 0 before the work, between chunks of it at most every 50 ms, and
/// once with done = total when it is finished. An exception it throws stops the work within one chunk
/// per thread (milliseconds), joins the worker threads and propagates out of the call, which then
/// writes nothing (an interrupted count_crossings leaves `counts` as it was). Empty: no calls.
using Progress = std::function<void(std::int64_t done, std::int64_t total)>;

/// Evaluates a drawing: `xy` (n, 2) holds the vertices' (x, y), `edges` (m, 2) (source, target)
/// vertex indices, both int64 host arrays, C-contiguous. Throws TypeError/ValueError (before computing
/// anything) for another dtype, shape, layout or device, a coordinate, width or height outside
/// [0, 2^30], an edge endpoint outside [0, n), or a self-loop. `progress`: see Progress.
Evaluation evaluate(const ArrayView& xy, const ArrayView& edges, std::int64_t width, std::int64_t height,
                    const Progress& progress = {});

/// Per-edge crossing counts only (no validity), on the device of the arrays: xy (n, 2) and edges (m, 2)
/// int64, counts (m,) int64, all C-contiguous, on the host (CPU evaluator) or one CUDA device (all-pairs
/// kernel, ordered on `stream`). The inputs are validated like evaluate()'s (on a device by a check
/// kernel, waited for before counts is written) and raise ValueError. `progress` (see Progress) is
/// called for host arrays only (the device count is one short kernel).
void count_crossings(const ArrayView& xy, const ArrayView& edges, const ArrayView& counts, Stream stream = nullptr,
                     const Progress& progress = {});

/// Figures of the drawing after a vertex moved to a candidate position.
struct CandidateFigures {
  std::int64_t k = 0, edges_at_k = 0, total_crossings = 0;
  bool legal = false;  ///< inside the grid, on no other vertex, on no non-incident edge, no other vertex on its edges
};

/// Keeps a drawing's per-edge crossing counts and updates them exactly when one vertex moves: only
/// the moving vertex's edges change geometry, so a move costs O(degree · m) instead of O(m²).
class Evaluator {
 public:
  /// Validates and evaluates the drawing (evaluate()'s arrays and checks, with `progress`).
  Evaluator(const ArrayView& xy, const ArrayView& edges, std::int64_t width, std::int64_t height,
            const Progress& progress = {});
  ~Evaluator();
  Evaluator(Evaluator&&) noexcept;
  Evaluator& operator=(Evaluator&&) noexcept;
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  const std::vector<std::int64_t>& edge_crossings() const;
  std::int64_t position(std::int64_t v, int axis) const;
  /// Moves v to (x, y) (any point in [0, 2^30]²; legality is the caller's choice) and updates the counts.
  void move(std::int64_t v, std::int64_t x, std::int64_t y);
  /// The figures the drawing would have with v at each (x, y) row of `xy` (a (count, 2) int64 host
  /// array), without moving it. Runs the candidates across all CPU cores.
  std::vector<CandidateFigures> candidates(std::int64_t v, const ArrayView& xy) const;

  struct Impl;

 private:
  Impl& state() const;  // ValueError for a moved-from Evaluator
  std::unique_ptr<Impl> impl_;
};

/// Evaluator on a CUDA device: the drawing and its per-edge counts live in device memory; a move is
/// one kernel pass over the edges, and candidates() evaluates a whole batch of positions for one
/// vertex in one launch (the solver's inner loop), with the same results as Evaluator.
/// Calls are synchronous with respect to the host (they wait for `stream`).
class GpuEvaluator {
 public:
  /// evaluate()'s host arrays in, validated as it validates them before anything is copied.
  GpuEvaluator(const ArrayView& xy, const ArrayView& edges, std::int64_t width, std::int64_t height, Device device,
               Stream stream = nullptr);
  ~GpuEvaluator();
  GpuEvaluator(GpuEvaluator&&) noexcept;
  GpuEvaluator& operator=(GpuEvaluator&&) noexcept;
  GpuEvaluator(const GpuEvaluator&) = delete;
  GpuEvaluator& operator=(const GpuEvaluator&) = delete;

  std::vector<std::int64_t> edge_crossings(Stream stream = nullptr) const;
  void move(std::int64_t v, std::int64_t x, std::int64_t y, Stream stream = nullptr);
  std::vector<CandidateFigures> candidates(std::int64_t v, const ArrayView& xy, Stream stream = nullptr) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace lcn
}  // namespace ironkernels
