// Augments a planar rotation system to a triangulation on the same vertices, in three steps that each
// add edges inside faces and update the rotations, so planarity is kept by construction:
//  1. components joined by bridges (one representative to every other one);
//  2. blocks merged: at every vertex, two consecutive neighbours whose edges lie in different blocks
//     are joined across their corner (such neighbours are never adjacent already: with the vertex
//     they would form a triangle, one block), and the two blocks become one;
//  3. every face, now a simple cycle v0 … v(k-1), fanned into triangles. Fanning from v0 would add a
//     parallel edge when v0 already has a chord v0–vi outside the face; then that chord separates
//     v1 … v(i-1) from v(i+1) … v(k-1), so the fans v1 → v(i+1) … v(k-1) and v(i+1) → v2 … v(i-1)
//     are all new (the scheme of Boost's make_maximal_planar).
// A pair set keeps the adjacency for the chord tests, and refuses any pair twice (an internal check).
#include <algorithm>

#include "ironkernels/core/error.hpp"
#include "lcn/planar_internal.hpp"

namespace ironkernels::lcn::detail {
namespace {

constexpr std::int64_t kNone = -1;

class Augmenter {
 public:
  explicit Augmenter(Embedding& emb) : emb_(emb), adjacent_(3 * emb.vertices()) {
    for (std::int64_t e = 0; e < emb.edges(); ++e) adjacent_.insert(emb.head[2 * e], emb.head[2 * e + 1]);
  }

  void run() {
    connect();
    merge_blocks();
    fan_faces();
    const std::int64_t n = emb_.vertices();
    if (emb_.edges() != 3 * n - 6 || count_faces(emb_) != 2 * n - 4)
      raise<Error>("lcn planar drawing: internal error, the augmented graph is not a triangulation");
  }

 private:
  Embedding& emb_;
  PairSet adjacent_;
  std::vector<std::int64_t> block_;  // per edge: its block, a union-find element
  std::vector<std::int64_t> block_parent_;

  // The new edge a-b with a->b just before dart `before_a` around a and b->a before `before_b`.
  std::int64_t add(std::int64_t a, std::int64_t before_a, std::int64_t b, std::int64_t before_b) {
    if (!adjacent_.insert(a, b)) raise<Error>("lcn planar drawing: internal error, a parallel edge ", a, "-", b);
    return emb_.add_edge(a, before_a, b, before_b);
  }
  // Joins vertices a and b across one face: da and db are the darts leaving them along that face.
  std::int64_t chord(std::int64_t da, std::int64_t db) { return add(emb_.origin(da), da, emb_.origin(db), db); }

  void connect() {
    const std::int64_t n = emb_.vertices();
    std::vector<char> seen(n, 0);
    std::vector<std::int64_t> stack;
    std::int64_t rep = kNone;
    for (std::int64_t s = 0; s < n; ++s) {
      if (seen[s]) continue;
      seen[s] = 1;
      stack.push_back(s);
      while (!stack.empty()) {
        const std::int64_t v = stack.back();
        stack.pop_back();
        const std::int64_t f = emb_.first[v];
        if (f == kNone) continue;
        std::int64_t d = f;
        do {
          const std::int64_t w = emb_.head[d];
          if (!seen[w]) {
            seen[w] = 1;
            stack.push_back(w);
          }
          d = emb_.next[d];
        } while (d != f);
      }
      if (rep == kNone) {
        rep = s;
      } else {  // a bridge between corners of two components' outer faces: planar
        add(rep, emb_.first[rep], s, emb_.first[s]);
      }
    }
  }

  std::int64_t find_block(std::int64_t b) {
    while (block_parent_[b] != b) b = block_parent_[b] = block_parent_[block_parent_[b]];
    return b;
  }

