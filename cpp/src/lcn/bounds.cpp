// Lower bounds on k (the local crossing number of a drawing) from n and m alone.
//
// Two routes. (1) Edge density of k-planar graphs (every edge crossed at most k times), n >= 3:
//   k = 0: m <= 3n - 6 (Euler; bipartite: m <= 2n - 4)
//   k = 1: m <= 4n - 8             Pach & Tóth, Combinatorica 17 (1997)
//   k = 2: m <= 5n - 10            Pach & Tóth (1997)
//   k = 3: m <= 5.5n - 11          Pach, Radoičić, Tardos & Tóth, Discrete Comput. Geom. 36 (2006)
//   k = 4: m <= 6n - 12            Ackerman, Comput. Geom. 85 (2019)
//   any k: m <= 3.81 sqrt(k) n     Ackerman (2019), a corollary of his crossing lemma c = 1/29; used
//          only where it claims k >= 5, i.e. m > 7.62n, inside the lemma's range m >= 7n, where
//          k·m/2 >= cr >= m³/(29n²) gives k >= (m / 3.808n)²; below, the table above is stronger
//          (and the formula alone would be false for k = 1: optimal 1-planar graphs have 4n - 8).
// (2) A lower bound on the crossing number cr: each crossing lies on two edges, so some edge has
//     at least 2cr/m crossings and k >= ceil(2cr/m).
//   cr >= m - 3(n - 2)              Euler (bipartite: m - 2(n - 2))
//   cr >= 73/18 m - 305/18 (n - 2) for 5n < m <= 6n, cr >= 5m - 407/18 (n - 2) for m > 6n, and
//   cr >= m³ / (27.61 n²) for m > 6.79n: Büngener & Kaufmann, "Improving the Crossing Lemma by
//        Characterizing Dense 2-Planar and 3-Planar Graphs", GD 2024, LIPIcs 320, 29 (the refereed
//        constants; the later arXiv:2409.01733v2 states 27.48 for m > 6.77n, and Ackerman (2019)
//        the weaker 1/29 for m >= 7n).
//   cr >= m³ / (27 n²) for bipartite m >= 3n: the probabilistic proof of the lemma (Proofs from
//        THE BOOK) run on the bipartite Euler bound cr >= m - 2n, with p = 3n/m.
// These hold for every drawing of the graph, straight-line or not; a grid only makes k larger. A
// drawing of a subgraph is part of the drawing, so the bounds also hold for every subgraph: the
// edge-list form takes them over each component and each step of a min-degree peeling (the dense
// cores of a sparse graph). Exact integer arithmetic (128-bit) throughout.
#include <algorithm>

#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn_layout.hpp"
#include "lcn/layout_graph.hpp"
#include "lcn/lcn_internal.hpp"

