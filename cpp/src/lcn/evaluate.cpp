// Exact evaluation of a grid drawing on the CPU, across all cores. Crossings: a sweep over the edges
// sorted by left x, in horizontal strips (one strip for long edges, many for short ones, whichever
// a cost estimate finds cheaper), so that only pairs overlapping in x within a strip are tested, by
// branch-free SIMD kernels (sweep.hpp). Validity: each edge against the vertices in the cells of a
// vertex grid that its bounding box covers.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/cpu_isa.hpp"
#include "core/threads.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/lcn.hpp"
#include "lcn/lcn_internal.hpp"
#include "lcn/predicates.hpp"
#include "lcn/sweep.hpp"

namespace ironkernels::lcn {

namespace detail {
const SweepKernels& sweep_kernels() {
#if defined(IRONKERNELS_X86_ISAS)
  switch (ironkernels::detail::active_cpu_isa()) {
    case ironkernels::detail::CpuIsa::avx512: return cpu_avx512::kernels;
    case ironkernels::detail::CpuIsa::avx2: return cpu_avx2::kernels;
    default: return cpu_baseline::kernels;
  }
#else
  return cpu_baseline::kernels;
#endif
}
}  // namespace detail

namespace {

using detail::Box;
using detail::Point;

// A uniform grid of vertices over the drawing's bounding square, about one cell per vertex (at most
// 2^12 a side), as compressed rows: the cells of one grid row are contiguous, so the vertices in a
// run of cells are one range.
struct Grid {
  std::int64_t side = 1, x_extent = 1, y_extent = 1;
  std::vector<std::int64_t> start, items;
  std::int64_t cell_x(std::int64_t x) const { return std::min(side - 1, x * side / x_extent); }
  std::int64_t cell_y(std::int64_t y) const { return std::min(side - 1, y * side / y_extent); }

  Grid(const std::vector<Point>& p, std::int64_t max_x, std::int64_t max_y) : x_extent(max_x + 1), y_extent(max_y + 1) {
    const std::int64_t n = static_cast<std::int64_t>(p.size());
    while (side * side < n && side < (1 << 12)) side *= 2;
    start.assign(static_cast<std::size_t>(side * side + 1), 0);
    for (const Point& q : p) ++start[cell_y(q.y) * side + cell_x(q.x) + 1];
    for (std::size_t c = 1; c < start.size(); ++c) start[c] += start[c - 1];
    items.resize(static_cast<std::size_t>(n));
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    for (std::int64_t v = 0; v < n; ++v) items[next[cell_y(p[v].y) * side + cell_x(p[v].x)]++] = v;
  }
};

// An edge with its endpoints relative to the drawing's minimum corner, a the left one.
struct Seg {
  std::int64_t ax, ay, bx, by;
};

// Horizontal strips 2^shift high over [0, y_extent] (a shift, not a division, per lookup).
struct Strips {
  int shift = 0;
  std::int64_t count = 1;
  Strips(int shift_, std::int64_t y_extent) : shift(shift_), count((y_extent >> shift_) + 1) {}
  std::int64_t of(std::int64_t y) const { return y >> shift; }
};

// From this many edges the strips are chosen by the cost estimate; below, one strip (the whole
// count takes microseconds, less than the estimate).
constexpr std::int64_t kChooseStripsFrom = 1024;
constexpr int kMaxStripsLog2 = 15;

int bit_width(std::int64_t v) {
  int b = 0;
  while (v >> b) ++b;
  return b;
}

// The order of 0 … m-1 by key (in [0, 2^31)), ties by index: a stable radix sort of (key, index)
// pairs packed in 64 bits, on the key's bits only.
std::vector<std::int64_t> order_by(const std::vector<std::int32_t>& key) {
  const std::int64_t m = static_cast<std::int64_t>(key.size());
  std::vector<std::int64_t> order(static_cast<std::size_t>(m));
  std::int64_t top = 0;
  for (const std::int32_t k : key) top = std::max<std::int64_t>(top, k);
  if (m < 256 || m >= (std::int64_t(1) << 32)) {
    for (std::int64_t e = 0; e < m; ++e) order[e] = e;
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return key[a] < key[b]; });
    return order;
  }
  std::vector<std::uint64_t> a(static_cast<std::size_t>(m)), b(a.size());
  for (std::int64_t e = 0; e < m; ++e) a[e] = static_cast<std::uint64_t>(key[e]) << 32 | static_cast<std::uint64_t>(e);
  const int bits = bit_width(top), passes = (bits + 10) / 11, width = passes ? (bits + passes - 1) / passes : 0;
  std::vector<std::int64_t> bucket(std::size_t(1) << width);
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = 32 + pass * width;
    const std::uint64_t mask = (std::uint64_t(1) << width) - 1;
    std::fill(bucket.begin(), bucket.end(), 0);
    for (const std::uint64_t v : a) ++bucket[(v >> shift) & mask];
    for (std::int64_t c = 0, sum = 0; c < static_cast<std::int64_t>(bucket.size()); ++c) {
      const std::int64_t n_c = bucket[c];
      bucket[c] = sum;
      sum += n_c;
    }
    for (const std::uint64_t v : a) b[bucket[(v >> shift) & mask]++] = v;
    a.swap(b);
  }
  for (std::int64_t i = 0; i < m; ++i) order[i] = static_cast<std::int64_t>(a[i] & 0xffffffffu);
  return order;
}

