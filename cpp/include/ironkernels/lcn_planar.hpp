#pragma once
// Planarity and planar straight-line grid drawings: the k = 0 start layouts of the lcn solver.
//
// is_planar runs the left-right planarity test (Brandes, "The left-right planarity test", 2009);
// planar_grid_drawing also builds a combinatorial embedding, adds dummy edges until the graph is a
// triangulation on the same vertices (connected, biconnected, every face a triangle, never a parallel
// edge), computes a Schnyder wood from a canonical ordering and places every vertex by counting the
// vertices in its three regions (Schnyder, "Embedding planar graphs on the grid", SODA 1990; Felsner,
// "Geometric graphs and arrangements", ch. 2). The dummy edges are not part of the result. All steps
// are linear in n + m (no recursion: any n fits the stack) and deterministic.
//
// The drawing lies in [0, max(n-2, 1)]² with integer coordinates: no two edges cross (k = 0), the
// points are distinct, and no vertex lies on an edge it is not an endpoint of. (lcn's evaluators take
// coordinates up to 2^30, so n up to 2^30 + 2.) The caller puts it into a larger W × H box with scale_to_box
// (positive integer factors per axis keep every orientation sign, so the drawing stays valid).
//
// Input for all three: n vertices, m (source, target) pairs in `edges` (2m int64). Duplicate edges
// and both directions of one edge are allowed (the graph is their simple union); isolated vertices
// and any number of components are allowed. ValueError: n or m negative, an endpoint outside [0, n),
// a self-loop (named by its edge index), or n above 2^32.
#include <cstdint>

#include "ironkernels/core/array.hpp"
#include "ironkernels/core/export.hpp"

namespace IRONKERNELS_EXPORT ironkernels {
namespace lcn {

/// Whether the graph (n vertices, edges (m, 2) int64 host) has a crossing-free drawing in the plane.
bool is_planar(std::int64_t n, const ArrayView& edges);

/// A planar straight-line drawing on Schnyder's (n-2) × (n-2) grid: writes n (x, y) pairs to xy_out
/// ((n, 2) int64 host) and returns true, or returns false (writing nothing) when the graph is not planar.
/// n = 1: (0, 0); n = 2: (0, 0), (1, 0).
bool planar_grid_drawing(std::int64_t n, const ArrayView& edges, const ArrayView& xy_out);

/// Scales a drawing ((n, 2) int64 host) with non-negative coordinates into [0, width] × [0, height]: x by
/// floor(width / max x) and y by floor(height / max y) (an axis whose maximum is 0 stays). Returns
/// false, writing nothing, when the drawing does not fit (max x > width or max y > height).
/// ValueError: a negative coordinate, width or height.
bool scale_to_box(const ArrayView& xy, std::int64_t width, std::int64_t height);

}  // namespace lcn
}  // namespace ironkernels
