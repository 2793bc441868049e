// Start layouts from the graph alone: circle, stress, random; components packed; the real layout
// mapped onto the grid and legalised.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn_layout.hpp"
#include "lcn/layout_graph.hpp"
#include "lcn/layout_internal.hpp"
#include "lcn/lcn_internal.hpp"

namespace ironkernels::lcn {
namespace {
using detail::Csr;

// Depth-first preorder of every component, components one after another, each from a vertex far
// from its lowest one (an end of a long path, so the order sweeps the component once). A tree in
// this order on a convex curve is drawn without crossings.
std::vector<std::int64_t> depth_first_order(const Csr& g) {
  std::vector<std::int64_t> order, stack, queue, comp;
  std::vector<std::int32_t> dist;
  std::vector<char> seen(static_cast<std::size_t>(g.n), 0);
  order.reserve(static_cast<std::size_t>(g.n));
  for (std::int64_t r = 0; r < g.n; ++r) {
    if (seen[r]) continue;
    detail::bfs(g, r, dist, queue);
    const std::int64_t start = queue.back();  // a vertex of largest distance from r
    stack.push_back(start);
    while (!stack.empty()) {
      const std::int64_t v = stack.back();
      stack.pop_back();
      if (seen[v]) continue;
      seen[v] = 1;
      order.push_back(v);
      for (std::int64_t i = g.offset[v + 1]; i-- > g.offset[v];)  // lowest neighbour visited first
        if (!seen[g.target[i]]) stack.push_back(g.target[i]);
    }
  }
  return order;
}

std::vector<double> circle_layout(const Csr& g) {
  const std::vector<std::int64_t> order = depth_first_order(g);
  std::vector<double> xy(static_cast<std::size_t>(2 * g.n));
  const double step = 6.283185307179586 / double(std::max<std::int64_t>(g.n, 1));
  for (std::int64_t i = 0; i < g.n; ++i) {
    xy[2 * order[i]] = std::cos(step * double(i));
    xy[2 * order[i] + 1] = std::sin(step * double(i));
  }
  return xy;
}

// A layout of each component (stress or pivot MDS), the components packed in shelves (tallest first)
// into rows about as wide as the box's aspect asks, a unit of space around each.
std::vector<double> component_layouts(const Csr& g, std::int64_t width, std::int64_t height, std::uint64_t seed,
                                      std::vector<double> (*layout)(const Csr&, std::uint64_t)) {
  std::vector<std::int64_t> comp;
  const std::int64_t count = detail::components(g, comp);
  std::vector<std::vector<std::int64_t>> members(static_cast<std::size_t>(count));
  for (std::int64_t v = 0; v < g.n; ++v) members[comp[v]].push_back(v);
  std::vector<std::int64_t> local(static_cast<std::size_t>(g.n));
  struct Box {
    double x0, y0, w, h;
  };
  std::vector<Box> boxes(static_cast<std::size_t>(count));
  std::vector<double> xy(static_cast<std::size_t>(2 * g.n), 0.0);
  for (std::int64_t c = 0; c < count; ++c) {
    const auto& vs = members[c];
    Csr sub;
    sub.n = static_cast<std::int64_t>(vs.size());
    sub.offset.assign(vs.size() + 1, 0);
    for (std::size_t i = 0; i < vs.size(); ++i) local[vs[i]] = static_cast<std::int64_t>(i);
    for (std::size_t i = 0; i < vs.size(); ++i) {
      for (std::int64_t a = g.offset[vs[i]]; a < g.offset[vs[i] + 1]; ++a) sub.target.push_back(local[g.target[a]]);
      sub.offset[i + 1] = static_cast<std::int64_t>(sub.target.size());
    }
    const std::vector<double> part = layout(sub, seed + 0x632BE59BD9B4E019ull * std::uint64_t(c));
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    for (std::size_t i = 0; i < vs.size(); ++i) {
      xy[2 * vs[i]] = part[2 * i];
      xy[2 * vs[i] + 1] = part[2 * i + 1];
      x0 = std::min(x0, part[2 * i]);
      x1 = std::max(x1, part[2 * i]);
      y0 = std::min(y0, part[2 * i + 1]);
      y1 = std::max(y1, part[2 * i + 1]);
    }
    boxes[c] = {x0, y0, x1 - x0 + 2.0, y1 - y0 + 2.0};  // a unit of margin on each side
  }
  if (count == 1) return xy;
  std::vector<std::int64_t> by_height(static_cast<std::size_t>(count));
  std::iota(by_height.begin(), by_height.end(), 0);
  std::stable_sort(by_height.begin(), by_height.end(),
                   [&](std::int64_t a, std::int64_t b) { return boxes[a].h > boxes[b].h; });
  double area = 0, widest = 0;
  for (const Box& b : boxes) {
    area += b.w * b.h;
    widest = std::max(widest, b.w);
  }
  const double aspect = double(std::max<std::int64_t>(width, 1)) / double(std::max<std::int64_t>(height, 1));
  const double row_width = std::max(widest, std::sqrt(area * aspect));
  double x = 0, y = 0, row_height = 0;
  std::vector<double> dx(static_cast<std::size_t>(count)), dy(static_cast<std::size_t>(count));
  for (const std::int64_t c : by_height) {
    if (x > 0 && x + boxes[c].w > row_width) {
      x = 0;
      y += row_height;
      row_height = 0;
    }
    dx[c] = x + 1.0 - boxes[c].x0;
    dy[c] = y + 1.0 - boxes[c].y0;
    x += boxes[c].w;
    row_height = std::max(row_height, boxes[c].h);
  }
  for (std::int64_t v = 0; v < g.n; ++v) {
    xy[2 * v] += dx[comp[v]];
    xy[2 * v + 1] += dy[comp[v]];
  }
  return xy;
}

// The layout stretched onto [0, W] × [0, H] (each axis on its own: an affine map keeps every
// crossing and every collinearity), rounded to grid points.
std::vector<std::int64_t> to_grid(const std::vector<double>& xy, std::int64_t n, std::int64_t width, std::int64_t height) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(2 * n));
  for (int a = 0; a < 2; ++a) {
    const std::int64_t extent = a == 0 ? width : height;
    double lo = INFINITY, hi = -INFINITY;
    for (std::int64_t v = 0; v < n; ++v) {
      lo = std::min(lo, xy[2 * v + a]);
      hi = std::max(hi, xy[2 * v + a]);
    }
    for (std::int64_t v = 0; v < n; ++v) {
      const double t = hi > lo ? (xy[2 * v + a] - lo) / (hi - lo) : 0.5;
      out[2 * v + a] = std::clamp<std::int64_t>(std::llround(t * double(extent)), 0, extent);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> start_layout_methods() { return {"circle", "stress", "pivotmds", "random"}; }

std::vector<std::int64_t> start_layout(const std::string& method, std::int64_t n, const ArrayView& edge_view,
                                       std::int64_t width, std::int64_t height, std::uint64_t seed) {
  const std::int64_t* edges = detail::host_pairs(edge_view, "edges");
  const std::int64_t m = edge_view.shape[0];
  if (method != "circle" && method != "stress" && method != "pivotmds" && method != "random")
    raise<ValueError>("lcn.start_layout: method '", method, "' is not one of circle, stress, pivotmds, random");
  if (n < 0 || m < 0) raise<ValueError>("lcn.start_layout: n = ", n, " and m = ", m, " must be non-negative");
  if (width < 0 || width > kMaxCoordinate || height < 0 || height > kMaxCoordinate)
    raise<ValueError>("lcn.start_layout: width and height must lie in [0, 2^30], got ", width, " and ", height);
  const Csr g = detail::simple_graph(n, edges, m);  // checks the edges
  std::vector<std::int64_t> xy;
  if (method == "random") {
    detail::Rng rng(seed);
    xy.resize(static_cast<std::size_t>(2 * n));
    for (std::int64_t v = 0; v < n; ++v) {
      xy[2 * v] = rng.below(width + 1);
      xy[2 * v + 1] = rng.below(height + 1);
    }
  } else {
    xy = to_grid(method == "circle"   ? circle_layout(g)
                 : method == "stress" ? component_layouts(g, width, height, seed, detail::stress_layout)
                                      : component_layouts(g, width, height, seed, detail::pivot_mds_layout),
                 n, width, height);
  }
  legalise(ArrayView::contiguous(xy.data(), DType::int64, {n, 2}), edge_view, width, height, seed);
  return xy;
}

}  // namespace ironkernels::lcn
