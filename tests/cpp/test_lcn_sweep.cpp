// The CPU evaluator's sweep and SIMD kernels against a plain all-pairs count with the int64
// predicates, on random drawings: long and short edges (one strip and many), collinear and
// overlapping edges, shared endpoints and points, multi-edges, and coordinates at the edge of the
// exact double range (2^26) and of the input range (2^30), where the double arithmetic is only a
// filter. Every check runs with one thread and with several; ctest runs it once per ISA variant.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "check.hpp"
#include "ironkernels/ironkernels.hpp"
#include "lcn/predicates.hpp"

using namespace ironkernels;
using lcn::detail::Point;

namespace {

struct Rng {
  std::uint64_t r;
  std::uint64_t next() {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    return r >> 11;
  }
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)); }
};

struct Drawing {
  std::string name;
  std::vector<std::int64_t> xy, edges;
  std::int64_t n() const { return static_cast<std::int64_t>(xy.size() / 2); }
  std::int64_t m() const { return static_cast<std::int64_t>(edges.size() / 2); }
  Point at(std::int64_t v) const { return {xy[2 * v], xy[2 * v + 1]}; }
};

// The documented semantics, pair by pair: edges sharing an endpoint never cross, others iff they
// cross properly.
std::vector<std::int64_t> brute_counts(const Drawing& d) {
  std::vector<std::int64_t> c(static_cast<std::size_t>(d.m()), 0);
  for (std::int64_t e = 0; e < d.m(); ++e)
    for (std::int64_t f = e + 1; f < d.m(); ++f) {
      const std::int64_t a = d.edges[2 * e], b = d.edges[2 * e + 1], u = d.edges[2 * f], w = d.edges[2 * f + 1];
      if (a == u || a == w || b == u || b == w) continue;
      if (lcn::detail::cross_properly(d.at(a), d.at(b), d.at(u), d.at(w))) ++c[e], ++c[f];
    }
  return c;
}

// Vertices on the closed segment of an edge they are not endpoints of, and not at an endpoint's
// point (a same-point violation instead).
std::vector<std::pair<std::int64_t, std::int64_t>> brute_on_edges(const Drawing& d) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t v = 0; v < d.n(); ++v)
    for (std::int64_t e = 0; e < d.m(); ++e) {
      const std::int64_t a = d.edges[2 * e], b = d.edges[2 * e + 1];
      const Point p = d.at(v), pa = d.at(a), pb = d.at(b);
      if (v == a || v == b || (p.x == pa.x && p.y == pa.y) || (p.x == pb.x && p.y == pb.y)) continue;
      if (lcn::detail::on_segment(p, pa, pb)) out.emplace_back(v, e);
    }
  return out;
}

// Each vertex at the point of a lower-numbered one, with the lowest-numbered one there.
std::vector<std::pair<std::int64_t, std::int64_t>> brute_same_points(const Drawing& d) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t v = 0; v < d.n(); ++v)
    for (std::int64_t u = 0; u < v; ++u)
      if (d.xy[2 * u] == d.xy[2 * v] && d.xy[2 * u + 1] == d.xy[2 * v + 1]) {
        out.emplace_back(u, v);
        break;
      }
  std::sort(out.begin(), out.end());
  return out;
}

// Candidates' legality by its definition: q on no other vertex, on no edge not incident to v, and
// no vertex other than v and w on a new edge (q, w).
bool brute_legal(const Drawing& d, std::int64_t v, Point q) {
  for (std::int64_t u = 0; u < d.n(); ++u)
    if (u != v && d.at(u).x == q.x && d.at(u).y == q.y) return false;
  for (std::int64_t e = 0; e < d.m(); ++e) {
    const std::int64_t a = d.edges[2 * e], b = d.edges[2 * e + 1];
    if (a == v || b == v) {
      const std::int64_t w = a == v ? b : a;
      for (std::int64_t u = 0; u < d.n(); ++u)
        if (u != v && u != w && lcn::detail::on_segment(d.at(u), q, d.at(w))) return false;
    } else if (lcn::detail::on_segment(q, d.at(a), d.at(b))) {
      return false;
    }
  }
  return true;
}

void random_edges(Drawing& d, std::int64_t m, Rng& rng) {
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t s = rng.below(d.n());
    std::int64_t t = rng.below(d.n() - 1);
    t += t >= s;
    d.edges.push_back(s), d.edges.push_back(t);
  }
}

