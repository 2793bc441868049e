// Incremental evaluation: a vertex move changes only the crossings of its own edges.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/threads.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn.hpp"
#include "lcn/lcn_internal.hpp"
#include "lcn/predicates.hpp"

namespace ironkernels::lcn {
namespace {

using Pt = detail::Point;
using detail::box_of;
using detail::boxes_meet;
using detail::cross_properly;
using detail::merge_k;
using detail::on_segment;

// The predicates' point from the evaluator's own (header-visible) point type.
template <class Q>
Pt pt(const Q& q) {
  return {q.x, q.y};
}

}  // namespace

Evaluator::Evaluator(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                     std::int64_t width, std::int64_t height, const Progress& progress)
    : width_(width), height_(height) {
  const Evaluation ev = evaluate(xy, n, edges, m, width, height, progress);  // validates the input too
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

void Evaluator::deltas(std::int64_t v, P q_in, std::vector<std::int64_t>& delta) const {
  const Pt q = pt(q_in);
  const std::int64_t m = static_cast<std::int64_t>(s_.size());
  delta.assign(static_cast<std::size_t>(m), 0);
  for (std::int64_t e : incident_[v]) {
    const std::int64_t w = s_[e] == v ? t_[e] : s_[e];  // the other endpoint
    const Pt a_old = pt(p_[v]), b = pt(p_[w]);
    const detail::Box box_old = box_of(a_old, b), box_new = box_of(q, b);
    for (std::int64_t f = 0; f < m; ++f) {
      if (s_[f] == v || t_[f] == v || s_[f] == w || t_[f] == w) continue;  // shares an endpoint: never crosses
      const Pt c = pt(seg_[f].a), d = pt(seg_[f].b);
      const detail::Box box_f = box_of(c, d);
      const int change = int(boxes_meet(box_new, box_f) && cross_properly(q, b, c, d)) -
                         int(boxes_meet(box_old, box_f) && cross_properly(a_old, b, c, d));
      if (change) {
        delta[e] += change;
        delta[f] += change;
      }
    }
  }
}

bool Evaluator::legal_apart_from_edges(std::int64_t v, P q_in) const {
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

void Evaluator::move(std::int64_t v, std::int64_t x, std::int64_t y) {
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
// evaluation, half the crossing tests of deltas(), each behind a bounding-box test.
void Evaluator::candidates(std::int64_t v, const std::int64_t* xy, std::int64_t count, CandidateFigures* out) const {
  detail::check_vertex_index(v, static_cast<std::int64_t>(p_.size()));
  detail::check_candidates(xy, count);
  const std::int64_t m = static_cast<std::int64_t>(s_.size());
  std::vector<std::int64_t> w;  // v's neighbours, one per incident edge, and their positions
  std::vector<Pt> pw;
  std::vector<char> own(static_cast<std::size_t>(m), 0);
  for (std::int64_t e : incident_[v]) {
    w.push_back(s_[e] == v ? t_[e] : s_[e]);
    pw.push_back(pt(p_[w.back()]));
    own[e] = 1;
  }
  const std::size_t deg = w.size();
  const Pt pv = pt(p_[v]);
  std::vector<std::int64_t> base(static_cast<std::size_t>(m), 0);
  ironkernels::detail::parallel_for(m, 4096, [&](std::int64_t f0, std::int64_t f1) {
    for (std::int64_t f = f0; f < f1; ++f) {
      if (own[f]) continue;
      const Pt c = pt(seg_[f].a), d = pt(seg_[f].b);
      std::int64_t b = counts_[f];
      for (std::size_t j = 0; j < deg; ++j)
        if (s_[f] != w[j] && t_[f] != w[j]) b -= cross_properly(pv, pw[j], c, d);
      base[f] = b;
    }
  });
  ironkernels::detail::parallel_for(count, 1, [&](std::int64_t c0, std::int64_t c1) {
    std::vector<std::int64_t> inc(deg);
    std::vector<detail::Box> new_box(deg);
    for (std::int64_t c = c0; c < c1; ++c) {
      const Pt q{xy[2 * c], xy[2 * c + 1]};
      for (std::size_t j = 0; j < deg; ++j) inc[j] = 0, new_box[j] = box_of(q, pw[j]);
      std::int64_t k = 0, at_k = 0, twice_total = 0;
      bool on_edge = false;  // q on an edge not incident to v (illegal)
      for (std::int64_t f = 0; f < m; ++f) {
        if (own[f]) continue;
        const Pt a = pt(seg_[f].a), b = pt(seg_[f].b);
        const detail::Box box_f = box_of(a, b);
        on_edge = on_edge || on_segment(q, a, b);
        std::int64_t now = base[f];
        for (std::size_t j = 0; j < deg; ++j)
          if (s_[f] != w[j] && t_[f] != w[j] && boxes_meet(new_box[j], box_f) && cross_properly(q, pw[j], a, b))
            ++now, ++inc[j];
        merge_k(k, at_k, now, std::int64_t(1));
        twice_total += now;
      }
      for (std::size_t j = 0; j < deg; ++j) {  // v's edges never cross each other
        merge_k(k, at_k, inc[j], std::int64_t(1));
        twice_total += inc[j];
      }
      CandidateFigures fig;
      fig.k = k;
      fig.edges_at_k = at_k;
      fig.total_crossings = twice_total / 2;
      fig.legal = !on_edge && legal_apart_from_edges(v, {q.x, q.y});
      out[c] = fig;
    }
  });
}

}  // namespace ironkernels::lcn
