// legalise(): any drawing to a valid one with few moves.
//
// Invariant: the drawing restricted to the "placed" vertices (and the edges between them) is valid.
// It starts from the clamped input minus the vertices in conflict (a second vertex on a point; a
// vertex inside an edge, or an endpoint of an edge with several vertices inside: one move instead of
// several), and grows one vertex at a time, each put on the first legal point of a square spiral
// around its input position (then random points on large grids). A point q is legal for v when it is
// free, inside no placed edge, and no edge from q to a placed neighbour passes through a placed
// vertex. On grids that are tight for the graph there may be no legal point: then every such vertex
// takes its nearest free point and a min-conflicts search with moves and swaps removes the
// conflicts, within a budget after which ValueError says the grid is too small.
#include <algorithm>
#include <deque>
#include <utility>

#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn_layout.hpp"
#include "lcn/layout_graph.hpp"
#include "lcn/point_index.hpp"
#include "lcn/lcn_internal.hpp"

namespace ironkernels::lcn {
namespace {
using detail::EdgeIndex;
using detail::gcd64;
using detail::inside_segment;
using detail::Point;
using detail::point_key;
using detail::PointMap;

class Legaliser {
 public:
  Legaliser(std::int64_t n, const std::int64_t* edges, std::int64_t m, std::int64_t width, std::int64_t height,
            std::uint64_t seed)
      : n_(n), m_(m), edges_(edges), w_(width), h_(height), p_(static_cast<std::size_t>(n)),
        target_(static_cast<std::size_t>(n)), placed_(static_cast<std::size_t>(n), 0),
        occupied_(static_cast<std::size_t>(n)), index_(p_, edges, static_cast<std::size_t>(2 * m + 16)), rng_(seed) {
    inc_offset_.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t e = 0; e < m; ++e) {
      ++inc_offset_[edges[2 * e] + 1];
      ++inc_offset_[edges[2 * e + 1] + 1];
    }
    for (std::int64_t v = 0; v < n; ++v) inc_offset_[v + 1] += inc_offset_[v];
    inc_edge_.resize(static_cast<std::size_t>(2 * m));
    std::vector<std::int64_t> fill(inc_offset_.begin(), inc_offset_.end() - 1);
    for (std::int64_t e = 0; e < m; ++e) {
      inc_edge_[fill[edges[2 * e]]++] = e;
      inc_edge_[fill[edges[2 * e + 1]]++] = e;
    }
    const std::int64_t points = (w_ + 1) * (h_ + 1);  // <= (2^30 + 1)^2 < 2^61
    // A grid this small is searched whole before the fallback search; larger ones get a bounded
    // spiral and random points (free legal points are then plentiful).
    small_grid_ = points <= 64 * n + 4096;
  }

  void run(std::int64_t* xy) {
    for (std::int64_t v = 0; v < n_; ++v)
      target_[v] = {std::clamp<std::int64_t>(xy[2 * v], 0, w_), std::clamp<std::int64_t>(xy[2 * v + 1], 0, h_)};
    p_ = target_;
    initial_placement();
    for (std::int64_t e = 0; e < m_; ++e)
      if (placed_[edges_[2 * e]] && placed_[edges_[2 * e + 1]]) index_.add(e);
    std::vector<std::int64_t> stuck;
    while (!queue_.empty()) {
      const std::int64_t v = queue_.front();
      queue_.pop_front();
      Point q;
      if (find_legal(v, q)) {
        place(v, q);
      } else {
        stuck.push_back(v);
        stuck_ = true;
      }
    }
    if (!stuck.empty()) {
      // The vertices without a legal point take the nearest free ones; then the search.
      for (const std::int64_t v : stuck) {
        Point q{-1, -1};  // the spiral covers the whole grid, which has a free point
        std::int64_t ring = 0;
        spiral(target_[v], 0, INT64_MAX, [&](Point c) { return free_point(c) ? (q = c, true) : false; }, &ring);
        place(v, q);
      }
      tight_search();
    }
    for (std::int64_t v = 0; v < n_; ++v) {
      xy[2 * v] = p_[v].x;
      xy[2 * v + 1] = p_[v].y;
    }
  }

 private:
  std::int64_t other(std::int64_t e, std::int64_t v) const { return edges_[2 * e] == v ? edges_[2 * e + 1] : edges_[2 * e]; }

