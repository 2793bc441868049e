// C++ tests of the planarity test and the planar grid drawings. Every drawing is checked by the exact
// evaluator (no crossing, valid, inside the (n-2) × (n-2) box); non-planarity is checked on graphs
// that contain a subdivided K5 or K3,3 by construction, many of them within Euler's edge bound, so
// that the LR test itself has to find the conflict.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "ironkernels/ironkernels.hpp"

using namespace ironkernels;
using Edges = std::vector<std::int64_t>;

namespace {

struct Rng {
  std::uint64_t s;
  std::int64_t operator()(std::int64_t mod) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::int64_t>((s >> 33) % static_cast<std::uint64_t>(mod));
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Draws the graph and checks the drawing with the evaluator; returns the time of the drawing.
double check_planar(const std::string& name, std::int64_t n, const Edges& e) {
  const std::int64_t m = static_cast<std::int64_t>(e.size() / 2);
  std::vector<std::int64_t> xy(2 * n + 2, -7);
  const auto t0 = std::chrono::steady_clock::now();
  const bool ok = lcn::planar_grid_drawing(n, lcn_pairs(e.data(), m), lcn_pairs(xy.data(), n));
  const double t = seconds_since(t0);
  CHECK(ok, "%s: planar graph (n=%lld m=%lld) refused", name.c_str(), (long long)n, (long long)m);
  CHECK(lcn::is_planar(n, lcn_pairs(e.data(), m)), "%s: is_planar false", name.c_str());
  CHECK(xy[2 * n] == -7 && xy[2 * n + 1] == -7, "%s: wrote past n pairs", name.c_str());
  if (!ok) return t;
  const std::int64_t box = std::max<std::int64_t>(n - 2, 1);
  const lcn::Evaluation ev = lcn::evaluate(lcn_pairs(xy.data(), n), lcn_pairs(e.data(), m), box, box);
  CHECK(ev.valid() && ev.total_crossings == 0, "%s: n=%lld m=%lld: %lld crossings, %zu violations", name.c_str(),
        (long long)n, (long long)m, (long long)ev.total_crossings, ev.violations.size());
  return t;
}

void check_nonplanar(const std::string& name, std::int64_t n, const Edges& e) {
  const std::int64_t m = static_cast<std::int64_t>(e.size() / 2);
  std::vector<std::int64_t> xy(2 * n, -7);
  CHECK(!lcn::is_planar(n, lcn_pairs(e.data(), m)), "%s: non-planar graph (n=%lld m=%lld) called planar", name.c_str(),
        (long long)n, (long long)m);
  CHECK(!lcn::planar_grid_drawing(n, lcn_pairs(e.data(), m), lcn_pairs(xy.data(), n)), "%s: drawing of a non-planar graph", name.c_str());
  CHECK(std::all_of(xy.begin(), xy.end(), [](std::int64_t c) { return c == -7; }), "%s: wrote a refused drawing",
        name.c_str());
}

Edges complete(std::int64_t k) {
  Edges e;
  for (std::int64_t a = 0; a < k; ++a)
    for (std::int64_t b = a + 1; b < k; ++b) e.insert(e.end(), {a, b});
  return e;
}

Edges k33() {
  Edges e;
  for (std::int64_t a = 0; a < 3; ++a)
    for (std::int64_t b = 3; b < 6; ++b) e.insert(e.end(), {a, b});
  return e;
}

Edges petersen() {
  Edges e;
  for (std::int64_t i = 0; i < 5; ++i) e.insert(e.end(), {i, (i + 1) % 5, i, i + 5, i + 5, (i + 2) % 5 + 5});
  return e;
}

Edges grid(std::int64_t rows, std::int64_t cols) {
  Edges e;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::int64_t v = r * cols + c;
      if (c + 1 < cols) e.insert(e.end(), {v, v + 1});
      if (r + 1 < rows) e.insert(e.end(), {v, v + cols});
    }
  return e;
}

Edges wheel(std::int64_t rim) {  // hub rim, rim vertices 0 … rim-1
  Edges e;
  for (std::int64_t i = 0; i < rim; ++i) e.insert(e.end(), {i, (i + 1) % rim, rim, i});
  return e;
}

Edges random_tree(std::int64_t n, Rng& rng) {
  Edges e;
  for (std::int64_t v = 1; v < n; ++v) e.insert(e.end(), {rng(v), v});
  return e;
}

// A random triangulation: vertices inserted into random faces, then random edge flips. Faces are
// kept consistently oriented; a directed edge names its face.
Edges random_maximal_planar(std::int64_t n, Rng& rng, std::int64_t flips) {
  std::vector<std::array<std::int64_t, 3>> faces{{0, 1, 2}, {0, 2, 1}};
  for (std::int64_t v = 3; v < n; ++v) {
    const std::int64_t f = rng(static_cast<std::int64_t>(faces.size()));
    const auto [a, b, c] = faces[f];
    faces[f] = {a, b, v};
    faces.push_back({b, c, v});
    faces.push_back({c, a, v});
  }
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> face_of;
  std::set<std::pair<std::int64_t, std::int64_t>> adjacent;
  for (std::int64_t f = 0; f < static_cast<std::int64_t>(faces.size()); ++f)
    for (int j = 0; j < 3; ++j) {
      const std::int64_t a = faces[f][j], b = faces[f][(j + 1) % 3];
      face_of[{a, b}] = f;
      adjacent.insert({std::min(a, b), std::max(a, b)});
    }
  std::vector<std::int64_t> degree(n, 0);
  for (const auto& [a, b] : adjacent) ++degree[a], ++degree[b];
  for (std::int64_t i = 0; i < flips && n > 4; ++i) {
    const std::int64_t f1 = rng(static_cast<std::int64_t>(faces.size()));
    const int j = static_cast<int>(rng(3));
    const std::int64_t a = faces[f1][j], b = faces[f1][(j + 1) % 3], c = faces[f1][(j + 2) % 3];
    const std::int64_t f2 = face_of.at({b, a});
    std::int64_t d = -1;
    for (int t = 0; t < 3; ++t)
      if (faces[f2][t] != a && faces[f2][t] != b) d = faces[f2][t];
    if (degree[a] <= 3 || degree[b] <= 3 || adjacent.count({std::min(c, d), std::max(c, d)})) continue;
    for (auto key : {std::pair{a, b}, std::pair{b, c}, std::pair{c, a}, std::pair{b, a}, std::pair{a, d}, std::pair{d, b}})
      face_of.erase(key);
    adjacent.erase({std::min(a, b), std::max(a, b)});
    adjacent.insert({std::min(c, d), std::max(c, d)});
    --degree[a], --degree[b], ++degree[c], ++degree[d];
    faces[f1] = {c, a, d};
    faces[f2] = {d, b, c};
    for (std::int64_t f : {f1, f2})
      for (int t = 0; t < 3; ++t) face_of[{faces[f][t], faces[f][(t + 1) % 3]}] = f;
  }
  Edges e;
  for (const auto& [a, b] : adjacent) e.insert(e.end(), {a, b});
  // shuffled pairs in random directions: the input order must not matter
  const std::int64_t m = static_cast<std::int64_t>(e.size() / 2);
  for (std::int64_t i = m - 1; i > 0; --i) {
    const std::int64_t j = rng(i + 1);
    std::swap(e[2 * i], e[2 * j]);
    std::swap(e[2 * i + 1], e[2 * j + 1]);
    if (rng(2)) std::swap(e[2 * i], e[2 * i + 1]);
  }
  return e;
}

Edges drop_random(const Edges& e, double keep, Rng& rng) {
  Edges out;
  for (std::size_t i = 0; i < e.size(); i += 2)
    if (rng(1000000) < keep * 1000000) out.insert(out.end(), {e[i], e[i + 1]});
  return out;
}

// g with graph h added on vertices offset … offset + nh - 1.
void append(Edges& g, const Edges& h, std::int64_t offset) {
  for (std::int64_t x : h) g.push_back(x + offset);
}

// Each edge of `pattern` (on `branch` vertices) becomes a path of 1 … 3 new vertices; branch vertex i is
// vertex `at[i]` of a graph with n vertices so far. Returns the new vertex count.
std::int64_t add_subdivision(Edges& g, std::int64_t n, const Edges& pattern, const std::vector<std::int64_t>& at, Rng& rng) {
  for (std::size_t i = 0; i < pattern.size(); i += 2) {
    std::int64_t prev = at[pattern[i]];
    for (std::int64_t s = 1 + rng(3); s > 0; --s) {
      g.insert(g.end(), {prev, n});
      prev = n++;
    }
    g.insert(g.end(), {prev, at[pattern[i + 1]]});
  }
  return n;
}

std::vector<std::int64_t> distinct_vertices(std::int64_t count, std::int64_t n, Rng& rng) {
  std::vector<std::int64_t> out;
  while (static_cast<std::int64_t>(out.size()) < count) {
    const std::int64_t v = rng(n);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

}  // namespace

int main() {
  Rng rng{2024};
  // Tiny and degenerate inputs.
  for (std::int64_t n = 0; n <= 5; ++n) check_planar("isolated " + std::to_string(n), n, {});
  check_planar("one edge", 2, {0, 1});
  check_planar("edge with duplicates", 2, {0, 1, 1, 0, 0, 1});
  check_planar("path 3", 3, {0, 1, 1, 2});
  check_planar("triangle", 3, {0, 1, 1, 2, 2, 0});
  check_planar("edge and isolated", 3, {2, 0});
  check_planar("K4", 4, complete(4));
  check_planar("K4 twice over, both directions", 4, [] {
    Edges e = complete(4), r = complete(4);
    for (std::size_t i = 0; i < r.size(); i += 2) e.insert(e.end(), {r[i + 1], r[i]});
    return e;
  }());
  check_planar("K4 minus an edge", 4, {0, 1, 1, 2, 2, 3, 3, 0, 0, 2});
  check_planar("star", 30, [] {
    Edges e;
    for (std::int64_t v = 1; v < 30; ++v) e.insert(e.end(), {0, v});
    return e;
  }());
  // Families.
  for (std::int64_t k : {3, 4, 5, 17, 200}) {
    Edges cyc;
    for (std::int64_t i = 0; i < k; ++i) cyc.insert(cyc.end(), {i, (i + 1) % k});
    check_planar("cycle " + std::to_string(k), k, cyc);
    check_planar("wheel " + std::to_string(k), k + 1, wheel(k));
  }
  for (auto [r, c] : {std::pair{1, 7}, std::pair{2, 2}, std::pair{3, 5}, std::pair{10, 10}, std::pair{31, 17}})
    check_planar("grid " + std::to_string(r) + "x" + std::to_string(c), r * c, grid(r, c));
  for (std::int64_t n : {2, 3, 10, 100, 1000}) check_planar("tree " + std::to_string(n), n, random_tree(n, rng));
  for (std::int64_t n : {4, 5, 6, 8, 12, 30, 100, 500, 2000}) {
    for (int rep = 0; rep < 3; ++rep) {
      const Edges g = random_maximal_planar(n, rng, 4 * n);
      const std::string name = "maximal planar " + std::to_string(n) + "#" + std::to_string(rep);
      check_planar(name, n, g);
      for (double keep : {0.9, 0.6, 0.3}) check_planar(name + " kept " + std::to_string(keep), n, drop_random(g, keep, rng));
      if (n >= 5) {  // a maximal planar graph plus any new edge is not planar
        std::set<std::pair<std::int64_t, std::int64_t>> have;
        for (std::size_t i = 0; i < g.size(); i += 2) have.insert({std::min(g[i], g[i + 1]), std::max(g[i], g[i + 1])});
        std::int64_t a, b;
        do {
          a = rng(n), b = rng(n);
        } while (a == b || have.count({std::min(a, b), std::max(a, b)}));
        Edges plus = g;
        plus.insert(plus.end(), {a, b});
        check_nonplanar(name + " plus an edge", n, plus);
      }
    }
  }
  {  // Disconnected: a triangulation, a grid, a tree, a wheel, a K4 and isolated vertices.
    Edges g = random_maximal_planar(50, rng, 200);
    append(g, grid(6, 7), 50);
    append(g, random_tree(20, rng), 92);
    append(g, wheel(8), 112);
    append(g, complete(4), 121);
    check_planar("disconnected union", 140, g);
  }

  // Non-planar.
  check_nonplanar("K5", 5, complete(5));
  check_nonplanar("K6", 6, complete(6));
  check_nonplanar("K3,3", 6, k33());
  check_nonplanar("Petersen", 10, petersen());
  check_nonplanar("K5 and isolated vertices", 40, complete(5));
  for (int rep = 0; rep < 20; ++rep) {
    for (const Edges& pattern : {complete(5), k33()}) {
      const std::int64_t branch = pattern.size() == 20 ? 5 : 6;
      {  // alone
        std::vector<std::int64_t> at(branch);
        for (std::int64_t i = 0; i < branch; ++i) at[i] = i;
        Edges g;
        const std::int64_t n = add_subdivision(g, branch, pattern, at, rng);
        check_nonplanar("subdivided " + std::to_string(branch) + "#" + std::to_string(rep), n, g);
      }
      // inside planar graphs: its branch vertices on a triangulation, a thinned one or a tree, its
      // paths through new vertices (so that m stays at most 3n - 6)
      for (int host = 0; host < 3; ++host) {
        const std::int64_t n0 = 20 + rng(200);
        Edges g = host == 2 ? random_tree(n0, rng) : random_maximal_planar(n0, rng, 3 * n0);
        if (host == 1) g = drop_random(g, 0.5, rng);
        const std::int64_t n = add_subdivision(g, n0, pattern, distinct_vertices(branch, n0, rng), rng);
        const std::string name = "subdivided " + std::to_string(branch) + " in host " + std::to_string(host) + "#" +
                                 std::to_string(rep);
        CHECK(static_cast<std::int64_t>(g.size() / 2) <= 3 * n - 6, "%s: m above 3n - 6", name.c_str());
        check_nonplanar(name, n, g);
      }
    }
  }
  for (std::int64_t n : {6, 20, 100}) {  // dense random graphs: 3n - 5 distinct edges, and K_n
    Edges all = complete(n);
    const std::int64_t pairs = static_cast<std::int64_t>(all.size() / 2);
    for (std::int64_t i = pairs - 1; i > 0; --i) {
      const std::int64_t j = rng(i + 1);
      std::swap(all[2 * i], all[2 * j]);
      std::swap(all[2 * i + 1], all[2 * j + 1]);
    }
    check_nonplanar("K" + std::to_string(n), n, all);
    all.resize(2 * (3 * n - 5));
    check_nonplanar("dense " + std::to_string(n), n, all);
  }

  // Input checks.
  {
    std::int64_t xy[8];
    bool named = false;
    const Edges loop = {0, 1, 1, 2, 2, 2};
    try {
      lcn::planar_grid_drawing(3, lcn_pairs(loop.data(), 3), lcn_pairs(xy, 3));
    } catch (const ValueError& err) {
      named = std::strstr(err.what(), "edge 2") != nullptr && std::strstr(err.what(), "self-loop") != nullptr;
    }
    CHECK(named, "self-loop not reported by its edge");
    named = false;
    try {
      lcn::is_planar(3, lcn_pairs(loop.data(), 3));
    } catch (const ValueError& err) {
      named = std::strstr(err.what(), "edge 2") != nullptr;
    }
    CHECK(named, "is_planar: self-loop not reported by its edge");
    bool threw = false;
    const Edges out_of_range = {0, 3};
    try {
      lcn::is_planar(3, lcn_pairs(out_of_range.data(), 1));
    } catch (const ValueError&) {
      threw = true;
    }
    CHECK(threw, "endpoint outside [0, n)");
    threw = false;
    try {
      lcn::is_planar(-1, lcn_pairs(nullptr, 0));
    } catch (const ValueError&) {
      threw = true;
    }
    CHECK(threw, "negative n");
  }

  // scale_to_box: the drawing of a triangulation scaled into a larger box stays crossing-free.
  {
    const std::int64_t n = 300;
    const Edges g = random_maximal_planar(n, rng, 1000);
    std::vector<std::int64_t> xy(2 * n);
    CHECK(lcn::planar_grid_drawing(n, lcn_pairs(g.data(), static_cast<std::int64_t>(g.size() / 2)), lcn_pairs(xy.data(), n)), "scale: draw");
    std::vector<std::int64_t> small = xy;
    CHECK(!lcn::scale_to_box(lcn_pairs(small.data(), n), n - 3, 5000) && small == xy, "scale: a box too small accepted");
    CHECK(lcn::scale_to_box(lcn_pairs(xy.data(), n), 5000, 1000), "scale: refused");
    std::int64_t max_x = 0, max_y = 0;
    for (std::int64_t v = 0; v < n; ++v) max_x = std::max(max_x, xy[2 * v]), max_y = std::max(max_y, xy[2 * v + 1]);
    CHECK(max_x <= 5000 && max_x > 5000 - (n - 2) && max_y <= 1000 && max_y > 1000 - (n - 2),
          "scale: max %lld, %lld", (long long)max_x, (long long)max_y);
    const auto ev = lcn::evaluate(lcn_pairs(xy.data(), n), lcn_pairs(g.data(), static_cast<std::int64_t>(g.size() / 2)), 5000, 1000);
    CHECK(ev.valid() && ev.total_crossings == 0, "scale: %lld crossings", (long long)ev.total_crossings);
  }

  // Size: linear time, and no recursion (a path is a DFS tree of depth n).
  {
    const double t_grid = check_planar("grid 100x100", 10000, grid(100, 100));
    const double t_tri = check_planar("maximal planar 10000", 10000, random_maximal_planar(10000, rng, 20000));
    Edges path;
    const std::int64_t n = 300000;
    for (std::int64_t v = 0; v + 1 < n; ++v) path.insert(path.end(), {v, v + 1});
    const double t_path = check_planar("path 300000", n, path);
    // Many components: each DFS root must cost O(its component), not O(n).
    const double t_isolated = check_planar("isolated 200000", 200000, {});
    Edges matching;
    for (std::int64_t v = 0; v < 200000; v += 2) matching.insert(matching.end(), {v, v + 1});
    const double t_matching = check_planar("matching 200000", 200000, matching);
    std::printf("planar_grid_drawing: grid 100x100 %.3f s, maximal planar n=10000 %.3f s, path n=300000 %.3f s, "
                "200000 isolated %.3f s, 100000 disjoint edges %.3f s\n",
                t_grid, t_tri, t_path, t_isolated, t_matching);
    CHECK(t_grid < 1.0 && t_tri < 1.0 && t_isolated < 2.0 && t_matching < 2.0, "too slow");
  }
  return report_and_exit_code();
}
