#pragma once
// Straight-line drawings on an integer grid (GD Contest 2025, "k-plane drawings"): exact crossing
// counts and validity.
//
// Semantics (the contest's): two edges cross iff they share no endpoint and their segments cross
// properly (strict orientation tests). A drawing is valid iff its vertices lie at distinct grid
// points inside [0, width] × [0, height] and no vertex lies on an edge it is not an endpoint of.
// k is the largest number of crossings on one edge. Integer arithmetic throughout, no floating point
// in any predicate: coordinates are limited to [0, 2^30], so coordinate differences are at most 2^30
// in magnitude, their products at most 2^60, and every orientation determinant (a difference of two
// such products) at most 2^61 in magnitude: exact in int64. Signs are compared, never multiplied.
//
// Status (issue 4): the CPU evaluator (all pairs). The spatial grid, incremental moves, batched
// candidates, drawing and the GPU evaluators follow.
#include <cstdint>
#include <vector>

namespace ironkernels::lcn {

constexpr std::int64_t kMaxCoordinate = std::int64_t(1) << 30;

struct Violation {
  enum class Kind : std::uint8_t {
    same_point,      ///< vertices a and b at the same point
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

/// Evaluates a drawing: `xy` holds n (x, y) pairs, `edges` m (source, target) vertex indices.
/// Throws ValueError (before computing anything) for a coordinate, width or height outside
/// [0, 2^30], an edge endpoint outside [0, n), or a self-loop.
Evaluation evaluate(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                    std::int64_t width, std::int64_t height);

}  // namespace ironkernels::lcn