// The edges in left-x order, with what the strips need, read sequentially from here on (32-bit
// coordinates, below 2^31: less memory to touch), and the order of their right ends (`by_right`:
// indices into these arrays).
struct ByLeft {
  std::vector<std::int64_t> edge, by_right;
  std::vector<std::int32_t> ax, ay, bx, by;
  std::int64_t y0(std::int64_t i) const { return std::min(ay[i], by[i]); }
  std::int64_t y1(std::int64_t i) const { return std::max(ay[i], by[i]); }
  ByLeft(const std::vector<Seg>& seg) {
    const std::int64_t m = static_cast<std::int64_t>(seg.size());
    std::vector<std::int32_t> key(static_cast<std::size_t>(m));
    for (std::int64_t e = 0; e < m; ++e) key[e] = static_cast<std::int32_t>(seg[e].ax);
    edge = order_by(key);
    for (auto* v : {&ax, &ay, &bx, &by}) v->resize(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) {
      const Seg& g = seg[edge[i]];
      ax[i] = static_cast<std::int32_t>(g.ax), ay[i] = static_cast<std::int32_t>(g.ay);
      bx[i] = static_cast<std::int32_t>(g.bx), by[i] = static_cast<std::int32_t>(g.by);
    }
    by_right = order_by(bx);
  }
};

// Cost of the sweep with `strips`, in units of one tested pair: the pairs it tests plus a fixed
// cost per entry (listing, its row's setup, the partial last vector). The pair count is exact: in
// a strip in left-x order an entry's partners run up to the last whose left x is at most its right
// x, so it is the entries' ranks among the left ends at their right ends (one pass over the edges in
// right-x order, `right` holding bx, y0, y1 in that order) less their own ranks.
double sweep_cost(const ByLeft& left, const std::vector<std::int32_t>& right, const Strips& strips, double entry_cost,
                  double bound) {
  const std::int64_t m = static_cast<std::int64_t>(left.ax.size());
  double entries = 0;
  for (std::int64_t i = 0; i < m; ++i)
    entries += static_cast<double>(strips.of(left.y1(i)) - strips.of(left.y0(i)) + 1);
  if (entries * entry_cost >= bound) return bound;  // thinner strips only add entries
  std::vector<std::int64_t> in_strip(static_cast<std::size_t>(strips.count), 0);
  double ranks = 0;
  std::int64_t next = 0;
  for (std::int64_t r = 0; r < m; ++r) {
    const std::int64_t bx = right[3 * r];
    for (; next < m && left.ax[next] <= bx; ++next)
      for (std::int64_t s = strips.of(left.y0(next)), s1 = strips.of(left.y1(next)); s <= s1; ++s) ++in_strip[s];
    for (std::int64_t s = strips.of(right[3 * r + 1]), s1 = strips.of(right[3 * r + 2]); s <= s1; ++s)
      ranks += static_cast<double>(in_strip[s]);
  }
  for (const std::int64_t n_s : in_strip) ranks -= static_cast<double>(n_s) * static_cast<double>(n_s + 1) / 2;
  return ranks + entries * entry_cost + static_cast<double>(strips.count);
}

