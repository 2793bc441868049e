// Stress layout of a connected graph on hop distances.
//
// Start: pivot MDS (Brandes & Pich 2006): classical MDS restricted to the distance columns of k
// pivots chosen far apart, its two leading axes by power iteration on the k × k Gram matrix.
// Then stochastic gradient descent on the stress sum w_ij (|x_i - x_j| - d_ij)^2 (Zheng, Pawar &
// Goodman 2019, "Graph drawing by stochastic gradient descent"), which reaches lower stress than
// SMACOF majorisation in fewer sweeps: every pair (i, j), w = d^-2, up to kAllPairs vertices; above
// that the sparse pivot model (Ortmann, Klimenta & Brandes 2016): exact terms on the edges, and for
// every vertex one term per pivot standing for the pivot's region, weighted by the region's vertices
// nearer to the pivot than half the distance. Serial and seeded: the same bits every run.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "lcn/layout_graph.hpp"
#include "lcn/layout_internal.hpp"

namespace ironkernels::lcn::detail {
namespace {

constexpr std::int64_t kAllPairs = 2000;  // up to this many vertices, every pair is a stress term
constexpr std::int64_t kPivots = 100;     // pivots of the sparse model (and at most 50 for the start)
constexpr int kEpochs = 30;               // SGD sweeps (the paper's schedule)

struct Term {
  std::int32_t i, j;  // j < 0 … a pivot term: only i moves, towards pivot ~j
  float d, w;
};

// Pivots far apart: the first at random, each next one the vertex farthest from those chosen.
// dist[p * n + v]: hops from pivot p to v.
std::vector<std::int64_t> choose_pivots(const Csr& g, std::int64_t k, Rng& rng, std::vector<std::int32_t>& dist) {
  const std::int64_t n = g.n;
  std::vector<std::int64_t> pivots, queue;
  std::vector<std::int32_t> row, nearest(static_cast<std::size_t>(n), INT32_MAX);
  dist.assign(static_cast<std::size_t>(k * n), 0);
  std::int64_t next = rng.below(n);
  for (std::int64_t p = 0; p < k; ++p) {
    pivots.push_back(next);
    bfs(g, next, row, queue);
    std::copy(row.begin(), row.end(), dist.begin() + p * n);
    std::int64_t far = 0;
    for (std::int64_t v = 0; v < n; ++v) {
      nearest[v] = std::min(nearest[v], row[v]);
      if (nearest[v] > nearest[far]) far = v;
    }
    next = far;
  }
  return pivots;
}

// Pivot MDS from the pivots' distance rows: n (x, y) pairs.
std::vector<double> pivot_mds(const std::vector<std::int32_t>& dist, std::int64_t k, std::int64_t n) {
  // C = -1/2 J D² J: squared distances double-centred over rows (vertices) and columns (pivots).
  std::vector<double> c(static_cast<std::size_t>(n * k)), col_mean(static_cast<std::size_t>(k), 0.0);
  double grand = 0;
  for (std::int64_t p = 0; p < k; ++p)
    for (std::int64_t v = 0; v < n; ++v) {
      const double d2 = double(dist[p * n + v]) * dist[p * n + v];
      c[v * k + p] = d2;
      col_mean[p] += d2;
    }
  for (std::int64_t p = 0; p < k; ++p) {
    grand += col_mean[p];
    col_mean[p] /= double(n);
  }
  grand /= double(n * k);
  for (std::int64_t v = 0; v < n; ++v) {
    double row_mean = 0;
    for (std::int64_t p = 0; p < k; ++p) row_mean += c[v * k + p];
    row_mean /= double(k);
    for (std::int64_t p = 0; p < k; ++p) c[v * k + p] = -0.5 * (c[v * k + p] - row_mean - col_mean[p] + grand);
  }
  std::vector<double> b(static_cast<std::size_t>(k * k), 0.0);  // B = Cᵀ C
  for (std::int64_t v = 0; v < n; ++v) {
    const double* r = &c[v * k];
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int64_t q = 0; q <= p; ++q) b[p * k + q] += r[p] * r[q];
  }
  for (std::int64_t p = 0; p < k; ++p)
    for (std::int64_t q = 0; q < p; ++q) b[q * k + p] = b[p * k + q];
  // The two leading eigenvectors by power iteration, the second kept orthogonal to the first.
  std::vector<double> axes[2];
  for (int a = 0; a < 2; ++a) {
    std::vector<double> u(static_cast<std::size_t>(k)), next(static_cast<std::size_t>(k));
    for (std::int64_t p = 0; p < k; ++p) u[p] = std::cos(1.0 + 0.7 * double(p) + 2.1 * a);  // fixed, generic
    for (int it = 0; it < 200; ++it) {
      for (std::int64_t p = 0; p < k; ++p) {
        double s = 0;
        for (std::int64_t q = 0; q < k; ++q) s += b[p * k + q] * u[q];
        next[p] = s;
      }
      if (a == 1) {
        double dot = 0;
        for (std::int64_t p = 0; p < k; ++p) dot += next[p] * axes[0][p];
        for (std::int64_t p = 0; p < k; ++p) next[p] -= dot * axes[0][p];
      }
      double norm = 0;
      for (const double x : next) norm += x * x;
      norm = std::sqrt(norm);
      if (norm == 0) break;
      for (std::int64_t p = 0; p < k; ++p) u[p] = next[p] / norm;
    }
    axes[a] = u;
  }
  std::vector<double> xy(static_cast<std::size_t>(2 * n), 0.0);
  for (std::int64_t v = 0; v < n; ++v)
    for (int a = 0; a < 2; ++a) {
      double s = 0;
      for (std::int64_t p = 0; p < k; ++p) s += c[v * k + p] * axes[a][p];
      xy[2 * v + a] = s;
    }
  return xy;
}

// Scales xy so that the terms' distances match best in the least-squares sense (the start's scale
// is arbitrary); a degenerate start (all points equal) gets a small random spread.
void fit_scale(std::vector<double>& xy, const std::vector<Term>& terms, const std::vector<std::int64_t>& pivots,
               Rng& rng) {
  double num = 0, den = 0;
  for (const Term& t : terms) {
    const std::int64_t j = t.j >= 0 ? t.j : pivots[-t.j - 1];
    const double dx = xy[2 * t.i] - xy[2 * j], dy = xy[2 * t.i + 1] - xy[2 * j + 1];
    const double len = std::sqrt(dx * dx + dy * dy);
    num += t.w * t.d * len;
    den += t.w * len * len;
  }
  if (den > 0 && num > 0) {
    for (double& x : xy) x *= num / den;
  } else {
    for (double& x : xy) x = rng.uniform();
  }
}

// Terms are grouped by their first vertex (group g: terms[group[g] .. group[g+1])). A full shuffle
// of all terms every sweep, as in the paper, costs more than the sweep itself (random swaps over
// megabytes); the terms of a group are shuffled once and the order of the groups every sweep.
void sgd(std::vector<double>& xy, std::vector<Term>& terms, const std::vector<std::int64_t>& group,
         const std::vector<std::int64_t>& pivots, Rng& rng) {
  if (terms.empty()) return;
  double w_min = terms[0].w, w_max = terms[0].w;
  for (const Term& t : terms) {
    w_min = std::min(w_min, double(t.w));
    w_max = std::max(w_max, double(t.w));
  }
  const std::int64_t groups = static_cast<std::int64_t>(group.size()) - 1;
  for (std::int64_t g = 0; g < groups; ++g)
    for (std::int64_t a = group[g + 1] - group[g]; a > 1; --a)
      std::swap(terms[group[g] + a - 1], terms[group[g] + rng.below(a)]);
  std::vector<std::int64_t> order(static_cast<std::size_t>(groups));
  for (std::int64_t g = 0; g < groups; ++g) order[g] = g;
  const double eta_max = 1.0 / w_min, eta_min = 0.1 / w_max;
  const double decay = std::log(eta_max / eta_min) / (kEpochs - 1);
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    const double eta = eta_max * std::exp(-decay * epoch);
    for (std::int64_t a = groups; a > 1; --a) std::swap(order[a - 1], order[rng.below(a)]);
    for (const std::int64_t g : order)
      for (std::int64_t k = group[g]; k < group[g + 1]; ++k) {
        const Term& t = terms[k];
        const bool pivot = t.j < 0;
        const std::int64_t j = pivot ? pivots[-t.j - 1] : t.j;
        double dx = xy[2 * t.i] - xy[2 * j], dy = xy[2 * t.i + 1] - xy[2 * j + 1];
        double len = std::sqrt(dx * dx + dy * dy);
        if (len < 1e-9) {  // coincident: pull apart in a random direction
          const double angle = 6.283185307179586 * rng.uniform();
          dx = 1e-6 * std::cos(angle);
          dy = 1e-6 * std::sin(angle);
          len = 1e-6;
        }
        const double mu = std::min(double(t.w) * eta, 1.0);
        const double r = (pivot ? 1.0 : 0.5) * mu * (len - t.d) / len;
        xy[2 * t.i] -= r * dx;
        xy[2 * t.i + 1] -= r * dy;
        if (!pivot) {
          xy[2 * j] += r * dx;
          xy[2 * j + 1] += r * dy;
        }
      }
  }
}

}  // namespace