  // Blocks of the connected graph (Hopcroft–Tarjan with an edge stack, iteratively).
  void label_blocks() {
    const std::int64_t n = emb_.vertices(), m = emb_.edges();
    block_.assign(m, kNone);
    block_parent_.clear();
    std::vector<std::int64_t> disc(n, kNone), low(n, 0), parent_edge(n, kNone), cur(n, kNone);
    std::vector<std::int64_t> stack, edges;
    std::int64_t time = 0;
    const std::int64_t root = 0;
    disc[root] = low[root] = time++;
    cur[root] = emb_.first[root];
    stack.push_back(root);
    while (!stack.empty()) {
      const std::int64_t v = stack.back();
      const std::int64_t d = cur[v];
      if (d != kNone) {  // examine dart d, then move on (cur = -1 once the rotation is done)
        cur[v] = emb_.next[d] == emb_.first[v] ? kNone : emb_.next[d];
        const std::int64_t e = d >> 1, w = emb_.head[d];
        if (e == parent_edge[v]) continue;
        if (disc[w] == kNone) {
          edges.push_back(e);
          parent_edge[w] = e;
          disc[w] = low[w] = time++;
          cur[w] = emb_.first[w];
          stack.push_back(w);
        } else if (disc[w] < disc[v]) {
          edges.push_back(e);
          low[v] = std::min(low[v], disc[w]);
        }
        continue;
      }
      stack.pop_back();
      if (parent_edge[v] == kNone) continue;
      const std::int64_t p = emb_.head[2 * parent_edge[v]] == v ? emb_.head[2 * parent_edge[v] + 1]
                                                                 : emb_.head[2 * parent_edge[v]];
      low[p] = std::min(low[p], low[v]);
      if (low[v] >= disc[p]) {  // p separates v's subtree: its edges on the stack form a block
        const std::int64_t id = static_cast<std::int64_t>(block_parent_.size());
        block_parent_.push_back(id);
        std::int64_t x;
        do {
          x = edges.back();
          edges.pop_back();
          block_[x] = id;
        } while (x != parent_edge[v]);
      }
    }
  }

  void merge_blocks() {
    label_blocks();
    const std::int64_t n = emb_.vertices();
    for (std::int64_t v = 0; v < n; ++v) {
      const std::int64_t f = emb_.first[v];
      if (f == kNone) continue;
      // v's own rotation does not change below (new edges join its neighbours), so walk it once.
      for (std::int64_t d = f;;) {
        const std::int64_t d2 = emb_.next[d];
        if (d2 == f) break;
        const std::int64_t b1 = find_block(block_[d >> 1]), b2 = find_block(block_[d2 >> 1]);
        if (b1 != b2) {
          // The corner u-v-w lies on the face ... u->v, v->w, w->x ...: join u and w across it.
          chord(d ^ 1, emb_.face_next(d2));
          block_parent_[b1] = b2;
          block_.push_back(b2);  // the new edge's block
        }
        d = d2;
      }
    }
  }

  void fan_faces() {
    const std::int64_t darts = 2 * emb_.edges();
    std::vector<char> seen(darts, 0);
    std::vector<std::int64_t> face_start, face_darts;
    for (std::int64_t d = 0; d < darts; ++d) {
      if (seen[d]) continue;
      const std::int64_t begin = static_cast<std::int64_t>(face_darts.size());
      for (std::int64_t x = d; !seen[x]; x = emb_.face_next(x)) {
        seen[x] = 1;
        face_darts.push_back(x);
      }
      if (static_cast<std::int64_t>(face_darts.size()) - begin > 3) {
        face_start.push_back(begin);
      } else {
        face_darts.resize(begin);
      }
    }
    face_start.push_back(static_cast<std::int64_t>(face_darts.size()));
    for (std::size_t f = 0; f + 1 < face_start.size(); ++f)
      fan(face_darts.data() + face_start[f], face_start[f + 1] - face_start[f]);
  }

  // Triangulates one face; e[j] is the face's dart leaving its j-th vertex.
  void fan(const std::int64_t* e, std::int64_t k) {
    auto vtx = [&](std::int64_t j) { return emb_.origin(e[j]); };
    std::int64_t i = kNone;  // a chord v0-vi outside the face, 2 <= i <= k-2
    for (std::int64_t j = 2; j <= k - 2 && i == kNone; ++j)
      if (adjacent_.contains(vtx(0), vtx(j))) i = j;
    if (i == kNone) {  // fan from v0; each chord cuts the triangle v0, vj, v(j+1) off the far end
      for (std::int64_t j = k - 2; j >= 2; --j) chord(e[j], e[0]);
      return;
    }
    std::int64_t g = kNone;  // after the first fan: the dart v(i+1) -> v1 of the remaining face
    for (std::int64_t j = k - 1; j >= i + 1; --j) g = chord(e[j], e[1]);
    for (std::int64_t j = i - 1; j >= 2; --j) chord(e[j], g);
  }
};

}  // namespace

void triangulate(Embedding& emb) { Augmenter(emb).run(); }

}  // namespace ironkernels::lcn::detail