// The strip height (a power of two) of least estimated cost: from a multiple of the edges' mean height,
// doubled or halved while that lowers the cost (pairs fall and entries rise as strips get thinner).
Strips choose_strips(const ByLeft& left, std::int64_t y_extent, double entry_cost) {
  const std::int64_t m = static_cast<std::int64_t>(left.ax.size());
  const int one_strip = bit_width(y_extent), thinnest = std::max(0, one_strip - kMaxStripsLog2);
  if (m < kChooseStripsFrom) return Strips(one_strip, y_extent);
  std::vector<std::int32_t> right(static_cast<std::size_t>(3 * m));
  double height = 0;
  for (std::int64_t r = 0; r < m; ++r) {
    const std::int64_t i = left.by_right[r];
    right[3 * r] = left.bx[i];
    right[3 * r + 1] = static_cast<std::int32_t>(left.y0(i)), right[3 * r + 2] = static_cast<std::int32_t>(left.y1(i));
    height += static_cast<double>(left.y1(i) - left.y0(i));
  }
  // On random, grid and lattice layouts the optimum lay near four times the mean edge height.
  const int start =
      std::clamp(bit_width(static_cast<std::int64_t>(height / static_cast<double>(m))) + 2, thinnest, one_strip);
  std::vector<double> cost(static_cast<std::size_t>(one_strip + 1), -1);
  auto cost_of = [&](int shift) {
    if (cost[shift] < 0) cost[shift] = sweep_cost(left, right, Strips(shift, y_extent), entry_cost, 1e300);
    return cost[shift];
  };
  int best = start;
  for (const int step : {1, -1})  // up (thicker strips), then down
    for (int shift = best + step; shift >= thinnest && shift <= one_strip; shift += step) {
      if (cost_of(shift) >= cost_of(best)) break;
      best = shift;
    }
  return Strips(best, y_extent);
}

// The sweep entries (sweep.hpp: SweepRows), padded by kSweepPad.
struct Entries {
  std::vector<double> ax, ay, bx, by;
  std::vector<std::int64_t> end, first, edge;
  std::int64_t size = 0;
  double pairs = 0;  // tested pairs, for the chunk size
  detail::SweepRows rows() const {
    return {ax.data(), ay.data(), bx.data(), by.data(), end.data(), first.empty() ? nullptr : first.data()};
  }

  Entries(const ByLeft& left, const Strips& strips) {
    const std::int64_t m = static_cast<std::int64_t>(left.ax.size());
    std::vector<std::int64_t> start(static_cast<std::size_t>(strips.count + 1), 0);
    for (std::int64_t i = 0; i < m; ++i) {  // strip sizes, differenced
      ++start[strips.of(left.y0(i))];
      --start[strips.of(left.y1(i)) + 1];
    }
    for (std::int64_t s = 0, n_s = 0, sum = 0; s <= strips.count; ++s) {  // to offsets
      const std::int64_t d = start[s];
      start[s] = sum;
      n_s += d;
      sum += n_s;
    }
    size = start[strips.count];
    const std::size_t padded = static_cast<std::size_t>(size + detail::kSweepPad);
    for (auto* v : {&ax, &ay, &bx, &by}) v->assign(padded, 0.0);
    end.assign(padded, 0), edge.assign(padded, 0);
    if (strips.count > 1) first.assign(padded, 0);
    // One pass over the right ends, placing the edges by left end as it goes: when an edge's right
    // end comes, its strips hold exactly the entries whose left x is at most its right x, a prefix
    // in left-x order, so the strips' fill levels are its entries' ends (no searches). `slot` keeps
    // each placed edge's entries, one per strip, for that moment.
    std::vector<std::int64_t> fill(start.begin(), start.end() - 1), slot_at(static_cast<std::size_t>(m + 1), 0),
        slot(static_cast<std::size_t>(size));
    for (std::int64_t k = 0; k < m; ++k)
      slot_at[k + 1] = slot_at[k] + strips.of(left.y1(k)) - strips.of(left.y0(k)) + 1;
    std::int64_t placed = 0;
    for (std::int64_t r = 0; r < m; ++r) {
      const std::int64_t e = left.by_right[r];
      for (; placed < m && left.ax[placed] <= left.bx[e]; ++placed) {  // in left-x order: strips stay sorted
        const std::int64_t k = placed, s0 = strips.of(left.y0(k)), s1 = strips.of(left.y1(k));
        for (std::int64_t s = s0; s <= s1; ++s) {
          const std::int64_t i = fill[s]++;
          ax[i] = static_cast<double>(left.ax[k]), ay[i] = static_cast<double>(left.ay[k]);
          bx[i] = static_cast<double>(left.bx[k]), by[i] = static_cast<double>(left.by[k]);
          edge[i] = left.edge[k];
          if (!first.empty()) first[i] = s == s0 ? -1 : 0;
          slot[slot_at[k] + s - s0] = i;
        }
      }
      const std::int64_t s0 = strips.of(left.y0(e)), s1 = strips.of(left.y1(e));
      for (std::int64_t s = s0; s <= s1; ++s) {
        const std::int64_t i = slot[slot_at[e] + s - s0];
        end[i] = fill[s];
        pairs += static_cast<double>(fill[s] - i - 1);
      }
    }
  }
};