  // The clamped input minus its conflicts; the removed vertices are queued in index order.
  void initial_placement() {
    for (std::int64_t v = 0; v < n_; ++v) {
      std::int64_t& at = occupied_.ref(point_key(p_[v]));
      if (at >= 0) continue;  // the lowest-numbered vertex keeps a shared point
      at = v;
      placed_[v] = 1;
      ++placed_count_;
    }
    // Placed vertices inside each edge between placed vertices: a count, and the one when it is one.
    std::vector<std::int64_t> count(static_cast<std::size_t>(m_), 0), single(static_cast<std::size_t>(m_), -1);
    std::vector<std::int64_t> long_edges;
    for (std::int64_t e = 0; e < m_; ++e) {
      const std::int64_t s = edges_[2 * e], t = edges_[2 * e + 1];
      if (!placed_[s] || !placed_[t]) continue;
      const Point a = p_[s], b = p_[t];
      const std::int64_t g = gcd64(b.x - a.x, b.y - a.y);
      if (g - 1 > detail::kShortEdgePoints) {
        long_edges.push_back(e);
        continue;
      }
      const std::int64_t sx = (b.x - a.x) / g, sy = (b.y - a.y) / g;
      for (std::int64_t j = 1; j < g; ++j) {
        const std::int64_t w = occupied_.get(point_key({a.x + j * sx, a.y + j * sy}));
        if (w >= 0) {
          ++count[e];
          single[e] = w;
        }
      }
    }
    count_long_edges(long_edges, count, single);
    // Edges with several vertices inside lose an endpoint (the one on more such edges).
    std::vector<std::int64_t> bad, bad_degree(static_cast<std::size_t>(n_), 0);
    for (std::int64_t e = 0; e < m_; ++e)
      if (count[e] >= 2) {
        bad.push_back(e);
        ++bad_degree[edges_[2 * e]];
        ++bad_degree[edges_[2 * e + 1]];
      }
    std::stable_sort(bad.begin(), bad.end(), [&](std::int64_t a, std::int64_t b) { return count[a] > count[b]; });
    for (const std::int64_t e : bad) {
      const std::int64_t s = edges_[2 * e], t = edges_[2 * e + 1];
      if (placed_[s] && placed_[t]) take_off_initial(bad_degree[s] >= bad_degree[t] ? s : t);
    }
    // An edge with one vertex inside: that vertex moves.
    for (std::int64_t e = 0; e < m_; ++e)
      if (count[e] == 1 && placed_[edges_[2 * e]] && placed_[edges_[2 * e + 1]] && placed_[single[e]])
        take_off_initial(single[e]);
    for (std::int64_t v = 0; v < n_; ++v)
      if (!placed_[v]) queue_.push_back(v);
  }

  // count/single for edges with many interior lattice points: placed vertices sorted along each line
  // of such an edge's direction, then a range count per edge.
  void count_long_edges(const std::vector<std::int64_t>& long_edges, std::vector<std::int64_t>& count,
                        std::vector<std::int64_t>& single) const {
    if (long_edges.empty()) return;
    std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, std::int64_t>> by_direction;
    for (const std::int64_t e : long_edges) {
      const detail::Line l = detail::line_through(p_[edges_[2 * e]], p_[edges_[2 * e + 1]]);
      by_direction.push_back({{l.dx, l.dy}, e});
    }
    std::sort(by_direction.begin(), by_direction.end());
    struct Entry {
      std::int64_t offset, along, v;
      bool operator<(const Entry& o) const { return offset != o.offset ? offset < o.offset : along < o.along; }
    };
    std::vector<Entry> entries;
    for (std::size_t i = 0; i < by_direction.size();) {
      const std::int64_t dx = by_direction[i].first.first, dy = by_direction[i].first.second;
      entries.clear();
      for (std::int64_t v = 0; v < n_; ++v)
        if (placed_[v]) entries.push_back({dx * p_[v].y - dy * p_[v].x, dx * p_[v].x + dy * p_[v].y, v});
      std::sort(entries.begin(), entries.end());
      for (; i < by_direction.size() && by_direction[i].first == std::make_pair(dx, dy); ++i) {
        const std::int64_t e = by_direction[i].second;
        const Point a = p_[edges_[2 * e]], b = p_[edges_[2 * e + 1]];
        const std::int64_t offset = dx * a.y - dy * a.x, da = dx * a.x + dy * a.y, db = dx * b.x + dy * b.y;
        const auto lo = std::upper_bound(entries.begin(), entries.end(), Entry{offset, std::min(da, db), 0});
        const auto hi = std::lower_bound(entries.begin(), entries.end(), Entry{offset, std::max(da, db), 0});
        if (hi > lo) {
          count[e] = hi - lo;
          single[e] = lo->v;
        }
      }
    }
  }

