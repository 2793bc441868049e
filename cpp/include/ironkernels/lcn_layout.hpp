#pragma once
// Start drawings for the local-crossing-number solver and lower bounds on k.
//
// legalise() turns any drawing into a valid one (lcn.hpp's semantics: distinct grid points inside
// [0, width] × [0, height], no vertex on an edge it is not an endpoint of) with few moves;
// start_layout() computes a layout from the graph alone and legalises it; k_lower_bound() states
// how small k can be at best, in any straight-line (indeed any) drawing of the graph.
#include <cstdint>
#include <string>
#include <vector>

#include "ironkernels/core/array.hpp"
#include "ironkernels/core/export.hpp"

namespace IRONKERNELS_EXPORT ironkernels {
namespace lcn {

/// Makes the drawing in `xy` ((n, 2) int64 host array, any values; edges (m, 2)) valid, in place: coordinates are
/// clamped into the box, then every vertex that shares a point with a lower-numbered vertex, lies
/// on a non-incident edge, or whose edges would pass through another vertex, moves to the nearest
/// legal grid point of its position (a square spiral, then random points). Vertices that are
/// already legal keep their points. Where some vertex finds no legal point (grids tight for the
/// graph), every vertex takes a point and a min-conflicts search of moves and swaps removes the
/// remaining vertex-on-edge conflicts. Deterministic for a given seed. Throws ValueError for bad
/// edges or a box outside [0, 2^30], when the grid has fewer than n points, and when that search
/// finds no valid drawing within its budget (then `xy` is left as it was given): more points than
/// vertices do not make a valid drawing possible (K_9 has none on 3 × 3 points, where some three of
/// its vertices are collinear; on a line only paths fit), and the budget is the only way to stop.
void legalise(const ArrayView& xy, const ArrayView& edges, std::int64_t width, std::int64_t height, std::uint64_t seed);

/// A valid drawing (2n coordinates) computed from the graph alone (n vertices, edges (m, 2) int64 host): "circle" (vertices on an ellipse
/// filling the box, in depth-first order so that neighbours sit close, a tree never crosses),
/// "stress" (stress minimisation on hop distances: pivot MDS, then stochastic gradient descent on
/// all pairs, or on the sparse pivot model above 2000 vertices), "pivotmds" (that pivot MDS alone:
/// classical MDS on the hop distances of 50 pivots, linear time), "random" (uniform grid points).
/// Connected components are laid out apart and packed side by side; the real layout is scaled to
/// fill the box (separately in x and y: an affine map keeps every crossing), rounded to grid points
/// and legalised. ValueError for another method or as legalise().
std::vector<std::int64_t> start_layout(const std::string& method, std::int64_t n, const ArrayView& edges,
                                       std::int64_t width, std::int64_t height, std::uint64_t seed);

/// The methods start_layout() accepts.
std::vector<std::string> start_layout_methods();

/// A lower bound on k and the argument that gave it (a short name for a user interface: "crossing
/// lemma", "k-planar density", ...; "none" when the bound is 0).
struct KLowerBound {
  std::int64_t k = 0;
  std::string reason = "none";
};

/// Whether the caller knows the graph to be planar.
enum class Planarity : int { unknown = -1, no = 0, yes = 1 };

/// Lower bound on k for a simple graph with n non-isolated vertices and m edges (ValueError when m
/// exceeds n(n-1)/2 or either count is negative or above 2^36). Planarity::no adds k >= 1.
KLowerBound k_lower_bound(std::int64_t n, std::int64_t m, Planarity planar = Planarity::unknown);

/// The same for an edge list ((m, 2) int64 host array; vertices 0 … n-1): duplicate edges and isolated vertices are left out,
/// bipartite graphs get the stronger bipartite bounds, and the bounds are also taken over every
/// connected component and every subgraph of a min-degree peeling (k of a subgraph's drawing never
/// exceeds k of the whole). ValueError for an edge to an unknown vertex or a self-loop.
KLowerBound k_lower_bound(std::int64_t n, const ArrayView& edges, Planarity planar = Planarity::unknown);

}  // namespace lcn
}  // namespace ironkernels