// Per-edge crossing counts with the sweep: each worker counts into its own array (one per worker,
// not per chunk), added up at the end: integer sums, the same whatever the threads and the order of
// the chunks. `poll` as parallel_chunks'.
void count_crossings_of(const Entries& entries, bool exact, std::int64_t m, std::vector<std::int64_t>& counts,
                        const std::function<void(std::int64_t)>& poll) {
  const detail::SweepKernels& kernels = detail::sweep_kernels();
  const int workers = cpu_threads();
  const std::int64_t size = entries.size;
  std::vector<std::vector<std::int64_t>> local(static_cast<std::size_t>(workers));
  // Chunks of about 2^20 tested pairs (a fraction of a millisecond), so that Ctrl-C and progress
  // stay prompt and the workers balance.
  const double per_row = entries.pairs / static_cast<double>(std::max<std::int64_t>(size, 1)) + 16;
  const std::int64_t chunk = std::clamp<std::int64_t>(static_cast<std::int64_t>((1 << 20) / per_row), 32, 8192);
  const detail::SweepRows rows = entries.rows();
  ironkernels::detail::parallel_chunks(size, chunk, workers, [&](int w, std::int64_t i0, std::int64_t i1) {
    if (local[w].empty()) local[w].assign(static_cast<std::size_t>(size + detail::kSweepPad), 0);
    kernels.sweep(rows, i0, i1, local[w].data(), exact);
  }, poll);
  counts.assign(static_cast<std::size_t>(m), 0);
  for (const std::vector<std::int64_t>& c : local)
    if (!c.empty())
      for (std::int64_t i = 0; i < size; ++i) counts[entries.edge[i]] += c[i];
}

