#pragma once
// Graph plumbing shared by the start layouts, legalise and the lower bounds: the simple undirected
// graph of an edge list (CSR), its connected components, breadth-first distances, and a small
// seeded generator (the same bits on every platform, unlike std:: distributions).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "lcn/lcn_internal.hpp"

namespace ironkernels::lcn::detail {

/// Adjacency in compressed rows: the neighbours of v are target[offset[v] .. offset[v+1]), sorted,
/// each once.
struct Csr {
  std::int64_t n = 0;
  std::vector<std::int64_t> offset, target;
  std::int64_t degree(std::int64_t v) const { return offset[v + 1] - offset[v]; }
  std::int64_t edges() const { return static_cast<std::int64_t>(target.size()) / 2; }
};

/// The simple graph of an edge list: direction and duplicate edges dropped. Checks each edge
/// (ValueError for an unknown vertex or a self-loop).
inline Csr simple_graph(std::int64_t n, const std::int64_t* edges, std::int64_t m) {
  Csr g;
  g.n = n;
  g.offset.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t e = 0; e < m; ++e) {
    check_edge(e, edges[2 * e], edges[2 * e + 1], n);
    ++g.offset[edges[2 * e] + 1];
    ++g.offset[edges[2 * e + 1] + 1];
  }
  for (std::int64_t v = 0; v < n; ++v) g.offset[v + 1] += g.offset[v];
  std::vector<std::int64_t> fill(g.offset.begin(), g.offset.end() - 1), target(static_cast<std::size_t>(2 * m));
  for (std::int64_t e = 0; e < m; ++e) {
    const std::int64_t s = edges[2 * e], t = edges[2 * e + 1];
    target[fill[s]++] = t;
    target[fill[t]++] = s;
  }
  // Sort and deduplicate each row, compacting in place.
  std::int64_t out = 0;
  for (std::int64_t v = 0; v < n; ++v) {
    const auto b = target.begin() + g.offset[v], e = target.begin() + g.offset[v + 1];
    std::sort(b, e);
    const std::int64_t start = out;
    for (auto it = b; it != e; ++it)
      if (it == b || *it != *(it - 1)) target[out++] = *it;
    g.offset[v] = start;
  }
  g.offset[n] = out;
  target.resize(static_cast<std::size_t>(out));
  g.target = std::move(target);
  return g;
}

/// comp[v] = component of v, numbered 0, 1, … in order of their lowest vertex; returns the count.
inline std::int64_t components(const Csr& g, std::vector<std::int64_t>& comp) {
  comp.assign(static_cast<std::size_t>(g.n), -1);
  std::vector<std::int64_t> stack;
  std::int64_t count = 0;
  for (std::int64_t r = 0; r < g.n; ++r) {
    if (comp[r] >= 0) continue;
    comp[r] = count;
    stack.push_back(r);
    while (!stack.empty()) {
      const std::int64_t v = stack.back();
      stack.pop_back();
      for (std::int64_t i = g.offset[v]; i < g.offset[v + 1]; ++i)
        if (comp[g.target[i]] < 0) {
          comp[g.target[i]] = count;
          stack.push_back(g.target[i]);
        }
    }
    ++count;
  }
  return count;
}

/// Hop distances from `source` (-1: unreachable) into `dist`, using `queue` as scratch.
template <class D>
void bfs(const Csr& g, std::int64_t source, std::vector<D>& dist, std::vector<std::int64_t>& queue) {
  dist.assign(static_cast<std::size_t>(g.n), D(-1));
  queue.clear();
  dist[source] = 0;
  queue.push_back(source);
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const std::int64_t v = queue[head];
    for (std::int64_t i = g.offset[v]; i < g.offset[v + 1]; ++i)
      if (dist[g.target[i]] < 0) {
        dist[g.target[i]] = dist[v] + 1;
        queue.push_back(g.target[i]);
      }
  }
}

/// splitmix64: tiny, fast, and the same sequence everywhere.
struct Rng {
  std::uint64_t state;
  explicit Rng(std::uint64_t seed) : state(seed ^ 0x5DEECE66DA3B1F2Bull) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, bound) for bound >= 1 (multiply-shift; the bias is below 2^-32 for our bounds).
  std::int64_t below(std::int64_t bound) {
    return static_cast<std::int64_t>((static_cast<unsigned __int128>(next()) * static_cast<std::uint64_t>(bound)) >> 64);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

}  // namespace ironkernels::lcn::detail
