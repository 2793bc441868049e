// Schnyder's straight-line grid drawing of a planar graph: embed (LR test), triangulate, compute a
// Schnyder wood from a canonical ordering, and give every vertex the vertex counts of its regions.
//
// Canonical ordering by peeling: with outer face a1, a2, a3, vertices are removed from a3 downwards,
// each time a contour vertex other than a1, a2 without a chord (an edge to a non-neighbouring contour
// vertex; one always exists). A removed vertex v with contour neighbours wl, wr points to wl in
// tree T1 (root a1) and to wr in T2 (root a2); the inner vertices it uncovers point to v in T3 (root
// a3). In the canonical order (reverse removal order) T1 and T2 parents come before their children
// and T3 parents after them, so all tree sums below are single sweeps.
//
// Region R_i(v) is bounded by the paths P_(i+1)(v), P_(i-1)(v) and the outer edge opposite a_i; its
// vertices are exactly the T_i-subtrees of the vertices on those two paths (a T_i path leaving the
// region would have to cross one of them). With s_i the T_i-subtree sizes (1 for the other two outer
// vertices) and |P| the vertices on a path:
//   r_i(v) = |R_i(v)| - |P_(i-1)(v)| = sum_{P_(i+1)(v)} s_i + sum_{P_(i-1)(v)} s_i - s_i(v) - |P_(i-1)(v)|,
// r_1 + r_2 + r_3 = n - 1, and (r_1, r_2), with a1 = (n-2, 1), a2 = (0, n-2), a3 = (1, 0), is a
// planar straight-line drawing in [0, n-2]² (Felsner, "Geometric graphs and arrangements", ch. 2).
#include <algorithm>

#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn_planar.hpp"
#include "lcn/planar_internal.hpp"
#include "lcn/lcn_internal.hpp"