  void take_off_initial(std::int64_t v) {
    occupied_.ref(point_key(p_[v])) = -1;
    placed_[v] = 0;
    --placed_count_;
  }

  void place(std::int64_t v, Point q) {
    p_[v] = q;
    occupied_.ref(point_key(q)) = v;
    placed_[v] = 1;
    ++placed_count_;
    for (std::int64_t i = inc_offset_[v]; i < inc_offset_[v + 1]; ++i)
      if (placed_[other(inc_edge_[i], v)]) index_.add(inc_edge_[i]);
  }

  bool free_point(Point q) const { return occupied_.get(point_key(q)) < 0; }

  // Placed vertices strictly inside the segment q-a (q free, a placed), appended to `out` (at most
  // one when `first_only`): the lattice points of the segment when they are few, else a scan.
  bool vertices_inside(Point q, Point a, std::vector<std::int64_t>* out) const {
    const std::int64_t g = gcd64(a.x - q.x, a.y - q.y);
    if (g <= 1) return false;
    bool found = false;
    if (8 * (g - 1) <= placed_count_ + 64) {
      const std::int64_t sx = (a.x - q.x) / g, sy = (a.y - q.y) / g;
      for (std::int64_t j = 1; j < g; ++j) {
        const std::int64_t w = occupied_.get(point_key({q.x + j * sx, q.y + j * sy}));
        if (w < 0) continue;
        if (out == nullptr) return true;
        out->push_back(w);
        found = true;
      }
      return found;
    }
    for (std::int64_t w = 0; w < n_; ++w) {
      if (!placed_[w] || !inside_segment(p_[w], q, a)) continue;
      if (out == nullptr) return true;
      out->push_back(w);
      found = true;
    }
    return found;
  }

  bool legal(std::int64_t v, Point q) const {
    if (!free_point(q) || index_.blocks(q)) return false;
    for (std::int64_t i = inc_offset_[v]; i < inc_offset_[v + 1]; ++i) {
      const std::int64_t u = other(inc_edge_[i], v);
      if (placed_[u] && vertices_inside(q, p_[u], nullptr)) return false;
    }
    return true;
  }

  // Visits the grid points around t ring by ring (Chebyshev distance r = r0, r0 + 1, …), nearer
  // points of a ring first, until visit() returns true (then true, with the ring in *ring), the
  // rings leave the box, or `budget` points were visited.
  template <class Visit>
  bool spiral(Point t, std::int64_t r0, std::int64_t budget, Visit&& visit, std::int64_t* ring) const {
    const std::int64_t r_end = std::max(std::max(t.x, w_ - t.x), std::max(t.y, h_ - t.y));
    std::int64_t visited = 0;
    auto try_point = [&](std::int64_t x, std::int64_t y) {
      if (x < 0 || x > w_ || y < 0 || y > h_) return false;
      ++visited;
      return visit(Point{x, y});
    };
    for (std::int64_t r = r0; r <= r_end && visited < budget; ++r) {
      if (r == 0) {
        if (try_point(t.x, t.y)) return *ring = 0, true;
        continue;
      }
      for (std::int64_t o = 0; o <= r && visited < budget; ++o) {
        // (±o, ±r) and (±r, ±o); o = 0 and o = r would repeat points.
        const std::int64_t pts[8][2] = {{o, r}, {-o, r}, {o, -r}, {-o, -r}, {r, o}, {r, -o}, {-r, o}, {-r, -o}};
        for (int k = 0; k < 8; ++k) {
          if (o == 0 && (k % 2 == 1)) continue;
          if (o == r && k >= 4) continue;
          if (try_point(t.x + pts[k][0], t.y + pts[k][1])) return *ring = r, true;
        }
      }
    }
    return false;
  }

