// C++ tests of the start layouts, legalise and the lower bounds on k: every result checked valid by
// lcn::evaluate, adversarial starts (one point, one line, vertices on edges, tight grids), the
// impossible cases refused, determinism, exact bounds of small graphs; the 10^4-vertex timings
// printed.
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "check.hpp"
#include "ironkernels/ironkernels.hpp"

using namespace ironkernels;

namespace {
using Edges = std::vector<std::int64_t>;

std::uint64_t rng_state = 99;
std::int64_t next(std::int64_t mod) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<std::int64_t>((rng_state >> 33) % static_cast<std::uint64_t>(mod));
}

Edges cycle(std::int64_t n) {
  Edges e;
  for (std::int64_t i = 0; i < n; ++i) e.insert(e.end(), {i, (i + 1) % n});
  return e;
}
Edges grid_graph(std::int64_t a, std::int64_t b) {
  Edges e;
  for (std::int64_t i = 0; i < a; ++i)
    for (std::int64_t j = 0; j < b; ++j) {
      if (i + 1 < a) e.insert(e.end(), {i * b + j, (i + 1) * b + j});
      if (j + 1 < b) e.insert(e.end(), {i * b + j, i * b + j + 1});
    }
  return e;
}
Edges random_graph(std::int64_t n, std::int64_t m) {
  Edges e;
  while (static_cast<std::int64_t>(e.size()) < 2 * m) {
    const std::int64_t s = next(n), t = next(n);
    if (s != t) e.insert(e.end(), {s, t});
  }
  return e;
}
Edges complete(std::int64_t n) {
  Edges e;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i + 1; j < n; ++j) e.insert(e.end(), {i, j});
  return e;
}
Edges complete_bipartite(std::int64_t a, std::int64_t b) {
  Edges e;
  for (std::int64_t i = 0; i < a; ++i)
    for (std::int64_t j = 0; j < b; ++j) e.insert(e.end(), {i, a + j});
  return e;
}
std::int64_t m_of(const Edges& e) { return static_cast<std::int64_t>(e.size()) / 2; }

bool valid(const std::vector<std::int64_t>& xy, const Edges& e, std::int64_t w, std::int64_t h) {
  return lcn::evaluate(lcn_pairs(xy.data(), static_cast<std::int64_t>(xy.size()) / 2), lcn_pairs(e.data(), m_of(e)), w, h).valid();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Legalises xy and checks the result; returns how many vertices moved.
std::int64_t legalise_checked(const char* what, std::vector<std::int64_t> xy, const Edges& e, std::int64_t w,
                              std::int64_t h, std::uint64_t seed = 1) {
  const std::vector<std::int64_t> before = xy;
  const std::int64_t n = static_cast<std::int64_t>(xy.size()) / 2;
  try {
    lcn::legalise(lcn_pairs(xy.data(), n), lcn_pairs(e.data(), m_of(e)), w, h, seed);
  } catch (const Error& err) {
    CHECK(false, "%s: threw %s", what, err.what());
    return -1;
  }
  CHECK(valid(xy, e, w, h), "%s: not valid after legalise", what);
  std::int64_t moved = 0;
  for (std::int64_t v = 0; v < n; ++v) moved += xy[2 * v] != before[2 * v] || xy[2 * v + 1] != before[2 * v + 1];
  return moved;
}

template <class F>
bool throws_value_error(F&& f, const char* needle = nullptr) {
  try {
    f();
  } catch (const ValueError& err) {
    return needle == nullptr || std::strstr(err.what(), needle) != nullptr;
  }
  return false;
}
}  // namespace

