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
using detail::cross_properly;
using detail::on_segment;

}  // namespace

Evaluator::Evaluator(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                     std::int64_t width, std::int64_t height)
    : width_(width), height_(height) {
  const Evaluation ev = evaluate(xy, n, edges, m, width, height);  // validates the input too
  counts_ = ev.edge_crossings;
  p_.resize(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) p_[v] = {xy[2 * v], xy[2 * v + 1]};
  s_.resize(static_cast<std::size_t>(m));
  t_.resize(static_cast<std::size_t>(m));
  incident_.resize(static_cast<std::size_t>(n));
  for (std::int64_t e = 0; e < m; ++e) {
    s_[e] = edges[2 * e];
    t_[e] = edges[2 * e + 1];
    incident_[s_[e]].push_back(e);
    incident_[t_[e]].push_back(e);
  }
}

bool Evaluator::deltas(std::int64_t v, P q_in, std::vector<std::int64_t>& delta) const {
  const Pt q{q_in.x, q_in.y};
  const std::int64_t m = static_cast<std::int64_t>(s_.size()), n = static_cast<std::int64_t>(p_.size());
  delta.assign(static_cast<std::size_t>(m), 0);
  auto at = [&](std::int64_t u) { return Pt{p_[u].x, p_[u].y}; };
  for (std::int64_t e : incident_[v]) {
    const std::int64_t w = s_[e] == v ? t_[e] : s_[e];  // the other endpoint
    const Pt a_old = at(v), a_new = q, b = at(w);
    for (std::int64_t f = 0; f < m; ++f) {
      if (s_[f] == v || t_[f] == v || s_[f] == w || t_[f] == w) continue;  // shares an endpoint: never crosses
      const Pt c = at(s_[f]), d = at(t_[f]);
      const int change = int(cross_properly(a_new, b, c, d)) - int(cross_properly(a_old, b, c, d));
      if (change) {
        delta[e] += change;
        delta[f] += change;
      }
    }
  }
  // Legality of the new position.
  if (q.x < 0 || q.x > width_ || q.y < 0 || q.y > height_) return false;
  for (std::int64_t u = 0; u < n; ++u)
    if (u != v && p_[u].x == q.x && p_[u].y == q.y) return false;
  for (std::int64_t f = 0; f < m; ++f)  // q on an edge not incident to v
    if (s_[f] != v && t_[f] != v && on_segment(q, at(s_[f]), at(t_[f]))) return false;
  for (std::int64_t e : incident_[v]) {  // another vertex on one of v's edges
    const std::int64_t w = s_[e] == v ? t_[e] : s_[e];
    for (std::int64_t u = 0; u < n; ++u)
      if (u != v && u != w && on_segment(at(u), q, at(w))) return false;
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
}

void Evaluator::candidates(std::int64_t v, const std::int64_t* xy, std::int64_t count, CandidateFigures* out) const {
  detail::check_vertex_index(v, static_cast<std::int64_t>(p_.size()));
  detail::check_candidates(xy, count);
  ironkernels::detail::parallel_for(count, 1, [&](std::int64_t c0, std::int64_t c1) {
    std::vector<std::int64_t> delta;
    for (std::int64_t c = c0; c < c1; ++c) {
      CandidateFigures f;
      f.legal = deltas(v, {xy[2 * c], xy[2 * c + 1]}, delta);
      for (std::size_t e = 0; e < counts_.size(); ++e) {
        const std::int64_t now = counts_[e] + delta[e];
        f.total_crossings += now;
        if (now > f.k) {
          f.k = now;
          f.edges_at_k = 0;
        }
        if (now == f.k) ++f.edges_at_k;
      }
      f.total_crossings /= 2;
      if (counts_.empty()) f.edges_at_k = 0;
      out[c] = f;
    }
  });
}

}  // namespace ironkernels::lcn