  bool find_legal(std::int64_t v, Point& q) {
    const Point t = target_[v];
    // Vertices sent to one point (a whole graph at one point, say) resume where the last one
    // stopped: the rings inside are full.
    std::int64_t& resume = ring_cache_.ref(point_key(t));
    const std::int64_t r0 = std::max<std::int64_t>(0, resume - 1);
    const std::int64_t budget = small_grid_ && !stuck_ ? INT64_MAX : 2000;
    std::int64_t ring = 0;
    if (spiral(t, r0, budget, [&](Point c) { return legal(v, c) ? (q = c, true) : false; }, &ring)) {
      resume = ring;
      return true;
    }
    if (r0 > 0 && small_grid_ && !stuck_ &&
        spiral(t, 0, INT64_MAX, [&](Point c) { return legal(v, c) ? (q = c, true) : false; }, &ring))
      return true;
    if (!small_grid_)
      for (int attempt = 0; attempt < 4000; ++attempt) {
        const Point c{rng_.below(w_ + 1), rng_.below(h_ + 1)};
        if (legal(v, c)) return q = c, true;
      }
    return false;
  }

  // --- The fallback for grids tight for the graph: every vertex on a point, conflicts minimised.
  // cost = the sum over edges of the vertices inside them; a step picks a random conflict (an edge
  // and a vertex inside it), one of its three vertices, and the best of a few random points for it
  // (a free point, or a swap with the vertex there), taking sideways and, now and then, worse steps
  // to leave plateaus. On a full grid a step is a swap and only the two vertices' edges change.

  // Vertices strictly inside edge e (every vertex placed).
  std::int64_t inside_count(std::int64_t e) const {
    const Point a = p_[edges_[2 * e]], b = p_[edges_[2 * e + 1]];
    const std::int64_t g = gcd64(b.x - a.x, b.y - a.y);
    if (g <= 1) return 0;
    std::int64_t c = 0;
    if (8 * (g - 1) <= n_ + 64) {
      const std::int64_t sx = (b.x - a.x) / g, sy = (b.y - a.y) / g;
      for (std::int64_t j = 1; j < g; ++j) c += occupied_.get(point_key({a.x + j * sx, a.y + j * sy})) >= 0;
      return c;
    }
    for (std::int64_t w = 0; w < n_; ++w) c += inside_segment(p_[w], a, b);
    return c;
  }

  void set_count(std::int64_t e, std::int64_t c) {
    total_ += c - count_[e];
    count_[e] = c;
    if (c > 0 && bad_pos_[e] < 0) {
      bad_pos_[e] = static_cast<std::int64_t>(bad_.size());
      bad_.push_back(e);
    } else if (c == 0 && bad_pos_[e] >= 0) {
      const std::int64_t last = bad_.back();
      bad_[bad_pos_[e]] = last;
      bad_pos_[last] = bad_pos_[e];
      bad_.pop_back();
      bad_pos_[e] = -1;
    }
  }

  // v to point b, swapping with the vertex there if any; counts and the edge index follow.
  void move_vertex(std::int64_t v, Point b) {
    const Point a = p_[v];
    const std::int64_t u = occupied_.get(point_key(b));
    touched_.clear();
    ++stamp_;
    for (const std::int64_t x : {v, u}) {
      if (x < 0) continue;
      for (std::int64_t i = inc_offset_[x]; i < inc_offset_[x + 1]; ++i)
        if (mark_[inc_edge_[i]] != stamp_) {
          mark_[inc_edge_[i]] = stamp_;
          touched_.push_back(inc_edge_[i]);
        }
    }
    for (const std::int64_t e : touched_) index_.remove(e);
    if (u < 0) {  // a empties and b fills: the other edges through them change count
      through_.clear();
      index_.edges_through(a, through_);
      for (const std::int64_t e : through_) set_count(e, count_[e] - 1);
      occupied_.ref(point_key(a)) = -1;
      occupied_.ref(point_key(b)) = v;
      p_[v] = b;
      through_.clear();
      index_.edges_through(b, through_);
      for (const std::int64_t e : through_) set_count(e, count_[e] + 1);
    } else {
      p_[v] = b;
      p_[u] = a;
      occupied_.ref(point_key(a)) = u;
      occupied_.ref(point_key(b)) = v;
    }
    for (const std::int64_t e : touched_) {
      index_.add(e);
      set_count(e, inside_count(e));
    }
  }