int main() {
  {  // A valid drawing is left alone.
    std::vector<std::int64_t> xy = {0, 0, 10, 0, 10, 10, 0, 10};
    const Edges e = complete(4);
    CHECK(legalise_checked("valid K4", xy, e, 10, 10) == 0, "a valid drawing moved");
  }
  {  // Two shared points, a vertex on an edge, one outside the box: only those move (the outside one
     // is clamped onto the boundary, where it is legal).
    std::vector<std::int64_t> xy = {0, 0, 20, 0, 10, 0, 0, 0, 5, 7, 5, 7, 40, -3};
    const Edges e = {0, 1, 3, 4, 4, 5};
    const std::int64_t moved = legalise_checked("few conflicts", xy, e, 20, 20);
    CHECK(moved == 4, "moved %lld vertices, expected 4 (vertex on edge, two sharers, the clamped one)", (long long)moved);
  }
  {  // Every vertex at one point, every vertex on one line, many vertices on edges.
    const Edges e = random_graph(300, 700);
    legalise_checked("one point", std::vector<std::int64_t>(600, 150), e, 300, 300);
    std::vector<std::int64_t> line(600);
    for (std::int64_t v = 0; v < 300; ++v) line[2 * v] = v, line[2 * v + 1] = 7;
    legalise_checked("one line", line, e, 300, 300);
    std::vector<std::int64_t> diag(600);  // a diagonal: long edges with many interior lattice points
    for (std::int64_t v = 0; v < 300; ++v) diag[2 * v] = diag[2 * v + 1] = v;
    legalise_checked("one diagonal", diag, e, 300, 300);
    const Edges path = [] {
      Edges p;
      for (std::int64_t i = 0; i + 1 < 300; ++i) p.insert(p.end(), {i, i + 1});
      p.insert(p.end(), {0, 299});
      return p;
    }();
    // A cycle on a line: the closing edge spans all the others' vertices; moving one endpoint is enough.
    CHECK(legalise_checked("cycle on a line", line, path, 300, 300) == 1, "more than one vertex moved");
  }
  {  // Tight grids: n = (W+1)(H+1) exactly (every point used), and W = H = sqrt(n).
    struct Case {
      const char* name;
      Edges e;
      std::int64_t n, w, h;
    };
    const Case cases[] = {
        {"cycle 100 on 10x10 points", cycle(100), 100, 9, 9},
        {"grid 10x10 on 10x10 points", grid_graph(10, 10), 100, 9, 9},
        {"random 100/150 on 10x10 points", random_graph(100, 150), 100, 9, 9},
        {"cycle 25 on 5x5 points", cycle(25), 25, 4, 4},
        {"K4 on 2x2 points", complete(4), 4, 1, 1},
        {"random 400/800 on 20x20", random_graph(400, 800), 400, 20, 20},
        {"random 2500/5000 on 50x50", random_graph(2500, 5000), 2500, 50, 50},
        {"grid 50x50 on 50x50", grid_graph(50, 50), 2500, 50, 50},
        {"K8 on 4x4 points", complete(8), 8, 3, 3},
        {"path on a 1-row grid", Edges{0, 1, 1, 2, 2, 3}, 4, 3, 0},
    };
    for (const Case& c : cases) {
      const auto t0 = std::chrono::steady_clock::now();
      legalise_checked(c.name, std::vector<std::int64_t>(2 * c.n, 0), c.e, c.w, c.h);
      std::vector<std::int64_t> scattered(2 * c.n);
      for (std::int64_t v = 0; v < c.n; ++v) scattered[2 * v] = next(c.w + 1), scattered[2 * v + 1] = next(c.h + 1);
      legalise_checked(c.name, scattered, c.e, c.w, c.h, 7);
      std::printf("legalise, tight grid, %s: %.3f s (from one point and from random points)\n", c.name, seconds_since(t0));
    }
  }
  {  // Impossible: too few points; K9 on 3 x 3 points (some three are collinear); a star K_{1,3} on a line.
    std::vector<std::int64_t> xy(2 * 10, 0);
    const Edges e = cycle(10);
    CHECK(throws_value_error([&] { lcn::legalise(lcn_pairs(xy.data(), 10), lcn_pairs(e.data(), 10), 2, 2, 1); }, "distinct points"),
          "10 vertices on 9 points");
    std::vector<std::int64_t> k9(18, 1);
    const std::vector<std::int64_t> k9_before = k9;
    const Edges e9 = complete(9);
    CHECK(throws_value_error([&] { lcn::legalise(lcn_pairs(k9.data(), 9), lcn_pairs(e9.data(), m_of(e9)), 2, 2, 1); }, "too small"),
          "K9 on 3x3 points");
    CHECK(k9 == k9_before, "a refused legalise changed its input");
    std::vector<std::int64_t> star(8, 0);
    const Edges e3 = {0, 1, 0, 2, 0, 3};
    CHECK(throws_value_error([&] { lcn::legalise(lcn_pairs(star.data(), 4), lcn_pairs(e3.data(), 3), 100, 0, 1); }), "K_{1,3} on a line");
    const Edges loop = {0, 0};
    CHECK(throws_value_error([&] { lcn::legalise(lcn_pairs(star.data(), 4), lcn_pairs(loop.data(), 1), 10, 10, 1); }, "self-loop"), "self-loop");
  }
  {  // Start layouts: valid, deterministic for a seed, different for another; disconnected graphs.
    Edges two = grid_graph(8, 8);
    const Edges c = cycle(30);
    for (std::size_t i = 0; i < c.size(); ++i) two.push_back(c[i] + 64);  // + 6 isolated vertices (94 .. 99)
    const std::int64_t n = 100;
    for (const std::string method : lcn::start_layout_methods()) {
      const auto a = lcn::start_layout(method, n, lcn_pairs(two.data(), m_of(two)), 200, 100, 5);
      const auto b = lcn::start_layout(method, n, lcn_pairs(two.data(), m_of(two)), 200, 100, 5);
      const auto d = lcn::start_layout(method, n, lcn_pairs(two.data(), m_of(two)), 200, 100, 6);
      CHECK(valid(a, two, 200, 100), "%s: not valid", method.c_str());
      CHECK(a == b, "%s: not deterministic", method.c_str());
      if (method != "circle") CHECK(a != d, "%s: the seed changes nothing", method.c_str());
      // Tight box too.
      const auto t = lcn::start_layout(method, n, lcn_pairs(two.data(), m_of(two)), 10, 9, 5);
      CHECK(valid(t, two, 10, 9), "%s on 11x10 points: not valid", method.c_str());
    }
    // A tree on the circle, in depth-first order, has no crossings.
    Edges tree;
    for (std::int64_t v = 1; v < 200; ++v) tree.insert(tree.end(), {next(v), v});
    const auto xy = lcn::start_layout("circle", 200, lcn_pairs(tree.data(), m_of(tree)), 4000, 4000, 1);
    const auto ev = lcn::evaluate(lcn_pairs(xy.data(), 200), lcn_pairs(tree.data(), m_of(tree)), 4000, 4000);
    CHECK(ev.valid() && ev.k == 0, "tree on a circle: k = %lld", (long long)ev.k);
    // Stress unfolds a grid graph: few crossings (a planar start for SA).
    const Edges g = grid_graph(20, 20);
    const auto s = lcn::start_layout("stress", 400, lcn_pairs(g.data(), m_of(g)), 400, 400, 3);
    const auto evs = lcn::evaluate(lcn_pairs(s.data(), 400), lcn_pairs(g.data(), m_of(g)), 400, 400);
    CHECK(evs.valid() && evs.k <= 1, "stress on a 20x20 grid graph: k = %lld, %lld crossings", (long long)evs.k,
          (long long)evs.total_crossings);
    CHECK(throws_value_error([&] { lcn::start_layout("spring", 400, lcn_pairs(g.data(), m_of(g)), 400, 400, 3); }, "spring"),
          "unknown method");
  }
  {  // Lower bounds: exact small cases, and never above a k that a drawing reaches.
    auto lb = [](const Edges& e, std::int64_t n, lcn::Planarity p = lcn::Planarity::unknown) {
      return lcn::k_lower_bound(n, lcn_pairs(e.data(), m_of(e)), p);
    };
    CHECK(lb(complete(4), 4).k == 0, "K4");
    CHECK(lb(complete(5), 5).k == 1 && lb(complete(5), 5).reason == "k-planar density", "K5: %lld",
          (long long)lb(complete(5), 5).k);
    CHECK(lb(complete(6), 6).k == 1, "K6 (1-planar: k = 1 is reached): %lld", (long long)lb(complete(6), 6).k);
    CHECK(lb(complete(7), 7).k == 2, "K7 (not 1-planar: 21 > 4*7-8): %lld", (long long)lb(complete(7), 7).k);
    CHECK(lb(complete_bipartite(3, 3), 6).k == 1 && lb(complete_bipartite(3, 3), 6).reason == "bipartite density",
          "K3,3: %lld %s", (long long)lb(complete_bipartite(3, 3), 6).k, lb(complete_bipartite(3, 3), 6).reason.c_str());
    CHECK(lcn::k_lower_bound(6, 9).k == 0, "counts of K3,3 without bipartiteness: 0");
    CHECK(lcn::k_lower_bound(6, 9, lcn::Planarity::no).k == 1 && lcn::k_lower_bound(6, 9, lcn::Planarity::no).reason == "non-planar",
          "non-planar counts");
    CHECK(lb(cycle(50), 50).k == 0 && lb(grid_graph(30, 30), 900).k == 0 && lb({}, 0).k == 0, "planar graphs: 0");
    // Duplicates and isolated vertices change nothing; a dense core inside a sparse graph is found.
    Edges k5twice = complete(5);
    const Edges k5 = complete(5);
    k5twice.insert(k5twice.end(), k5.begin(), k5.end());
    CHECK(lb(k5twice, 1000).k == 1, "K5 with duplicates and isolated vertices");
    Edges core = complete(40);  // K40 plus a long path hanging off it
    for (std::int64_t v = 40; v < 4000; ++v) core.insert(core.end(), {v - 1, v});
    const auto kc = lb(core, 4000), kk = lb(complete(40), 40);
    CHECK(kc.k == kk.k && kk.k > 5, "K40 + path: %lld, K40: %lld (%s)", (long long)kc.k, (long long)kk.k, kk.reason.c_str());
    CHECK(lcn::k_lower_bound(40, 780).k == kk.k, "counts of K40");
    // Every lower bound stays below the k of the drawings our layouts reach.
    const Edges dense = random_graph(60, 1200);
    for (const std::string method : lcn::start_layout_methods()) {
      const auto xy = lcn::start_layout(method, 60, lcn_pairs(dense.data(), m_of(dense)), 100, 100, 2);
      const auto ev = lcn::evaluate(lcn_pairs(xy.data(), 60), lcn_pairs(dense.data(), m_of(dense)), 100, 100);
      CHECK(lb(dense, 60).k <= ev.k, "dense random: bound %lld above the reached k %lld", (long long)lb(dense, 60).k,
            (long long)ev.k);
    }
    CHECK(throws_value_error([] { lcn::k_lower_bound(5, 11); }, "n(n-1)/2"), "too many edges for counts");
  }
  {  // 10^4 vertices, 2 * 10^4 edges: legalise from one point, each start layout. Timings printed.
    const std::int64_t n = 10000;
    const Edges e = random_graph(n, 2 * n);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::int64_t> xy(2 * n, 5000);
    lcn::legalise(lcn_pairs(xy.data(), n), lcn_pairs(e.data(), m_of(e)), n, n, 1);
    const double t_point = seconds_since(t0);
    CHECK(valid(xy, e, n, n), "10^4 at one point: not valid");
    std::printf("legalise, 10^4 vertices at one point (2*10^4 edges): %.3f s\n", t_point);
    CHECK(t_point < 2.0, "legalise took %.2f s (target 0.5 s)", t_point);
    const Edges g = grid_graph(100, 100);
    for (const std::string method : lcn::start_layout_methods()) {
      for (const auto* graph : {&e, &g}) {
        t0 = std::chrono::steady_clock::now();
        const auto s = lcn::start_layout(method, n, lcn_pairs(graph->data(), m_of(*graph)), n, n, 1);
        const double t = seconds_since(t0);
        CHECK(valid(s, *graph, n, n), "%s on 10^4 vertices: not valid", method.c_str());
        std::printf("start_layout %-6s 10^4 vertices, %s: %.3f s\n", method.c_str(),
                    graph == &e ? "random 2*10^4 edges" : "100x100 grid graph", t);
      }
    }
  }
  return report_and_exit_code();
}