// n vertices uniform in [x0, x0 + w] × [y0, y0 + w], m random edges.
Drawing uniform(const std::string& name, std::int64_t n, std::int64_t m, std::int64_t x0, std::int64_t y0,
                std::int64_t w, Rng& rng) {
  Drawing d{name, {}, {}};
  for (std::int64_t v = 0; v < n; ++v) d.xy.push_back(x0 + rng.below(w + 1)), d.xy.push_back(y0 + rng.below(w + 1));
  random_edges(d, m, rng);
  return d;
}

// A jittered lattice with its row, column and diagonal edges and a few chords: short edges, many
// strips, collinear runs along the rows when jitter is 0. Coordinates scaled by `scale`, offset.
Drawing lattice(const std::string& name, std::int64_t rows, std::int64_t cols, std::int64_t jitter, std::int64_t scale,
                std::int64_t offset, Rng& rng) {
  Drawing d{name, {}, {}};
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      d.xy.push_back(offset + scale * (c * 8 + (jitter ? rng.below(jitter + 1) : 0)));
      d.xy.push_back(offset + scale * (r * 8 + (jitter ? rng.below(jitter + 1) : 0)));
    }
  auto id = [&](std::int64_t r, std::int64_t c) { return r * cols + c; };
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      if (c + 1 < cols) d.edges.push_back(id(r, c)), d.edges.push_back(id(r, c + 1));
      if (r + 1 < rows) d.edges.push_back(id(r, c)), d.edges.push_back(id(r + 1, c));
      if (r + 1 < rows && c + 1 < cols) d.edges.push_back(id(r, c)), d.edges.push_back(id(r + 1, c + 1));
      if (r + 1 < rows && c + 2 < cols && rng.below(4) == 0)
        d.edges.push_back(id(r, c + 2)), d.edges.push_back(id(r + 1, c));
      if (c + 3 < cols && rng.below(8) == 0)
        d.edges.push_back(id(r, c)), d.edges.push_back(id(r, c + 3));  // along a row
    }
  return d;
}

// Points on the line through (x0, y0) with direction (dx, dy), each moved by at most `off` across it:
// orientations of exactly 0 and of a few units at huge coordinates, where the double filter hands
// lanes to the exact test.
Drawing near_line(const std::string& name, std::int64_t n, std::int64_t m, std::int64_t x0, std::int64_t y0,
                  std::int64_t dx, std::int64_t dy, std::int64_t steps, std::int64_t off, Rng& rng) {
  Drawing d{name, {}, {}};
  for (std::int64_t v = 0; v < n; ++v) {
    const std::int64_t k = rng.below(steps + 1), o = off ? rng.below(2 * off + 1) - off : 0;
    d.xy.push_back(std::clamp<std::int64_t>(x0 + k * dx - o * (dy != 0), 0, lcn::kMaxCoordinate));
    d.xy.push_back(std::clamp<std::int64_t>(y0 + k * dy + o * (dx != 0), 0, lcn::kMaxCoordinate));
  }
  random_edges(d, m, rng);
  return d;
}

void check_drawing(const Drawing& d) {
  const std::vector<std::int64_t> want = brute_counts(d);
  std::vector<std::pair<std::int64_t, std::int64_t>> want_on = brute_on_edges(d);
  std::sort(want_on.begin(), want_on.end());
  const std::vector<std::pair<std::int64_t, std::int64_t>> want_same = brute_same_points(d);
  std::int64_t want_total = 0, want_k = 0, want_at_k = 0;
  for (std::int64_t c : want) want_total += c, lcn::detail::merge_k(want_k, want_at_k, c, std::int64_t(1));
  for (int threads : {1, 3}) {
    set_cpu_threads(threads);
    const lcn::Evaluation ev =
        lcn::evaluate(lcn_pairs(d.xy.data(), d.n()), lcn_pairs(d.edges.data(), d.m()), lcn::kMaxCoordinate, lcn::kMaxCoordinate);
    std::int64_t wrong = 0;
    for (std::int64_t e = 0; e < d.m(); ++e) wrong += ev.edge_crossings[e] != want[e];
    CHECK(wrong == 0, "%s (%d threads): %lld of %lld edges with wrong counts", d.name.c_str(), threads,
          (long long)wrong, (long long)d.m());
    CHECK(ev.total_crossings == want_total / 2 && ev.k == want_k && ev.edges_at_k == want_at_k,
          "%s: total %lld k %lld at_k %lld, want %lld %lld %lld", d.name.c_str(), (long long)ev.total_crossings,
          (long long)ev.k, (long long)ev.edges_at_k, (long long)(want_total / 2), (long long)want_k,
          (long long)want_at_k);
    std::vector<std::pair<std::int64_t, std::int64_t>> on;
    for (const lcn::Violation& v : ev.violations)
      if (v.kind == lcn::Violation::Kind::vertex_on_edge) on.emplace_back(v.a, v.b);
    CHECK(on == want_on, "%s: %zu vertex-on-edge violations, want %zu", d.name.c_str(), on.size(), want_on.size());
    std::vector<std::pair<std::int64_t, std::int64_t>> same;
    for (const lcn::Violation& v : ev.violations)
      if (v.kind == lcn::Violation::Kind::same_point) same.emplace_back(v.a, v.b);
    CHECK(same == want_same, "%s: %zu same-point violations, want %zu", d.name.c_str(), same.size(), want_same.size());
    std::vector<std::int64_t> counts(static_cast<std::size_t>(d.m()), -1);
    std::vector<std::int64_t> xy = d.xy, edges = d.edges;
    lcn::count_crossings(ArrayView::contiguous(xy.data(), DType::int64, {d.n(), 2}),
                         ArrayView::contiguous(edges.data(), DType::int64, {d.m(), 2}),
                         ArrayView::contiguous(counts.data(), DType::int64, {d.m()}));
    CHECK(counts == want, "%s: count_crossings differs from the brute force", d.name.c_str());
  }
  set_cpu_threads(1);
}