namespace ironkernels::lcn {
namespace {
using i128 = __int128;

constexpr std::int64_t kMaxCount = std::int64_t(1) << 36;  // keeps m³ · 2761 well inside 128 bits

i128 ceil_div(i128 a, i128 b) { return a <= 0 ? 0 : (a + b - 1) / b; }

struct Best {
  std::int64_t k = 0;
  const char* reason = "none";
  void offer(i128 candidate, const char* why) {
    if (candidate > k) {
      k = static_cast<std::int64_t>(candidate);
      reason = why;
    }
  }
};

// k from a crossing-number bound cr >= num / den (rounded up: cr is an integer).
i128 k_from_crossings(i128 num, i128 den, i128 m) { return ceil_div(2 * ceil_div(num, den), m); }

void offer_bounds(std::int64_t n_vertices, std::int64_t m_edges, bool bipartite, Best& best) {
  if (n_vertices < 3 || m_edges == 0) return;  // n <= 2: at most one edge, nothing crosses
  const i128 n = n_vertices, m = m_edges, n2 = n - 2;
  std::int64_t density = 0;
  if (m > (bipartite ? 2 : 3) * n2) density = 1;
  if (m > 4 * n2) density = 2;
  if (m > 5 * n2) density = 3;
  if (2 * m > 11 * n2) density = 4;
  if (m > 6 * n2) density = 5;
  best.offer(density, bipartite && density == 1 ? "bipartite density" : "k-planar density");
  const i128 general = ceil_div(10000 * m * m, 145161 * n * n);  // (m / 3.81n)², rounded up
  if (general >= 5) best.offer(general, "k-planar density");

  best.offer(k_from_crossings(m - (bipartite ? 2 : 3) * n2, 1, m), bipartite ? "bipartite Euler" : "Euler crossings");
  if (m > 6 * n)
    best.offer(k_from_crossings(90 * m - 407 * n2, 18, m), "linear crossing bound");
  else if (m > 5 * n)
    best.offer(k_from_crossings(73 * m - 305 * n2, 18, m), "linear crossing bound");
  if (100 * m > 679 * n) best.offer(k_from_crossings(100 * m * m * m, 2761 * n * n, m), "crossing lemma");
  if (bipartite && m >= 3 * n) best.offer(k_from_crossings(m * m * m, 27 * n * n, m), "crossing lemma");
}

void check_counts(std::int64_t n, std::int64_t m) {
  if (n < 0 || m < 0 || n > kMaxCount || m > kMaxCount)
    raise<ValueError>("lcn.lower_bound: n = ", n, " and m = ", m, " must lie in [0, 2^36]");
}

KLowerBound result(const Best& best) { return {best.k, best.reason}; }

}  // namespace

KLowerBound k_lower_bound(std::int64_t n, std::int64_t m, Planarity planar) {
  check_counts(n, m);
  if (static_cast<i128>(m) * 2 > static_cast<i128>(n) * (n - 1))
    raise<ValueError>("lcn.lower_bound: a simple graph on ", n, " vertices has at most n(n-1)/2 edges, not ", m);
  Best best;
  offer_bounds(n, m, false, best);
  if (planar == Planarity::no) best.offer(1, "non-planar");
  return result(best);
}

KLowerBound k_lower_bound(std::int64_t n, const ArrayView& edge_view, Planarity planar) {
  const std::int64_t* edges = detail::host_pairs(edge_view, "edges");
  const std::int64_t m = edge_view.shape[0];
  check_counts(n, m);
  const detail::Csr g = detail::simple_graph(n, edges, m);
  // Two-colouring and components in one sweep.
  std::vector<std::int64_t> comp;
  const std::int64_t count = detail::components(g, comp);
  std::vector<std::int8_t> colour(static_cast<std::size_t>(n), -1);
  std::vector<char> comp_bipartite(static_cast<std::size_t>(count), 1);
  std::vector<std::int64_t> comp_n(static_cast<std::size_t>(count), 0), comp_m(static_cast<std::size_t>(count), 0);
  std::vector<std::int64_t> stack;
  for (std::int64_t r = 0; r < n; ++r) {
    if (colour[r] >= 0) continue;
    colour[r] = 0;
    stack.push_back(r);
    while (!stack.empty()) {
      const std::int64_t v = stack.back();
      stack.pop_back();
      for (std::int64_t i = g.offset[v]; i < g.offset[v + 1]; ++i) {
        const std::int64_t u = g.target[i];
        if (colour[u] < 0) {
          colour[u] = static_cast<std::int8_t>(1 - colour[v]);
          stack.push_back(u);
        } else if (colour[u] == colour[v]) {
          comp_bipartite[comp[v]] = 0;
        }
      }
    }
  }
  std::int64_t active = 0;
  for (std::int64_t v = 0; v < n; ++v) {
    if (g.degree(v) == 0) continue;
    ++active;
    ++comp_n[comp[v]];
    comp_m[comp[v]] += g.degree(v);
  }
  const bool bipartite = std::all_of(comp_bipartite.begin(), comp_bipartite.end(), [](char b) { return b != 0; });
  Best best;
  offer_bounds(active, g.edges(), bipartite, best);
  for (std::int64_t c = 0; c < count; ++c) offer_bounds(comp_n[c], comp_m[c] / 2, comp_bipartite[c] != 0, best);

  // Min-degree peeling (Batagelj & Zaversnik's bucket order): after each removal the rest is a
  // subgraph, often denser than the whole.
  std::int64_t max_degree = 0;
  for (std::int64_t v = 0; v < n; ++v) max_degree = std::max(max_degree, g.degree(v));
  std::vector<std::int64_t> degree(static_cast<std::size_t>(n)), bin(static_cast<std::size_t>(max_degree) + 2, 0),
      order(static_cast<std::size_t>(n)), position(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) ++bin[degree[v] = g.degree(v)];
  for (std::int64_t d = 0, start = 0; d <= max_degree; ++d) {
    const std::int64_t size = bin[d];
    bin[d] = start;
    start += size;
  }
  for (std::int64_t v = 0; v < n; ++v) {
    position[v] = bin[degree[v]]++;
    order[position[v]] = v;
  }
  for (std::int64_t d = max_degree; d > 0; --d) bin[d] = bin[d - 1];
  bin[0] = 0;
  std::vector<char> removed(static_cast<std::size_t>(n), 0);
  std::int64_t rest_n = active, rest_m = g.edges();
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t v = order[i];
    removed[v] = 1;
    std::int64_t remaining = 0;
    for (std::int64_t a = g.offset[v]; a < g.offset[v + 1]; ++a) {
      const std::int64_t u = g.target[a];
      if (removed[u]) continue;
      ++remaining;
      if (degree[u] > degree[v]) {  // u moves one bucket down
        const std::int64_t du = degree[u], pu = position[u], pw = bin[du], w = order[pw];
        if (u != w) {
          order[pu] = w;
          position[w] = pu;
          order[pw] = u;
          position[u] = pw;
        }
        ++bin[du];
        --degree[u];
      }
    }
    if (g.degree(v) == 0) continue;  // isolated from the start: not counted in rest_n
    rest_m -= remaining;
    --rest_n;
    // Vertices whose neighbours all went still count in rest_n: a larger n only weakens a bound.
    offer_bounds(rest_n, rest_m, bipartite, best);
  }
  if (planar == Planarity::no) best.offer(1, "non-planar");
  return result(best);
}

}  // namespace ironkernels::lcn