  void tight_search() {
    count_.assign(static_cast<std::size_t>(m_), 0);
    bad_pos_.assign(static_cast<std::size_t>(m_), -1);
    mark_.assign(static_cast<std::size_t>(m_), 0);
    bad_.clear();
    total_ = 0;
    for (std::int64_t e = 0; e < m_; ++e) set_count(e, inside_count(e));
    // Gives up after `budget` steps, or `patience` steps without a new lowest cost.
    const std::int64_t budget = 100 * n_ + 100000, patience = 10 * n_ + 50000;
    std::int64_t lowest = total_, lowest_step = 0;
    std::vector<Point> candidates;
    for (std::int64_t step = 0; !bad_.empty(); ++step) {
      if (total_ < lowest) {
        lowest = total_;
        lowest_step = step;
      }
      if (step >= budget || step - lowest_step > patience)
        raise<ValueError>("lcn.legalise: found no valid drawing of this graph (", n_, " vertices, ", m_,
                          " edges) on the ", w_ + 1, " x ", h_ + 1, " grid in ", step, " search steps (",
                          bad_.size(), " edges still pass through vertices); the grid is too small for it (a "
                          "larger width or height is needed)");
      const std::int64_t e = bad_[static_cast<std::size_t>(rng_.below(static_cast<std::int64_t>(bad_.size())))];
      const std::int64_t s = edges_[2 * e], t = edges_[2 * e + 1];
      std::vector<std::int64_t> inside;
      vertices_inside(p_[s], p_[t], &inside);
      const std::int64_t pick = rng_.below(3);
      const std::int64_t v = pick == 0 ? s : pick == 1 ? t : inside[static_cast<std::size_t>(rng_.below(static_cast<std::int64_t>(inside.size())))];
      const Point a = p_[v];
      candidates.clear();
      for (int c = 0; c < 8; ++c) candidates.push_back({rng_.below(w_ + 1), rng_.below(h_ + 1)});
      for (int c = 0; c < 4; ++c)
        candidates.push_back({std::clamp<std::int64_t>(a.x + rng_.below(5) - 2, 0, w_),
                              std::clamp<std::int64_t>(a.y + rng_.below(5) - 2, 0, h_)});
      std::int64_t best_delta = INT64_MAX;
      Point best = a;
      for (const Point b : candidates) {
        if (b.x == a.x && b.y == a.y) continue;
        const std::int64_t before = total_;
        move_vertex(v, b);
        const std::int64_t delta = total_ - before;
        move_vertex(v, a);
        if (delta < best_delta) {
          best_delta = delta;
          best = b;
        }
      }
      if (best_delta == INT64_MAX) continue;
      if (best_delta <= 0 || rng_.below(20) == 0) move_vertex(v, best);
    }
  }

  std::int64_t n_, m_;
  const std::int64_t* edges_;
  std::int64_t w_, h_;
  std::vector<Point> p_, target_;
  std::vector<char> placed_;
  std::int64_t placed_count_ = 0;
  std::vector<std::int64_t> inc_offset_, inc_edge_;  // edges at each vertex, parallel copies included
  PointMap occupied_;                                // point -> vertex there (-1: free)
  EdgeIndex index_;                                  // edges between placed vertices
  PointMap ring_cache_;                              // target point -> ring of its last placement
  std::deque<std::int64_t> queue_;
  detail::Rng rng_;
  bool small_grid_ = false;
  bool stuck_ = false;  // a vertex found no legal point: the rest search less, the fallback follows
  // State of the tight-grid search.
  std::vector<std::int64_t> count_, bad_, bad_pos_, mark_, touched_, through_;
  std::int64_t total_ = 0, stamp_ = 0;
};

}  // namespace

void legalise(const ArrayView& xy_view, const ArrayView& edge_view, std::int64_t width, std::int64_t height,
              std::uint64_t seed) {
  std::int64_t* xy = detail::host_pairs(xy_view, "xy");
  const std::int64_t* edges = detail::host_pairs(edge_view, "edges");
  const std::int64_t n = xy_view.shape[0], m = edge_view.shape[0];
  if (n < 0 || m < 0) raise<ValueError>("lcn.legalise: n = ", n, " and m = ", m, " must be non-negative");
  if (width < 0 || width > kMaxCoordinate || height < 0 || height > kMaxCoordinate)
    raise<ValueError>("lcn.legalise: width and height must lie in [0, 2^30], got ", width, " and ", height);
  for (std::int64_t e = 0; e < m; ++e) detail::check_edge(e, edges[2 * e], edges[2 * e + 1], n);
  if ((width + 1) * (height + 1) < n)
    raise<ValueError>("lcn.legalise: ", n, " vertices cannot have distinct points on the ", width + 1, " x ",
                      height + 1, " grid (", (width + 1) * (height + 1), " points)");
  if (n == 0) return;
  std::vector<std::int64_t> out(xy, xy + 2 * n);  // written back only on success
  Legaliser(n, edges, m, width, height, seed).run(out.data());
  std::copy(out.begin(), out.end(), xy);
}

}  // namespace ironkernels::lcn
