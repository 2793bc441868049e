// Exact evaluation of a grid drawing on the CPU, across all cores: pairs of edges all against all or
// through a uniform grid (whichever tests fewer), vertices against the edges whose box covers their
// cell. The bounding-box test in front of every predicate rejects most pairs cheaply.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/threads.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/lcn.hpp"
#include "lcn/lcn_internal.hpp"
#include "lcn/predicates.hpp"

namespace ironkernels::lcn {
namespace {

using detail::Box;
using detail::cross_properly;
using detail::on_segment;
using detail::Point;

// A uniform grid over the drawing's bounding square: each edge is listed in every cell its bounding
// box touches (compressed rows). Pairs of edges are tested in the cells they share and counted only
// in the cell holding the lower-left corner of their boxes' intersection, so exactly once.
struct Grid {
  std::int64_t side = 1, x_extent = 1, y_extent = 1;
  std::vector<std::int64_t> start, items;
  std::int64_t cell_x(std::int64_t x) const { return std::min(side - 1, x * side / x_extent); }
  std::int64_t cell_y(std::int64_t y) const { return std::min(side - 1, y * side / y_extent); }

  Grid() = default;
  // About one cell per edge (at most 2^12 a side); no edges listed yet.
  Grid(std::int64_t m, std::int64_t max_x, std::int64_t max_y) : x_extent(max_x + 1), y_extent(max_y + 1) {
    while (side * side < m && side < (1 << 12)) side *= 2;
  }

  // How many edges each cell would list, from a 2-D difference array: O(m + cells) however long the
  // edges are (listing them costs the sum of these counts, which a random layout makes ~m·cells).
  std::vector<std::int64_t> occupancy(const std::vector<Box>& box) const {
    const std::int64_t w = side + 1;
    std::vector<std::int64_t> d(static_cast<std::size_t>(w * w), 0);
    for (const Box& b : box) {
      const std::int64_t x0 = cell_x(b.x0), x1 = cell_x(b.x1) + 1, y0 = cell_y(b.y0), y1 = cell_y(b.y1) + 1;
      ++d[y0 * w + x0], --d[y0 * w + x1], --d[y1 * w + x0], ++d[y1 * w + x1];
    }
    std::vector<std::int64_t> count(static_cast<std::size_t>(side * side));
    for (std::int64_t y = 0; y < side; ++y)
      for (std::int64_t x = 0; x < side; ++x) {
        std::int64_t& v = d[y * w + x];
        if (x) v += d[y * w + x - 1];
        if (y) v += d[(y - 1) * w + x];
        if (x && y) v -= d[(y - 1) * w + x - 1];
        count[y * side + x] = v;
      }
    return count;
  }