// Vertices on edges they are not endpoints of, one edge at a time against the vertices in the
// cells its box covers (kernels' on_segment: a vertex at an endpoint's point is a same-point
// violation instead, and the endpoints themselves are such points).
void vertices_on_edges(const Grid& grid, const std::vector<Point>& p, const std::vector<Seg>& seg, Point origin,
                       bool exact, std::vector<std::vector<Violation>>& found_by,
                       const std::function<void(std::int64_t)>& poll) {
  const detail::SweepKernels& kernels = detail::sweep_kernels();
  const std::int64_t n = static_cast<std::int64_t>(p.size()), m = static_cast<std::int64_t>(seg.size());
  std::vector<double> vx(static_cast<std::size_t>(n + detail::kSweepPad), 0.0), vy(vx.size(), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    vx[i] = static_cast<double>(p[grid.items[i]].x - origin.x);
    vy[i] = static_cast<double>(p[grid.items[i]].y - origin.y);
  }
  const int workers = static_cast<int>(found_by.size());
  ironkernels::detail::parallel_chunks(m, 32, workers, [&](int w, std::int64_t e0, std::int64_t e1) {
    std::vector<Violation>& found = found_by[w];
    for (std::int64_t e = e0; e < e1; ++e) {
      const Seg& g = seg[e];
      const Point a{g.ax + origin.x, g.ay + origin.y}, b{g.bx + origin.x, g.by + origin.y};
      const Box box = detail::box_of(a, b);
      const std::int64_t cx0 = grid.cell_x(box.x0), cx1 = grid.cell_x(box.x1);
      for (std::int64_t cy = grid.cell_y(box.y0); cy <= grid.cell_y(box.y1); ++cy) {
        const std::int64_t begin = grid.start[cy * grid.side + cx0], end = grid.start[cy * grid.side + cx1 + 1];
        if (end - begin <= 8) {  // a short edge's few vertices: the exact test, no kernel call
          for (std::int64_t i = begin; i < end; ++i) {
            const Point q = p[grid.items[i]];
            if ((q.x != a.x || q.y != a.y) && (q.x != b.x || q.y != b.y) && detail::on_segment(q, a, b))
              found.push_back({Violation::Kind::vertex_on_edge, grid.items[i], e});
          }
          continue;
        }
        for (std::int64_t i = begin;; ++i) {
          i = kernels.on_segment(static_cast<double>(g.ax), static_cast<double>(g.ay), static_cast<double>(g.bx),
                                 static_cast<double>(g.by), vx.data(), vy.data(), i, end, exact);
          if (i >= end) break;
          found.push_back({Violation::Kind::vertex_on_edge, grid.items[i], e});
        }
      }
    }
  }, poll);
}

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
  Point origin{kMaxCoordinate, kMaxCoordinate};
  std::int64_t max_x = 0, max_y = 0;
  for (std::int64_t v = 0; v < n; ++v) {
    p[v] = {xy[2 * v], xy[2 * v + 1]};
    origin = {std::min(origin.x, p[v].x), std::min(origin.y, p[v].y)};
    max_x = std::max(max_x, p[v].x), max_y = std::max(max_y, p[v].y);
  }
  if (n == 0) origin = {0, 0};
  const std::int64_t extent = std::max(max_x - origin.x, max_y - origin.y);
  const bool exact_double = extent <= kExactDoubleExtent;
  std::vector<Seg> seg(static_cast<std::size_t>(m));
  for (std::int64_t e = 0; e < m; ++e) {
    Point a = p[edges[2 * e]], b = p[edges[2 * e + 1]];
    if (b.x < a.x) std::swap(a, b);  // orientation signs flip in pairs: the crossing test is unchanged
    seg[e] = {a.x - origin.x, a.y - origin.y, b.x - origin.x, b.y - origin.y};
  }

  // An entry costs about as much as 64 tested pairs.
  std::vector<Entries> entries;  // freed before the validity test
  {
    const ByLeft left(seg);
    entries.emplace_back(left, choose_strips(left, max_y - origin.y, 64.0));
  }
  const std::int64_t crossing_items = entries[0].size;

  // Progress in work items: the entries of the sweep, then the edges of the validity test.
  const std::int64_t total_items = crossing_items + (with_validity ? m : 0);
  auto poll_from = [&](std::int64_t offset) -> std::function<void(std::int64_t)> {
    if (!progress) return {};
    return [&progress, offset, total_items](std::int64_t done) { progress(offset + done, total_items); };
  };
  if (progress) progress(0, total_items);

  Evaluation ev;
  count_crossings_of(entries[0], exact_double, m, ev.edge_crossings, poll_from(0));
  entries.clear();
  for (std::int64_t e = 0; e < m; ++e) {
    ev.total_crossings += ev.edge_crossings[e];
    detail::merge_k(ev.k, ev.edges_at_k, ev.edge_crossings[e], std::int64_t(1));
  }
  ev.total_crossings /= 2;
  if (!with_validity) {
    if (progress) progress(total_items, total_items);
    return ev;
  }

  // Validity: outside the grid, shared points, vertices on non-incident edges.
  for (std::int64_t v = 0; v < n; ++v)
    if (p[v].x > width || p[v].y > height) ev.violations.push_back({Violation::Kind::outside_grid, v, -1});
  const Grid grid(p, max_x, max_y);
  // Vertices at one point share a cell: each cell's few vertices sorted by point (a cell lists them
  // by index, so the first at a point has the lowest index).
  std::vector<std::int64_t> here;
  for (std::int64_t c = 0; c + 1 < static_cast<std::int64_t>(grid.start.size()); ++c) {
    if (grid.start[c + 1] - grid.start[c] < 2) continue;
    here.assign(grid.items.begin() + grid.start[c], grid.items.begin() + grid.start[c + 1]);
    std::stable_sort(here.begin(), here.end(), [&](std::int64_t a, std::int64_t b) {
      return p[a].x != p[b].x ? p[a].x < p[b].x : p[a].y < p[b].y;
    });
    const std::int64_t k = static_cast<std::int64_t>(here.size());
    for (std::int64_t i = 0; i < k;) {
      std::int64_t j = i + 1;
      while (j < k && p[here[j]].x == p[here[i]].x && p[here[j]].y == p[here[i]].y) ++j;
      // Each later vertex at the point is listed with the first (lowest index) one there: n - 1
      // entries for n coincident vertices, not n²/2.
      for (std::int64_t b = i + 1; b < j; ++b) ev.violations.push_back({Violation::Kind::same_point, here[i], here[b]});
      i = j;
    }
  }
  std::vector<std::vector<Violation>> found_by(static_cast<std::size_t>(cpu_threads()));  // one list per worker
  vertices_on_edges(grid, p, seg, origin, exact_double, found_by, poll_from(crossing_items));
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

Evaluation evaluate(const ArrayView& xy, const ArrayView& edges, std::int64_t width, std::int64_t height,
                    const Progress& progress) {
  const std::int64_t* points = detail::host_pairs(xy, "xy");
  const std::int64_t* ends = detail::host_pairs(edges, "edges");
  return detail::evaluate_impl(points, xy.shape[0], ends, edges.shape[0], width, height, true, progress);
}

}  // namespace ironkernels::lcn