std::vector<double> pivot_mds_layout(const Csr& g, std::uint64_t seed) {
  const std::int64_t n = g.n;
  if (n <= 2) return n == 2 ? std::vector<double>{0, 0, 1, 0} : std::vector<double>(static_cast<std::size_t>(2 * n), 0.0);
  Rng rng(seed);
  std::vector<std::int32_t> dist;
  const std::int64_t k = std::min<std::int64_t>(n, 50);
  choose_pivots(g, k, rng, dist);
  return pivot_mds(dist, k, n);
}

std::vector<double> stress_layout(const Csr& g, std::uint64_t seed) {
  const std::int64_t n = g.n;
  if (n <= 2) return n == 2 ? std::vector<double>{0, 0, 1, 0} : std::vector<double>(static_cast<std::size_t>(2 * n), 0.0);
  Rng rng(seed);
  std::vector<Term> terms;
  std::vector<std::int64_t> pivots, group;  // group: where each vertex's terms start
  std::vector<std::int32_t> dist;
  std::vector<double> xy;
  if (n <= kAllPairs) {
    const std::int64_t k = std::min<std::int64_t>(n, 50);
    choose_pivots(g, k, rng, dist);
    xy = pivot_mds(dist, k, n);
    std::vector<std::int32_t> row;
    std::vector<std::int64_t> queue;
    terms.reserve(static_cast<std::size_t>(n * (n - 1) / 2));
    for (std::int64_t i = 0; i < n; ++i) {
      group.push_back(static_cast<std::int64_t>(terms.size()));
      bfs(g, i, row, queue);
      for (std::int64_t j = i + 1; j < n; ++j) {
        const float d = float(row[j]);
        terms.push_back({std::int32_t(i), std::int32_t(j), d, 1.0f / (d * d)});
      }
    }
  } else {
    const std::int64_t k = std::min<std::int64_t>(n, kPivots);
    pivots = choose_pivots(g, k, rng, dist);
    xy = pivot_mds(dist, std::min<std::int64_t>(k, 50), n);
    // Regions: each vertex to its nearest pivot; per pivot, how many of its region lie within each
    // distance (prefix counts), for the weights s_ip = |{j in R(p) : d(p, j) <= d(p, i) / 2}|.
    std::vector<std::int64_t> region(static_cast<std::size_t>(n), 0);
    std::int32_t d_max = 0;
    for (std::int64_t v = 0; v < n; ++v) {
      for (std::int64_t p = 1; p < k; ++p)
        if (dist[p * n + v] < dist[region[v] * n + v]) region[v] = p;
      for (std::int64_t p = 0; p < k; ++p) d_max = std::max(d_max, dist[p * n + v]);
    }
    std::vector<std::int64_t> within(static_cast<std::size_t>(k * (d_max + 1)), 0);
    for (std::int64_t v = 0; v < n; ++v) ++within[region[v] * (d_max + 1) + dist[region[v] * n + v]];
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int32_t d = 1; d <= d_max; ++d) within[p * (d_max + 1) + d] += within[p * (d_max + 1) + d - 1];
    for (std::int64_t v = 0; v < n; ++v) {
      group.push_back(static_cast<std::int64_t>(terms.size()));
      for (std::int64_t i = g.offset[v]; i < g.offset[v + 1]; ++i)
        if (g.target[i] > v) terms.push_back({std::int32_t(v), std::int32_t(g.target[i]), 1.0f, 1.0f});
      for (std::int64_t p = 0; p < k; ++p) {
        const std::int32_t d = dist[p * n + v];
        if (d <= 1) continue;  // the pivot itself, or a neighbour (an exact edge term)
        const double s = double(std::max<std::int64_t>(1, within[p * (d_max + 1) + d / 2]));
        terms.push_back({std::int32_t(v), std::int32_t(-p - 1), float(d), float(s / (double(d) * d))});
      }
    }
  }
  group.push_back(static_cast<std::int64_t>(terms.size()));
  fit_scale(xy, terms, pivots, rng);
  sgd(xy, terms, group, pivots, rng);
  return xy;
}

}  // namespace ironkernels::lcn::detail