// Evaluator: candidates and moves against full evaluations.
std::int64_t legal = 0;  // candidates found legal, over all checks (both outcomes must occur)

void check_evaluator(const Drawing& d, Rng& rng, std::int64_t lo, std::int64_t hi) {
  set_cpu_threads(2);
  lcn::Evaluator ev(lcn_pairs(d.xy.data(), d.n()), lcn_pairs(d.edges.data(), d.m()), lcn::kMaxCoordinate, lcn::kMaxCoordinate);
  Drawing cur = d;
  for (int round = 0; round < 6; ++round) {
    const std::int64_t v = rng.below(d.n());
    std::vector<std::int64_t> cand;
    for (int c = 0; c < 24; ++c) {
      const std::int64_t u = rng.below(d.n()), e = rng.below(d.m());
      const Point a = cur.at(cur.edges[2 * e]), b = cur.at(cur.edges[2 * e + 1]);
      if (c % 6 == 3) {  // onto another vertex
        cand.push_back(cur.xy[2 * u]), cand.push_back(cur.xy[2 * u + 1]);
      } else if (c % 6 == 4) {  // onto an edge's line: between or beyond its ends
        const std::int64_t t = rng.below(3);
        cand.push_back(std::clamp(a.x + t * (b.x - a.x) / 2, lo, hi)),
            cand.push_back(std::clamp(a.y + t * (b.y - a.y) / 2, lo, hi));
      } else if (c % 6 == 5) {  // so that vertex u lies on one of v's new edges
        std::int64_t w = -1;
        for (std::int64_t f = 0; f < cur.m() && w < 0; ++f)
          if (cur.edges[2 * f] == v || cur.edges[2 * f + 1] == v)
            w = cur.edges[2 * f] == v ? cur.edges[2 * f + 1] : cur.edges[2 * f];
        const Point pw = w < 0 ? a : cur.at(w), pu = cur.at(u);
        cand.push_back(std::clamp(pw.x + 2 * (pu.x - pw.x), lo, hi)),
            cand.push_back(std::clamp(pw.y + 2 * (pu.y - pw.y), lo, hi));
      } else {
        cand.push_back(lo + rng.below(hi - lo + 1)), cand.push_back(lo + rng.below(hi - lo + 1));
      }
    }
    const std::vector<lcn::CandidateFigures> figs =
        ev.candidates(v, lcn_pairs(cand.data(), static_cast<std::int64_t>(cand.size()) / 2));
    std::int64_t wrong = 0, illegal = 0;
    for (std::size_t c = 0; c < figs.size(); ++c) {
      Drawing moved = cur;
      moved.xy[2 * v] = cand[2 * c], moved.xy[2 * v + 1] = cand[2 * c + 1];
      const std::vector<std::int64_t> want = brute_counts(moved);
      std::int64_t total = 0, k = 0, at_k = 0;
      for (std::int64_t x : want) total += x, lcn::detail::merge_k(k, at_k, x, std::int64_t(1));
      wrong += figs[c].k != k || figs[c].edges_at_k != at_k || figs[c].total_crossings != total / 2;
      illegal += figs[c].legal != brute_legal(cur, v, {cand[2 * c], cand[2 * c + 1]});
      legal += figs[c].legal;
    }
    CHECK(illegal == 0, "%s: %lld of %zu candidates with the wrong legality", d.name.c_str(), (long long)illegal,
          figs.size());
    CHECK(wrong == 0, "%s: %lld of %zu candidates with wrong figures", d.name.c_str(), (long long)wrong, figs.size());
    const std::int64_t pick = rng.below(static_cast<std::int64_t>(figs.size()));
    ev.move(v, cand[2 * pick], cand[2 * pick + 1]);
    cur.xy[2 * v] = cand[2 * pick], cur.xy[2 * v + 1] = cand[2 * pick + 1];
    CHECK(ev.edge_crossings() == brute_counts(cur), "%s: counts after move %d differ", d.name.c_str(), round);
  }
  set_cpu_threads(1);
}

}  // namespace