namespace ironkernels::lcn {
namespace detail {
namespace {

constexpr std::int64_t kNone = -1;

[[noreturn]] void internal(const char* what) { raise<Error>("lcn planar drawing: internal error, ", what); }

struct Wood {
  std::vector<std::int64_t> canonical;   // a1, a2, …, a3
  std::vector<std::int64_t> p1, p2, p3;  // parents of the inner vertices in T1, T2, T3
};

Wood schnyder_wood(const Embedding& emb) {
  const std::int64_t n = emb.vertices();
  const std::int64_t a1 = emb.origin(0), a2 = emb.head[0], a3 = emb.head[emb.face_next(0)];
  if (emb.face_next(emb.face_next(emb.face_next(0))) != 0) internal("the outer face is not a triangle");
  enum : char { kInner, kContour, kRemoved };
  std::vector<char> state(n, kInner);
  std::vector<std::int64_t> left(n, kNone), right(n, kNone), chords(n, 0), stamp(n, kNone);
  Wood w;
  w.p1.assign(n, kNone);
  w.p2.assign(n, kNone);
  w.p3.assign(n, kNone);
  right[a1] = a3, left[a3] = a1, right[a3] = a2, left[a2] = a3;
  state[a1] = state[a2] = state[a3] = kContour;
  std::vector<std::int64_t> candidates{a3}, removed, middle;
  removed.reserve(n);
  for (std::int64_t step = 0; step < n - 2; ++step) {
    std::int64_t v = kNone;
    while (!candidates.empty() && v == kNone) {
      const std::int64_t c = candidates.back();
      candidates.pop_back();
      if (state[c] == kContour && chords[c] == 0 && c != a1 && c != a2) v = c;
    }
    if (v == kNone) internal("no contour vertex without a chord");
    const std::int64_t wl = left[v], wr = right[v];
    std::int64_t dl = emb.first[v];
    while (emb.head[dl] != wl) dl = emb.next[dl];
    // From wl onwards, the rotation at v runs through the inner side of the contour to wr.
    middle.clear();
    for (std::int64_t d = emb.next[dl]; emb.head[d] != wr; d = emb.next[d]) {
      if (state[emb.head[d]] != kInner) internal("a contour neighbour inside the peeled corner");
      middle.push_back(emb.head[d]);
    }
    w.p1[v] = wl;
    w.p2[v] = wr;
    state[v] = kRemoved;
    removed.push_back(v);
    if (middle.empty()) {  // wl-wr was a chord (unless it is the outer edge a1-a2) and now is not
      right[wl] = wr, left[wr] = wl;
      if (!(wl == a1 && wr == a2)) {
        for (std::int64_t x : {wl, wr})
          if (--chords[x] == 0) candidates.push_back(x);
      }
      continue;
    }
    std::int64_t before = wl;
    for (std::int64_t u : middle) {
      right[before] = u, left[u] = before;
      state[u] = kContour;
      stamp[u] = step;
      w.p3[u] = v;
      before = u;
    }
    right[before] = wr, left[wr] = before;
    for (std::int64_t u : middle) {
      const std::int64_t f = emb.first[u];
      std::int64_t d = f;
      do {
        const std::int64_t x = emb.head[d];
        if (state[x] == kContour && x != left[u] && x != right[u]) {
          ++chords[u];
          if (stamp[x] != step) ++chords[x];  // an old contour vertex: counted from this end only
        }
        d = emb.next[d];
      } while (d != f);
    }
    for (std::int64_t u : middle)
      if (chords[u] == 0) candidates.push_back(u);
  }
  w.canonical = {a1, a2};
  w.canonical.insert(w.canonical.end(), removed.rbegin(), removed.rend());
  return w;
}

void schnyder_coordinates(const Wood& w, std::int64_t n, std::int64_t* xy) {
  const std::vector<std::int64_t>& c = w.canonical;
  std::vector<std::int64_t> s1(n, 1), s2(n, 1), s3(n, 1);
  for (std::int64_t k = n - 2; k >= 2; --k) {
    const std::int64_t v = c[k];
    s1[w.p1[v]] += s1[v];
    s2[w.p2[v]] += s2[v];
  }
  for (std::int64_t k = 2; k <= n - 2; ++k) s3[w.p3[c[k]]] += s3[c[k]];
  // Path sums from the roots: d_i = |P_i(v)|, Sij = sum over P_i(v) of s_j (1 at the root a_i).
  std::vector<std::int64_t> d1(n, 1), d2(n, 1), d3(n, 1), S12(n, 1), S13(n, 1), S21(n, 1), S23(n, 1), S31(n, 1),
      S32(n, 1);
  for (std::int64_t k = 2; k <= n - 2; ++k) {
    const std::int64_t v = c[k], q1 = w.p1[v], q2 = w.p2[v];
    d1[v] = d1[q1] + 1, S12[v] = S12[q1] + s2[v], S13[v] = S13[q1] + s3[v];
    d2[v] = d2[q2] + 1, S21[v] = S21[q2] + s1[v], S23[v] = S23[q2] + s3[v];
  }
  for (std::int64_t k = n - 2; k >= 2; --k) {
    const std::int64_t v = c[k], q3 = w.p3[v];
    d3[v] = d3[q3] + 1, S31[v] = S31[q3] + s1[v], S32[v] = S32[q3] + s2[v];
  }
  for (std::int64_t k = 2; k <= n - 2; ++k) {
    const std::int64_t v = c[k];
    const std::int64_t r1 = S21[v] + S31[v] - s1[v] - d3[v];
    const std::int64_t r2 = S32[v] + S12[v] - s2[v] - d1[v];
    const std::int64_t r3 = S13[v] + S23[v] - s3[v] - d2[v];
    if (r1 + r2 + r3 != n - 1 || r1 < 1 || r2 < 1 || r3 < 1) internal("region counts do not add up to n - 1");
    xy[2 * v] = r1;
    xy[2 * v + 1] = r2;
  }
  const std::int64_t a1 = c[0], a2 = c[1], a3 = c[n - 1];
  xy[2 * a1] = n - 2, xy[2 * a1 + 1] = 1;
  xy[2 * a2] = 0, xy[2 * a2 + 1] = n - 2;
  xy[2 * a3] = 1, xy[2 * a3 + 1] = 0;
}

}  // namespace
}  // namespace detail

bool planar_grid_drawing(std::int64_t n, const ArrayView& edges, const ArrayView& xy_view) {
  const std::vector<std::int64_t> pairs =
      detail::simple_edges(n, detail::host_pairs(edges, "edges"), edges.shape[0], "lcn planar_grid_drawing");
  std::int64_t* xy_out = detail::host_pairs(xy_view, "xy_out");
  if (xy_view.shape[0] != n)
    raise<ValueError>("lcn planar_grid_drawing: xy_out has ", xy_view.shape[0], " rows for n = ", n, " vertices");
  if (n <= 2) {
    for (std::int64_t v = 0; v < n; ++v) xy_out[2 * v] = v, xy_out[2 * v + 1] = 0;
    return true;
  }
  detail::Embedding emb;
  if (!detail::lr_planar(n, pairs, &emb)) return false;
  detail::triangulate(emb);
  std::vector<std::int64_t> xy(2 * n);
  detail::schnyder_coordinates(detail::schnyder_wood(emb), n, xy.data());
  std::copy(xy.begin(), xy.end(), xy_out);
  return true;
}

bool scale_to_box(const ArrayView& xy_view, std::int64_t width, std::int64_t height) {
  std::int64_t* xy = detail::host_pairs(xy_view, "xy");
  const std::int64_t n = xy_view.shape[0];
  if (width < 0 || height < 0)
    raise<ValueError>("lcn scale_to_box: width = ", width, ", height = ", height, "; accepted: both >= 0");
  std::int64_t max_x = 0, max_y = 0;
  for (std::int64_t v = 0; v < n; ++v) {
    if (xy[2 * v] < 0 || xy[2 * v + 1] < 0)
      raise<ValueError>("lcn scale_to_box: vertex ", v, " at (", xy[2 * v], ", ", xy[2 * v + 1], ") is negative");
    max_x = std::max(max_x, xy[2 * v]);
    max_y = std::max(max_y, xy[2 * v + 1]);
  }
  if (max_x > width || max_y > height) return false;
  const std::int64_t fx = max_x > 0 ? width / max_x : 1, fy = max_y > 0 ? height / max_y : 1;
  for (std::int64_t v = 0; v < n; ++v) xy[2 * v] *= fx, xy[2 * v + 1] *= fy;
  return true;
}

}  // namespace ironkernels::lcn
