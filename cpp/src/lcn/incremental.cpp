// Incremental evaluation: a vertex move changes only the crossings of its own edges. The sweeps over
// all edges run the SIMD kernels of sweep.hpp on a copy of the other edges' coordinates (made once per
// call, O(m) against the call's O(degree · m) tests).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/threads.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn.hpp"
#include "lcn/lcn_internal.hpp"
#include "lcn/predicates.hpp"
#include "lcn/sweep.hpp"

namespace ironkernels::lcn {
namespace {

using Pt = detail::Point;
using detail::on_segment;

// The predicates' point from the evaluator's own point type.
template <class Q>
Pt pt(const Q& q) {
  return {q.x, q.y};
}

// Coordinates relative to a common origin, for the kernels (sweep.hpp), and whether they are in
// the range of exact double arithmetic there.
struct Frame {
  std::int64_t x0 = kMaxCoordinate, y0 = kMaxCoordinate, x1 = 0, y1 = 0;
  void cover(std::int64_t x, std::int64_t y) {
    x0 = std::min(x0, x), y0 = std::min(y0, y), x1 = std::max(x1, x), y1 = std::max(y1, y);
  }
  bool exact() const { return x1 < x0 || std::max(x1 - x0, y1 - y0) <= detail::kExactDoubleExtent; }
  double x(std::int64_t v) const { return static_cast<double>(v - x0); }
  double y(std::int64_t v) const { return static_cast<double>(v - y0); }
};

// The edges other than `own` ones, as kernel arrays (padded), with their indices.
struct Others {
  std::vector<double> ax, ay, bx, by;
  std::vector<std::int64_t> edge;
  template <class Segment>
  Others(const std::vector<Segment>& seg, const std::vector<char>& own, const Frame& f) {
    for (std::size_t e = 0; e < seg.size(); ++e)
      if (!own[e]) edge.push_back(static_cast<std::int64_t>(e));
    const std::size_t padded = edge.size() + static_cast<std::size_t>(detail::kSweepPad);
    for (auto* v : {&ax, &ay, &bx, &by}) v->assign(padded, 0.0);
    for (std::size_t i = 0; i < edge.size(); ++i) {
      const Segment& g = seg[static_cast<std::size_t>(edge[i])];
      ax[i] = f.x(g.a.x), ay[i] = f.y(g.a.y), bx[i] = f.x(g.b.x), by[i] = f.y(g.b.y);
    }
  }
  detail::SegmentArrays arrays() const {
    return {ax.data(), ay.data(), bx.data(), by.data(), static_cast<std::int64_t>(edge.size())};
  }
};

}  // namespace

struct Evaluator::Impl {
  struct P {
    std::int64_t x, y;
  };
  struct Segment {  // an edge's endpoint positions, kept with the edge (no gathers in the sweeps)
    P a, b;
  };

  Impl(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m, std::int64_t width,
       std::int64_t height, const Progress& progress);
  // Crossing-count changes when v goes to q: delta[e] for every edge.
  void deltas(std::int64_t v, P q, std::vector<std::int64_t>& delta) const;
  // Whether q is a legal position for v apart from lying on a non-incident edge (candidates() tests
  // that in its sweep of the edges): inside the grid, on no other vertex, no other vertex on v's
  // edges from q.
  bool legal_apart_from_edges(std::int64_t v, P q) const;
  void move(std::int64_t v, std::int64_t x, std::int64_t y);
  void candidates(std::int64_t v, const std::int64_t* xy, std::int64_t count, CandidateFigures* out) const;

