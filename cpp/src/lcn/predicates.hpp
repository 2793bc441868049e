#pragma once
// Exact geometric predicates of the lcn module, shared by the CPU evaluators and the CUDA kernel.
// Coordinates lie in [0, 2^30]: differences are at most 2^30, products 2^60, and the orientation
// determinant at most 2^61 in magnitude, exact in int64. Signs are compared, never multiplied.
#include <cstdint>

#include "ironkernels/lcn.hpp"  // kMaxCoordinate

#include "core/host_device.hpp"

namespace ironkernels::lcn::detail {

/// Input checks (the host raises with the details, the device kernel only finds the first bad item).
template <class I>
IRONKERNELS_HD bool coordinate_outside(I x, I y) {
  return x < 0 || x > kMaxCoordinate || y < 0 || y > kMaxCoordinate;
}
template <class I>
IRONKERNELS_HD bool edge_invalid(I s, I t, I n) {
  return s < 0 || s >= n || t < 0 || t >= n || s == t;  // an endpoint out of range, or a self-loop
}

struct Point {
  std::int64_t x, y;
};

/// The bounding box of a segment; segments whose boxes do not meet can neither cross nor touch.
struct Box {
  std::int64_t x0, y0, x1, y1;
};
IRONKERNELS_HD Box box_of(Point a, Point b) {
  return {a.x < b.x ? a.x : b.x, a.y < b.y ? a.y : b.y, a.x < b.x ? b.x : a.x, a.y < b.y ? b.y : a.y};
}
IRONKERNELS_HD bool boxes_meet(const Box& a, const Box& b) {
  return !(b.x0 > a.x1 || a.x0 > b.x1 || b.y0 > a.y1 || a.y0 > b.y1);
}

/// +1 counter-clockwise, -1 clockwise, 0 collinear.
IRONKERNELS_HD int orientation(Point a, Point b, Point c) {
  const std::int64_t d = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
  return (d > 0) - (d < 0);
}

/// Proper crossing: the endpoints of each segment lie strictly on both sides of the other's line.
IRONKERNELS_HD bool cross_properly(Point a, Point b, Point c, Point d) {
  const int o1 = orientation(a, b, c), o2 = orientation(a, b, d);
  if (o1 == 0 || o2 == 0 || o1 == o2) return false;
  const int o3 = orientation(c, d, a), o4 = orientation(c, d, b);
  return o3 != 0 && o4 != 0 && o3 != o4;
}

/// k (the largest crossing count) and how many edges reach it, merged with another part's: one
/// edge at a time (other_at_k = 1) on the CPU, partial reductions on the GPU. I is the caller's int64.
template <class I>
IRONKERNELS_HD void merge_k(I& k, I& at_k, I other_k, I other_at_k) {
  if (other_k > k) {
    k = other_k;
    at_k = other_at_k;
  } else if (other_k == k) {
    at_k += other_at_k;
  }
}

/// p on the closed segment [a, b].
IRONKERNELS_HD bool on_segment(Point p, Point a, Point b) {
  const Box box = box_of(a, b);  // the cheap test first
  return box.x0 <= p.x && p.x <= box.x1 && box.y0 <= p.y && p.y <= box.y1 && orientation(a, b, p) == 0;
}

}  // namespace ironkernels::lcn::detail