  // Lists every edge in its cells, given occupancy(box).
  void fill(const std::vector<Box>& box, const std::vector<std::int64_t>& count) {
    start.assign(count.size() + 1, 0);
    for (std::size_t c = 0; c < count.size(); ++c) start[c + 1] = start[c] + count[c];
    items.resize(static_cast<std::size_t>(start.back()));
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    for (std::int64_t e = 0; e < static_cast<std::int64_t>(box.size()); ++e)
      for (std::int64_t cy = cell_y(box[e].y0); cy <= cell_y(box[e].y1); ++cy)
        for (std::int64_t cx = cell_x(box[e].x0); cx <= cell_x(box[e].x1); ++cx) items[next[cy * side + cx]++] = e;
  }
};

// Below this many edges all pairs are cheaper than building the grid.
constexpr std::int64_t kGridFromEdges = 2048;

}  // namespace

namespace detail {
void check_vertex_coordinates(std::int64_t v, std::int64_t x, std::int64_t y) {
  if (coordinate_outside(x, y)) raise<ValueError>("lcn: vertex ", v, " at (", x, ", ", y, ") has a coordinate outside [0, 2^30]");
}

void check_edge(std::int64_t e, std::int64_t s, std::int64_t t, std::int64_t n) {
  if (s < 0 || s >= n || t < 0 || t >= n)
    raise<ValueError>("lcn: edge ", e, " joins vertices ", s, " and ", t, "; vertices are 0 … ", n - 1);
  if (s == t) raise<ValueError>("lcn: edge ", e, " is a self-loop at vertex ", s);
}

void check_vertex_index(std::int64_t v, std::int64_t n) {
  if (v < 0 || v >= n) raise<ValueError>("lcn: vertex ", v, " does not exist; vertices are 0 … ", n - 1);
}

void check_position(std::int64_t x, std::int64_t y) {
  if (coordinate_outside(x, y)) raise<ValueError>("lcn: position (", x, ", ", y, ") has a coordinate outside [0, 2^30]");
}

void check_candidates(const std::int64_t* xy, std::int64_t count) {
  for (std::int64_t c = 0; c < count; ++c)
    if (coordinate_outside(xy[2 * c], xy[2 * c + 1]))
      raise<ValueError>("lcn: candidate ", c, " at (", xy[2 * c], ", ", xy[2 * c + 1], ") has a coordinate outside [0, 2^30]");
}

void validate_input(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                    std::int64_t width, std::int64_t height) {
  if (width < 0 || width > kMaxCoordinate || height < 0 || height > kMaxCoordinate)
    raise<ValueError>("lcn: width and height must lie in [0, 2^30], got ", width, " and ", height);
  for (std::int64_t v = 0; v < n; ++v) check_vertex_coordinates(v, xy[2 * v], xy[2 * v + 1]);
  for (std::int64_t e = 0; e < m; ++e) check_edge(e, edges[2 * e], edges[2 * e + 1], n);
}

Evaluation evaluate_impl(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                         std::int64_t width, std::int64_t height, bool with_validity, const Progress& progress) {
  validate_input(xy, n, edges, m, width, height);
  std::vector<Point> p(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) p[v] = {xy[2 * v], xy[2 * v + 1]};
  std::vector<std::int64_t> s(static_cast<std::size_t>(m)), t(static_cast<std::size_t>(m));
  std::vector<Box> box(static_cast<std::size_t>(m));
  for (std::int64_t e = 0; e < m; ++e) {
    s[e] = edges[2 * e];
    t[e] = edges[2 * e + 1];
    box[e] = detail::box_of(p[s[e]], p[t[e]]);
  }

  Evaluation ev;
  ev.edge_crossings.assign(static_cast<std::size_t>(m), 0);
  auto boxes_meet = [&](std::int64_t e, std::int64_t f) { return detail::boxes_meet(box[e], box[f]); };
  auto crossing = [&](std::int64_t e, std::int64_t f) {
    if (s[e] == s[f] || s[e] == t[f] || t[e] == s[f] || t[e] == t[f]) return false;
    return cross_properly(p[s[e]], p[t[e]], p[s[f]], p[t[f]]);
  };
  std::int64_t max_x = 0, max_y = 0;
  for (const Point& q : p) max_x = std::max(max_x, q.x), max_y = std::max(max_y, q.y);
  // The grid tests a pair in every cell the two boxes share: with long edges (a random layout) that
  // costs more than all pairs, so it is built only when its pair count is the smaller one.
  Grid grid;
  bool use_grid = false;
  if (m >= kGridFromEdges) {
    grid = Grid(m, max_x, max_y);
    const std::vector<std::int64_t> count = grid.occupancy(box);
    double grid_pairs = 0;
    for (const std::int64_t c : count) grid_pairs += static_cast<double>(c) * static_cast<double>(c - 1) / 2;
    use_grid = grid_pairs < static_cast<double>(m) * static_cast<double>(m - 1) / 2;
    if (use_grid) grid.fill(box, count);
  }
  // Progress in work items: the rows (all pairs) or cells (grid) of the crossing count, then the
  // vertices (grid) or edges (all pairs) of the validity sweep.
  const std::int64_t cells = grid.side * grid.side;
  const std::int64_t crossing_items = use_grid ? cells : m;
  const std::int64_t total_items = crossing_items + (with_validity ? (use_grid ? n : m) : 0);
  auto poll_from = [&](std::int64_t offset) -> std::function<void(std::int64_t)> {
    if (!progress) return {};
    return [&progress, offset, total_items](std::int64_t done) { progress(offset + done, total_items); };
  };
  if (progress) progress(0, total_items);
  // Each worker counts into its own array (one per worker, not per chunk), added up at the end:
  // integer sums, the same whatever the threads and the order of the chunks.
  const int workers = cpu_threads();
  std::vector<std::vector<std::int64_t>> local(static_cast<std::size_t>(workers));
  auto local_of = [&](int w) -> std::vector<std::int64_t>& {
    if (local[w].empty()) local[w].assign(static_cast<std::size_t>(m), 0);
    return local[w];
  };
  if (!use_grid) {
    // Row e has m - 1 - e partners: item i is row i/2 or row m-1-i/2 alternately, so every chunk of
    // items holds about the same number of pairs.
    ironkernels::detail::parallel_chunks(m, 32, workers, [&](int w, std::int64_t i0, std::int64_t i1) {
      std::vector<std::int64_t>& counts = local_of(w);
      for (std::int64_t i = i0; i < i1; ++i) {
        const std::int64_t e = i % 2 ? m - 1 - i / 2 : i / 2;
        for (std::int64_t f = e + 1; f < m; ++f)
          if (boxes_meet(e, f) && crossing(e, f)) ++counts[e], ++counts[f];
      }
    }, poll_from(0));
  } else {
    ironkernels::detail::parallel_chunks(cells, 16, workers, [&](int w, std::int64_t c0, std::int64_t c1) {
      std::vector<std::int64_t>& counts = local_of(w);
      for (std::int64_t c = c0; c < c1; ++c)
        for (std::int64_t i = grid.start[c]; i < grid.start[c + 1]; ++i)
          for (std::int64_t j = i + 1; j < grid.start[c + 1]; ++j) {
            const std::int64_t e = grid.items[i], f = grid.items[j];
            if (!boxes_meet(e, f)) continue;
            const std::int64_t owner = grid.cell_y(std::max(box[e].y0, box[f].y0)) * grid.side +
                                       grid.cell_x(std::max(box[e].x0, box[f].x0));
            if (owner == c && crossing(e, f)) ++counts[e], ++counts[f];
          }
    }, poll_from(0));
  }
  for (const std::vector<std::int64_t>& counts : local)
    if (!counts.empty())
      for (std::int64_t e = 0; e < m; ++e) ev.edge_crossings[e] += counts[e];
  local.clear();
  for (std::int64_t e = 0; e < m; ++e) {
    ev.total_crossings += ev.edge_crossings[e];
    detail::merge_k(ev.k, ev.edges_at_k, ev.edge_crossings[e], std::int64_t(1));
  }
  ev.total_crossings /= 2;
  if (!with_validity) {
    if (progress) progress(total_items, total_items);
    return ev;
  }

  // Validity: outside the grid, shared points (vertices sorted by point), vertices on non-incident edges.
  for (std::int64_t v = 0; v < n; ++v)
    if (p[v].x > width || p[v].y > height) ev.violations.push_back({Violation::Kind::outside_grid, v, -1});
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) order[v] = v;
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return p[a].x != p[b].x ? p[a].x < p[b].x : p[a].y != p[b].y ? p[a].y < p[b].y : a < b;
  });
  for (std::int64_t i = 0; i < n;) {
    std::int64_t j = i + 1;
    while (j < n && p[order[j]].x == p[order[i]].x && p[order[j]].y == p[order[i]].y) ++j;
    // Each later vertex at the point is listed with the first (lowest index) one there: n - 1
    // entries for n coincident vertices, not n²/2.
    for (std::int64_t b = i + 1; b < j; ++b) ev.violations.push_back({Violation::Kind::same_point, order[i], order[b]});
    i = j;
  }
  // Vertices on non-incident edges. With the edge grid, each vertex tests the edges listed in its cell;
  // without it (long edges), the vertices are listed by cell and each edge tests those in the cells
  // its bounding box covers.
  std::vector<std::vector<Violation>> found_by(static_cast<std::size_t>(workers));  // one list per worker
  auto test = [&](std::int64_t v, std::int64_t e, std::vector<Violation>& found) {
    if (v == s[e] || v == t[e]) return;
    // A vertex at an endpoint's point is a same-point violation already.
    const Point a = p[s[e]], b = p[t[e]];
    if ((p[v].x == a.x && p[v].y == a.y) || (p[v].x == b.x && p[v].y == b.y)) return;
    if (on_segment(p[v], a, b)) found.push_back({Violation::Kind::vertex_on_edge, v, e});
  };
  if (use_grid) {
    ironkernels::detail::parallel_chunks(n, 256, workers, [&](int w, std::int64_t v0, std::int64_t v1) {
      std::vector<Violation>& found = found_by[w];
      for (std::int64_t v = v0; v < v1; ++v) {
        const std::int64_t c = grid.cell_y(p[v].y) * grid.side + grid.cell_x(p[v].x);
        for (std::int64_t i = grid.start[c]; i < grid.start[c + 1]; ++i) test(v, grid.items[i], found);
      }
    }, poll_from(crossing_items));
  } else {
    std::vector<Box> at(static_cast<std::size_t>(n));
    for (std::int64_t v = 0; v < n; ++v) at[v] = {p[v].x, p[v].y, p[v].x, p[v].y};
    Grid vertices(n, max_x, max_y);
    vertices.fill(at, vertices.occupancy(at));
    ironkernels::detail::parallel_chunks(m, 32, workers, [&](int w, std::int64_t e0, std::int64_t e1) {
      std::vector<Violation>& found = found_by[w];
      for (std::int64_t e = e0; e < e1; ++e)
        for (std::int64_t cy = vertices.cell_y(box[e].y0); cy <= vertices.cell_y(box[e].y1); ++cy)
          for (std::int64_t cx = vertices.cell_x(box[e].x0); cx <= vertices.cell_x(box[e].x1); ++cx) {
            const std::int64_t c = cy * vertices.side + cx;
            for (std::int64_t i = vertices.start[c]; i < vertices.start[c + 1]; ++i) test(vertices.items[i], e, found);
          }
    }, poll_from(crossing_items));
  }
  for (const std::vector<Violation>& found : found_by)  // the order is fixed by the sort below
    ev.violations.insert(ev.violations.end(), found.begin(), found.end());
  std::stable_sort(ev.violations.begin(), ev.violations.end(), [](const Violation& x, const Violation& y) {
    if (x.kind != y.kind) return x.kind < y.kind;
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  if (progress) progress(total_items, total_items);
  return ev;
}
}  // namespace detail

Evaluation evaluate(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                    std::int64_t width, std::int64_t height, const Progress& progress) {
  return detail::evaluate_impl(xy, n, edges, m, width, height, true, progress);
}

}  // namespace ironkernels::lcn