  std::vector<P> p_;
  std::vector<Segment> seg_;
  std::vector<std::int64_t> s_, t_, counts_;
  std::vector<std::vector<std::int64_t>> incident_;
  std::int64_t width_, height_;
};

Evaluator::Impl::Impl(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                      std::int64_t width, std::int64_t height, const Progress& progress)
    : width_(width), height_(height) {
  const Evaluation ev = detail::evaluate_impl(xy, n, edges, m, width, height, true, progress);  // validates too
  counts_ = ev.edge_crossings;
  p_.resize(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) p_[v] = {xy[2 * v], xy[2 * v + 1]};
  s_.resize(static_cast<std::size_t>(m));
  t_.resize(static_cast<std::size_t>(m));
  seg_.resize(static_cast<std::size_t>(m));
  incident_.resize(static_cast<std::size_t>(n));
  for (std::int64_t e = 0; e < m; ++e) {
    s_[e] = edges[2 * e];
    t_[e] = edges[2 * e + 1];
    seg_[e] = {p_[s_[e]], p_[t_[e]]};
    incident_[s_[e]].push_back(e);
    incident_[t_[e]].push_back(e);
  }
}

void Evaluator::Impl::deltas(std::int64_t v, P q, std::vector<std::int64_t>& delta) const {
  const std::int64_t m = static_cast<std::int64_t>(s_.size());
  delta.assign(static_cast<std::size_t>(m), 0);
  if (incident_[v].empty()) return;
  Frame frame;
  for (const P& u : p_) frame.cover(u.x, u.y);
  frame.cover(q.x, q.y);
  // v's edges never cross each other (they share v) and are left out; an edge sharing the other
  // endpoint w shares a point with both the old and the new edge and never counts either.
  std::vector<char> own(static_cast<std::size_t>(m), 0);
  for (std::int64_t e : incident_[v]) own[e] = 1;
  const Others others(seg_, own, frame);
  const detail::SegmentArrays arrays = others.arrays();
  std::vector<std::int64_t> change(others.ax.size(), 0);
  const detail::SweepKernels& kernels = detail::sweep_kernels();
  const bool exact = frame.exact();
  for (std::int64_t e : incident_[v]) {
    const P w = p_[s_[e] == v ? t_[e] : s_[e]];  // the other endpoint
    const double wx = frame.x(w.x), wy = frame.y(w.y);
    delta[e] += kernels.cross(frame.x(q.x), frame.y(q.y), wx, wy, arrays, change.data(), false, exact);
    delta[e] -= kernels.cross(frame.x(p_[v].x), frame.y(p_[v].y), wx, wy, arrays, change.data(), true, exact);
  }
  for (std::size_t i = 0; i < others.edge.size(); ++i) delta[others.edge[i]] += change[i];
}

bool Evaluator::Impl::legal_apart_from_edges(std::int64_t v, P q_in) const {
  const Pt q = pt(q_in);
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  if (q.x < 0 || q.x > width_ || q.y < 0 || q.y > height_) return false;
  for (std::int64_t u = 0; u < n; ++u)
    if (u != v && p_[u].x == q.x && p_[u].y == q.y) return false;
  for (std::int64_t e : incident_[v]) {  // another vertex on one of v's edges
    const std::int64_t w = s_[e] == v ? t_[e] : s_[e];
    for (std::int64_t u = 0; u < n; ++u)
      if (u != v && u != w && on_segment(pt(p_[u]), q, pt(p_[w]))) return false;
  }
  return true;
}

void Evaluator::Impl::move(std::int64_t v, std::int64_t x, std::int64_t y) {
  detail::check_vertex_index(v, static_cast<std::int64_t>(p_.size()));
  detail::check_position(x, y);
  std::vector<std::int64_t> delta;
  deltas(v, {x, y}, delta);
  for (std::size_t e = 0; e < counts_.size(); ++e) counts_[e] += delta[e];
  p_[v] = {x, y};
  for (std::int64_t e : incident_[v]) seg_[e] = {p_[s_[e]], p_[t_[e]]};
}

// With base[f] = counts[f] minus f's crossings with v's current edges (once per call), a candidate q
// only tests its own new edges (q, w_j) against the others: the same figures as a move and a full
// evaluation, half the crossing tests of deltas(). An edge sharing w_j shares a point with (q, w_j)
// and never counts (no index tests).
void Evaluator::Impl::candidates(std::int64_t v, const std::int64_t* xy, std::int64_t count, CandidateFigures* out) const {
  detail::check_vertex_index(v, static_cast<std::int64_t>(p_.size()));
  detail::check_candidates(xy, count);
  const std::int64_t m = static_cast<std::int64_t>(s_.size());
  Frame frame;
  for (const P& u : p_) frame.cover(u.x, u.y);
  for (std::int64_t c = 0; c < count; ++c) frame.cover(xy[2 * c], xy[2 * c + 1]);
  const bool exact = frame.exact();
  std::vector<P> pw;  // v's neighbours' positions, one per incident edge
  std::vector<char> own(static_cast<std::size_t>(m), 0);
  for (std::int64_t e : incident_[v]) {
    pw.push_back(p_[s_[e] == v ? t_[e] : s_[e]]);
    own[e] = 1;
  }
  const Others others(seg_, own, frame);
  const detail::SegmentArrays arrays = others.arrays();
  const detail::SweepKernels& kernels = detail::sweep_kernels();
  const std::size_t deg = pw.size(), size = others.edge.size();
  std::vector<std::int64_t> base(others.ax.size(), 0);
  for (std::size_t i = 0; i < size; ++i) base[i] = counts_[others.edge[i]];
  for (const P& w : pw)
    kernels.cross(frame.x(p_[v].x), frame.y(p_[v].y), frame.x(w.x), frame.y(w.y), arrays, base.data(), true, exact);
  // A fast exact screen for legal_apart_from_edges(), which then decides only the candidates it
  // flags: the vertices other than v as kernel arrays (v outside every box, at -1), and per
  // neighbour w whether another vertex shares w's point (the kernel leaves a segment's endpoints'
  // points out, and that vertex would lie on the new edge).
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  std::vector<double> vx(static_cast<std::size_t>(n + detail::kSweepPad), -1.0), vy(vx.size(), -1.0);
  for (std::int64_t u = 0; u < n; ++u)
    if (u != v) vx[u] = frame.x(p_[u].x), vy[u] = frame.y(p_[u].y);
  bool w_shared = false;
  for (std::int64_t e : incident_[v]) {
    const std::int64_t w = s_[e] == v ? t_[e] : s_[e];
    for (std::int64_t u = 0; u < n; ++u) w_shared |= u != v && u != w && p_[u].x == p_[w].x && p_[u].y == p_[w].y;
  }
  auto screened_legal = [&](P q) {
    if (w_shared || q.x < 0 || q.x > width_ || q.y < 0 || q.y > height_) return false;
    const double qx = frame.x(q.x), qy = frame.y(q.y);
    bool at_q = false;
    for (std::int64_t u = 0; u < n; ++u) at_q |= int(vx[u] == qx) & int(vy[u] == qy);
    if (at_q) return false;
    for (const P& w : pw)
      if (kernels.on_segment(qx, qy, frame.x(w.x), frame.y(w.y), vx.data(), vy.data(), 0, n, exact) < n) return false;
    return true;
  };
  ironkernels::detail::parallel_for(count, 1, [&](std::int64_t c0, std::int64_t c1) {
    std::vector<std::int64_t> now(base.size()), inc(deg);
    for (std::int64_t c = c0; c < c1; ++c) {
      const P q{xy[2 * c], xy[2 * c + 1]};
      const double qx = frame.x(q.x), qy = frame.y(q.y);
      std::copy(base.begin(), base.end(), now.begin());
      for (std::size_t j = 0; j < deg; ++j)
        inc[j] = kernels.cross(qx, qy, frame.x(pw[j].x), frame.y(pw[j].y), arrays, now.data(), false, exact);
      // k and edges_at_k as merge_k gives them (v's edges never cross each other): the largest (counts are
      // not negative, and k starts at 0) and how many reach it, in two passes without branches.
      std::int64_t k = 0, at_k = 0, twice_total = 0;
      for (std::size_t i = 0; i < size; ++i) k = std::max(k, now[i]), twice_total += now[i];
      for (std::size_t j = 0; j < deg; ++j) k = std::max(k, inc[j]), twice_total += inc[j];
      for (std::size_t i = 0; i < size; ++i) at_k += now[i] == k;
      for (std::size_t j = 0; j < deg; ++j) at_k += inc[j] == k;
      CandidateFigures fig;
      fig.k = k;
      fig.edges_at_k = at_k;
      fig.total_crossings = twice_total / 2;
      // q on an edge not incident to v is illegal
      fig.legal = !kernels.point_on_any(qx, qy, arrays, exact) && (screened_legal(q) || legal_apart_from_edges(v, q));
      out[c] = fig;
    }
  });
}

Evaluator::Evaluator(const ArrayView& xy, const ArrayView& edges, std::int64_t width, std::int64_t height,
                     const Progress& progress) {
  const std::int64_t* points = detail::host_pairs(xy, "xy");
  const std::int64_t* ends = detail::host_pairs(edges, "edges");
  impl_ = std::make_unique<Impl>(points, xy.shape[0], ends, edges.shape[0], width, height, progress);
}
Evaluator::~Evaluator() = default;
Evaluator::Evaluator(Evaluator&&) noexcept = default;
Evaluator& Evaluator::operator=(Evaluator&&) noexcept = default;

Evaluator::Impl& Evaluator::state() const {
  if (!impl_) raise<ValueError>("lcn: this Evaluator was moved from; accepted: the Evaluator it was moved to");
  return *impl_;
}
const std::vector<std::int64_t>& Evaluator::edge_crossings() const { return state().counts_; }
std::int64_t Evaluator::position(std::int64_t v, int axis) const {
  detail::check_vertex_index(v, static_cast<std::int64_t>(state().p_.size()));
  return axis ? impl_->p_[v].y : impl_->p_[v].x;
}
void Evaluator::move(std::int64_t v, std::int64_t x, std::int64_t y) { state().move(v, x, y); }
std::vector<CandidateFigures> Evaluator::candidates(std::int64_t v, const ArrayView& xy) const {
  Impl& self = state();
  const std::int64_t* points = detail::host_pairs(xy, "xy");
  std::vector<CandidateFigures> out(static_cast<std::size_t>(xy.shape[0]));
  self.candidates(v, points, xy.shape[0], out.data());
  return out;
}

}  // namespace ironkernels::lcn