int main() {
  Rng rng{2025};
  const std::int64_t L = lcn::kMaxCoordinate, D = std::int64_t(1) << 26;
  std::vector<Drawing> drawings;
  // Sizes around the kernels' vector tails and the strip choice (from 1024 edges).
  for (std::int64_t m : {0, 1, 2, 3, 5, 9, 17, 40, 200})
    drawings.push_back(uniform("uniform small", 30, m, 0, 0, 1000, rng));
  drawings.push_back(uniform("uniform long edges", 400, 2500, 0, 0, 10000, rng));
  drawings.push_back(uniform("tiny grid: collinear, overlapping, coincident", 40, 1500, 0, 0, 4, rng));
  drawings.push_back(uniform("3x3 points: multi-edges", 12, 300, 0, 0, 2, rng));
  drawings.push_back(lattice("lattice, jittered", 30, 30, 3, 1, 0, rng));
  drawings.push_back(lattice("lattice, exact rows (collinear runs)", 30, 30, 0, 1, 0, rng));
  // At 2^26: exact doubles once the minimum is subtracted (offsets), and extents of 2^26 and just above.
  drawings.push_back(uniform("extent 2^26 - 1", 300, 1200, 0, 0, D - 1, rng));
  drawings.push_back(uniform("extent 2^26", 300, 1200, 5, 7, D, rng));
  drawings.push_back(uniform("extent 2^26 + 1 (filtered)", 300, 1200, 0, 0, D + 1, rng));
  drawings.push_back(lattice("lattice scaled to 2^26", 30, 30, 0, D / 256, 0, rng));
  drawings.push_back(lattice("lattice scaled past 2^26", 30, 30, 2, D / 230, 0, rng));
  drawings.push_back(uniform("small extent at offset 2^30 - 1000", 300, 1200, L - 1000, L - 1000, 1000, rng));
  drawings.push_back(uniform("tiny grid at offset 2^26", 40, 800, D, D, 4, rng));
  // Up to 2^30.
  drawings.push_back(uniform("uniform on 2^30", 300, 1500, 0, 0, L, rng));
  drawings.push_back(lattice("lattice scaled to 2^30 (collinear rows)", 30, 30, 0, L / 256, 0, rng));
  drawings.push_back(lattice("lattice jittered, scaled to 2^30", 24, 24, 2, L / 200, 0, rng));
  drawings.push_back(near_line("near the diagonal of 2^30", 200, 1200, 0, 0, 1 << 20, (1 << 20) - 1, 1023, 1, rng));
  drawings.push_back(near_line("on the diagonal of 2^30", 200, 600, 0, 0, 1 << 20, 1 << 20, 1024, 0, rng));
  drawings.push_back(near_line("near a steep line at 2^30", 200, 1200, 3, 0, 1 << 10, (1 << 20) + 1, 1023, 2, rng));
  drawings.push_back(near_line("near a line at 2^26", 200, 1200, 0, 0, 1 << 16, (1 << 16) - 1, 1024, 1, rng));
  for (const Drawing& d : drawings) check_drawing(d);

  check_evaluator(uniform("evaluator, 1000 wide", 60, 300, 0, 0, 1000, rng), rng, 0, 1000);
  check_evaluator(uniform("evaluator, tiny grid", 20, 120, 0, 0, 4, rng), rng, 0, 4);
  check_evaluator(uniform("evaluator, sparse (isolated vertices, leaves)", 30, 16, 0, 0, 12, rng), rng, 0, 12);
  check_evaluator(uniform("evaluator, 2^30", 60, 300, 0, 0, L, rng), rng, 0, L);
  check_evaluator(near_line("evaluator, near a line at 2^30", 60, 300, 0, 0, 1 << 20, (1 << 20) - 1, 1023, 1, rng), rng,
                  0, L);
  CHECK(legal > 50 && legal < 670, "%lld of 720 candidates legal: the test misses one outcome", (long long)legal);
  return report_and_exit_code();
}
