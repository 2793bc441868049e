// The left-right planarity test (Brandes, "The left-right planarity test", 2009) and the rotation
// system it yields. Three depth-first passes — orientation with lowpoints, testing with the conflict
// pair stack, embedding — each run with an explicit stack, so the depth of the DFS tree is bounded by
// memory, not by the call stack. Adjacency orders are sorted by bucket sort (keys below 4n): linear.
#include <algorithm>
#include <limits>

#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn_planar.hpp"
#include "lcn/planar_internal.hpp"
#include "lcn/lcn_internal.hpp"

namespace ironkernels::lcn {
namespace detail {

std::vector<std::int64_t> simple_edges(std::int64_t n, const std::int64_t* edges, std::int64_t m, const char* fn) {
  if (n < 0) raise<ValueError>(fn, ": n = ", n, " is negative");
  if (n > (std::int64_t(1) << 32)) raise<ValueError>(fn, ": n = ", n, " is above 2^32");
  if (m < 0) raise<ValueError>(fn, ": m = ", m, " is negative");
  if (m > 0 && edges == nullptr) raise<ValueError>(fn, ": edges is null with m = ", m);
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t s = edges[2 * i], t = edges[2 * i + 1];
    if (s < 0 || s >= n || t < 0 || t >= n)
      raise<ValueError>(fn, ": edge ", i, " = (", s, ", ", t, ") has an endpoint outside [0, ", n, ")");
    if (s == t) raise<ValueError>(fn, ": edge ", i, " = (", s, ", ", t, ") is a self-loop");
  }
  PairSet seen(std::min<std::int64_t>(m, 3 * n));
  std::vector<std::int64_t> pairs;
  pairs.reserve(2 * static_cast<std::size_t>(std::min<std::int64_t>(m, 3 * n + 6)));
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t s = edges[2 * i], t = edges[2 * i + 1];
    if (seen.insert(s, t)) {
      pairs.push_back(std::min(s, t));
      pairs.push_back(std::max(s, t));
    }
  }
  return pairs;
}

void Embedding::link_before(std::int64_t d, std::int64_t v, std::int64_t at) {
  if (at < 0) {
    next[d] = prev[d] = d;
    first[v] = d;
    return;
  }
  const std::int64_t p = prev[at];
  next[p] = d;
  prev[d] = p;
  next[d] = at;
  prev[at] = d;
}

std::int64_t Embedding::add_edge(std::int64_t a, std::int64_t before_a, std::int64_t b, std::int64_t before_b) {
  const std::int64_t d = static_cast<std::int64_t>(head.size());
  head.push_back(b);
  head.push_back(a);
  next.resize(d + 2);
  prev.resize(d + 2);
  link_before(d, a, before_a);
  link_before(d + 1, b, before_b);
  return d;
}

std::int64_t count_faces(const Embedding& emb) {
  const std::int64_t darts = 2 * emb.edges();
  std::vector<char> seen(darts, 0);
  std::int64_t faces = 0;
  for (std::int64_t d = 0; d < darts; ++d) {
    if (seen[d]) continue;
    ++faces;
    for (std::int64_t x = d; !seen[x]; x = emb.face_next(x)) seen[x] = 1;
  }
  return faces;
}

namespace {

constexpr std::int64_t kNone = -1;

struct Interval {
  std::int64_t low = kNone, high = kNone;  // return edges, lowest and highest; chained by ref
  bool empty() const { return low == kNone && high == kNone; }
};

struct ConflictPair {
  Interval left, right;
  std::int64_t id;  // identity, for the stack-bottom marks (a pair is trimmed in place)
};

// Stable bucket sort of `order` by key[e] - base (all in [0, buckets)), then grouped by src[e]:
// start[v] .. start[v + 1] of `out` hold v's edges in increasing key.
void sorted_adjacency(std::int64_t n, const std::vector<std::int64_t>& order, const std::vector<std::int64_t>& key,
                      std::int64_t base, std::int64_t buckets, const std::vector<std::int64_t>& src,
                      std::vector<std::int64_t>& start, std::vector<std::int64_t>& out) {
  std::vector<std::int64_t> count(buckets + 1, 0);
  for (std::int64_t e : order) ++count[key[e] - base + 1];
  for (std::int64_t b = 0; b < buckets; ++b) count[b + 1] += count[b];
  std::vector<std::int64_t> by_key(order.size());
  for (std::int64_t e : order) by_key[count[key[e] - base]++] = e;
  start.assign(n + 1, 0);
  for (std::int64_t e : order) ++start[src[e] + 1];
  for (std::int64_t v = 0; v < n; ++v) start[v + 1] += start[v];
  std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
  out.resize(order.size());
  for (std::int64_t e : by_key) out[fill[src[e]]++] = e;
}

class LeftRight {
 public:
  LeftRight(std::int64_t n, const std::vector<std::int64_t>& pairs)
      : n_(n), m_(static_cast<std::int64_t>(pairs.size() / 2)), pairs_(pairs) {}

  bool run(Embedding* emb) {
    orient();
    sorted_adjacency(n_, oriented_, nesting_, 0, 2 * n_ + 2, src_, ord_start_, ord_);
    ref_.assign(m_, kNone);
    side_.assign(m_, 1);
    lowpt_edge_.assign(m_, kNone);
    stack_bottom_.assign(m_, kNone);
    ind_.assign(ord_start_.begin(), ord_start_.end() - 1);
    returning_.assign(n_, 0);
    for (std::int64_t root : roots_)
      if (!test(root)) return false;
    if (emb != nullptr) embed(*emb);
    return true;
  }

 private:
  std::int64_t n_, m_;
  const std::vector<std::int64_t>& pairs_;
  // per edge (after orientation): its tail and head, lowpoints, nesting depth, side and reference
  std::vector<std::int64_t> src_, dst_, lowpt_, lowpt2_, nesting_, ref_, side_, lowpt_edge_, stack_bottom_;
  std::vector<std::int64_t> oriented_;  // edges in the order they were oriented
  // per vertex
  std::vector<std::int64_t> height_, parent_edge_, roots_, ord_start_, ord_;
  std::vector<std::int64_t> ind_;  // testing DFS: per vertex, the next edge of its ordered adjacency
  std::vector<char> returning_;    // testing DFS: v waits for the tree edge at ind_[v] to finish
  std::vector<ConflictPair> S_;
  std::int64_t next_pair_id_ = 0;

  std::int64_t lowpt(std::int64_t e) const { return e < 0 ? std::numeric_limits<std::int64_t>::max() : lowpt_[e]; }
  std::int64_t top_id() const { return S_.empty() ? kNone : S_.back().id; }
  bool conflicting(const Interval& i, std::int64_t b) const { return !i.empty() && lowpt(i.high) > lowpt_[b]; }
  std::int64_t lowest(const ConflictPair& p) const {
    if (p.left.empty()) return lowpt(p.right.low);
    if (p.right.empty()) return lowpt(p.left.low);
    return std::min(lowpt(p.left.low), lowpt(p.right.low));
  }
  // The dart of edge e leaving its DFS tail.
  std::int64_t out_dart(std::int64_t e) const { return pairs_[2 * e] == src_[e] ? 2 * e : 2 * e + 1; }

  // Phase 1: DFS orientation, heights, lowpoints, nesting depths.
  void orient() {
    std::vector<std::int64_t> adj_start(n_ + 1, 0), adj(2 * m_);
    for (std::int64_t e = 0; e < m_; ++e) {
      ++adj_start[pairs_[2 * e] + 1];
      ++adj_start[pairs_[2 * e + 1] + 1];
    }
    for (std::int64_t v = 0; v < n_; ++v) adj_start[v + 1] += adj_start[v];
    std::vector<std::int64_t> fill(adj_start.begin(), adj_start.end() - 1);
    for (std::int64_t e = 0; e < m_; ++e) {
      adj[fill[pairs_[2 * e]]++] = e;
      adj[fill[pairs_[2 * e + 1]]++] = e;
    }
    src_.assign(m_, kNone);
    dst_.assign(m_, kNone);
    lowpt_.assign(m_, 0);
    lowpt2_.assign(m_, 0);
    nesting_.assign(m_, 0);
    oriented_.reserve(m_);
    height_.assign(n_, kNone);
    parent_edge_.assign(n_, kNone);
    std::vector<std::int64_t> ind(adj_start.begin(), adj_start.end() - 1);
    std::vector<char> returning(n_, 0);  // v waits for the tree edge at ind[v] to finish
    std::vector<std::int64_t> stack;
    for (std::int64_t root = 0; root < n_; ++root) {
      if (height_[root] != kNone) continue;
      height_[root] = 0;
      roots_.push_back(root);
      stack.push_back(root);
      while (!stack.empty()) {
        const std::int64_t v = stack.back();
        stack.pop_back();
        const std::int64_t e = parent_edge_[v];
        bool back_from_child = returning[v];
        returning[v] = 0;
        for (; ind[v] < adj_start[v + 1]; ++ind[v]) {
          const std::int64_t vw = adj[ind[v]];
          if (!back_from_child) {
            if (src_[vw] != kNone) continue;  // oriented from the other end already
            const std::int64_t w = pairs_[2 * vw] == v ? pairs_[2 * vw + 1] : pairs_[2 * vw];
            src_[vw] = v;
            dst_[vw] = w;
            oriented_.push_back(vw);
            lowpt_[vw] = lowpt2_[vw] = height_[v];
            if (height_[w] == kNone) {  // tree edge: descend, come back to this edge
              parent_edge_[w] = vw;
              height_[w] = height_[v] + 1;
              returning[v] = 1;
              stack.push_back(v);
              stack.push_back(w);
              break;
            }
            lowpt_[vw] = height_[w];  // back edge
          }
          back_from_child = false;
          nesting_[vw] = 2 * lowpt_[vw] + (lowpt2_[vw] < height_[v] ? 1 : 0);  // +1: chordal
          if (e != kNone) {
            if (lowpt_[vw] < lowpt_[e]) {
              lowpt2_[e] = std::min(lowpt_[e], lowpt2_[vw]);
              lowpt_[e] = lowpt_[vw];
            } else if (lowpt_[vw] > lowpt_[e]) {
              lowpt2_[e] = std::min(lowpt2_[e], lowpt_[vw]);
            } else {
              lowpt2_[e] = std::min(lowpt2_[e], lowpt2_[vw]);
            }
          }
        }
      }
    }
  }

  // Phase 2: the LR partition exists iff the conflict pairs can always be resolved.
  bool test(std::int64_t root) {
    std::vector<std::int64_t>& ind = ind_;
    std::vector<char>& returning = returning_;
    std::vector<std::int64_t> stack{root};
    while (!stack.empty()) {
      const std::int64_t v = stack.back();
      stack.pop_back();
      const std::int64_t e = parent_edge_[v];
      bool back_from_child = returning[v];
      returning[v] = 0;
      bool descended = false;
      for (; ind[v] < ord_start_[v + 1]; ++ind[v]) {
        const std::int64_t ei = ord_[ind[v]];
        if (!back_from_child) {
          stack_bottom_[ei] = top_id();
          if (ei == parent_edge_[dst_[ei]]) {  // tree edge
            returning[v] = 1;
            stack.push_back(v);
            stack.push_back(dst_[ei]);
            descended = true;
            break;
          }
          lowpt_edge_[ei] = ei;  // back edge
          S_.push_back({Interval{}, Interval{ei, ei}, next_pair_id_++});
        }
        back_from_child = false;
        if (lowpt_[ei] < height_[v]) {  // ei has return edges below v
          if (ei == ord_[ord_start_[v]]) {
            lowpt_edge_[e] = lowpt_edge_[ei];
          } else if (!add_constraints(ei, e)) {
            return false;
          }
        }
      }
      if (!descended && e != kNone) remove_back_edges(e);
    }
    return true;
  }

  bool add_constraints(std::int64_t ei, std::int64_t e) {
    ConflictPair p{Interval{}, Interval{}, kNone};
    do {  // merge the return edges of ei into p.right
      ConflictPair q = S_.back();
      S_.pop_back();
      if (!q.left.empty()) std::swap(q.left, q.right);
      if (!q.left.empty()) return false;
      if (lowpt(q.right.low) > lowpt_[e]) {
        if (p.right.empty()) {
          p.right = q.right;
        } else {
          ref_[p.right.low] = q.right.high;
        }
        p.right.low = q.right.low;
      } else {  // aligned with the lowpoint edge of e
        ref_[q.right.low] = lowpt_edge_[e];
      }
    } while (top_id() != stack_bottom_[ei]);
    // merge the conflicting return edges of the earlier siblings into p.left
    while (!S_.empty() && (conflicting(S_.back().left, ei) || conflicting(S_.back().right, ei))) {
      ConflictPair q = S_.back();
      S_.pop_back();
      if (conflicting(q.right, ei)) std::swap(q.left, q.right);
      if (conflicting(q.right, ei)) return false;
      if (p.right.empty()) {  // q.right becomes the whole chain, its high end included (never seen reached)
        p.right = q.right;
      } else {
        ref_[p.right.low] = q.right.high;
        if (q.right.low != kNone) p.right.low = q.right.low;
      }
      if (p.left.empty()) {
        p.left = q.left;
      } else {
        ref_[p.left.low] = q.left.high;
      }
      p.left.low = q.left.low;
    }
    if (!(p.left.empty() && p.right.empty())) {
      p.id = next_pair_id_++;
      S_.push_back(p);
    }
    return true;
  }

  void remove_back_edges(std::int64_t e) {
    const std::int64_t u = src_[e];
    // drop the conflict pairs whose lowest return edge ends at u
    while (!S_.empty() && lowest(S_.back()) == height_[u]) {
      if (S_.back().left.low != kNone) side_[S_.back().left.low] = -1;
      S_.pop_back();
    }
    if (!S_.empty()) {  // trim the return edges ending at u off the top pair, in place
      ConflictPair& p = S_.back();
      while (p.left.high != kNone && dst_[p.left.high] == u) p.left.high = ref_[p.left.high];
      if (p.left.high == kNone && p.left.low != kNone) {  // just emptied
        ref_[p.left.low] = p.right.low;
        side_[p.left.low] = -1;
        p.left.low = kNone;
      }
      while (p.right.high != kNone && dst_[p.right.high] == u) p.right.high = ref_[p.right.high];
      if (p.right.high == kNone && p.right.low != kNone) {
        ref_[p.right.low] = p.left.low;
        side_[p.right.low] = -1;
        p.right.low = kNone;
      }
    }
    if (lowpt_[e] < height_[u] && !S_.empty()) {  // e's side follows its highest return edge
      const std::int64_t hl = S_.back().left.high, hr = S_.back().right.high;
      ref_[e] = (hl != kNone && (hr == kNone || lowpt_[hl] > lowpt_[hr])) ? hl : hr;
    }
  }

  // Resolves every side relative to its reference chain into an absolute side (+1 / -1).
  void resolve_sides() {
    std::vector<std::int64_t> old_ref(m_, kNone), stack;
    for (std::int64_t e0 = 0; e0 < m_; ++e0) {
      stack.push_back(e0);
      while (!stack.empty()) {
        const std::int64_t e = stack.back();
        if (ref_[e] != kNone) {  // resolve the reference first, then come back
          old_ref[e] = ref_[e];
          ref_[e] = kNone;
          stack.push_back(old_ref[e]);
        } else {
          stack.pop_back();
          if (old_ref[e] != kNone) {
            side_[e] *= side_[old_ref[e]];
            old_ref[e] = kNone;
          }
        }
      }
    }
  }

  // Phase 3: the rotation system. Outgoing edges in order of signed nesting depth, then every
  // vertex's parent first and its back edges placed beside the tree edge they belong to.
  void embed(Embedding& emb) {
    resolve_sides();
    std::vector<std::int64_t> signed_depth(m_);
    for (std::int64_t e = 0; e < m_; ++e) signed_depth[e] = side_[e] * nesting_[e];
    sorted_adjacency(n_, oriented_, signed_depth, -(2 * n_ + 2), 4 * n_ + 5, src_, ord_start_, ord_);
    emb.head.resize(2 * m_);
    for (std::int64_t e = 0; e < m_; ++e) {
      emb.head[2 * e] = pairs_[2 * e + 1];
      emb.head[2 * e + 1] = pairs_[2 * e];
    }
    emb.next.assign(2 * m_, kNone);
    emb.prev.assign(2 * m_, kNone);
    emb.first.assign(n_, kNone);
    for (std::int64_t v = 0; v < n_; ++v)
      for (std::int64_t i = ord_start_[v]; i < ord_start_[v + 1]; ++i) emb.link_before(out_dart(ord_[i]), v, emb.first[v]);
    std::vector<std::int64_t> left_ref(n_, kNone), right_ref(n_, kNone);
    std::vector<std::int64_t> ind(ord_start_.begin(), ord_start_.end() - 1);
    std::vector<std::int64_t> stack;
    for (std::int64_t root : roots_) {
      stack.push_back(root);
      while (!stack.empty()) {
        const std::int64_t v = stack.back();
        stack.pop_back();
        while (ind[v] < ord_start_[v + 1]) {
          const std::int64_t ei = ord_[ind[v]++];
          const std::int64_t w = dst_[ei], back = out_dart(ei) ^ 1;  // back: the dart w -> v
          if (ei == parent_edge_[w]) {  // tree edge: v becomes w's first neighbour
            const std::int64_t f = emb.first[w];
            emb.link_before(back, w, f);
            emb.first[w] = back;
            left_ref[v] = right_ref[v] = out_dart(ei);
            stack.push_back(v);
            stack.push_back(w);
            break;
          }
          if (side_[ei] == 1) {  // right of the tree path: just after right_ref around w
            emb.link_before(back, w, emb.next[right_ref[w]]);
          } else {  // left: just before left_ref, which it becomes
            emb.link_before(back, w, left_ref[w]);
            left_ref[w] = back;
          }
        }
      }
    }
  }
};

}  // namespace

bool lr_planar(std::int64_t n, const std::vector<std::int64_t>& pairs, Embedding* emb) {
  const std::int64_t m = static_cast<std::int64_t>(pairs.size() / 2);
  if (n > 2 && m > 3 * n - 6) return false;  // Euler's bound for simple planar graphs
  LeftRight lr(n, pairs);
  if (!lr.run(emb)) return false;
  if (emb != nullptr) {
    // A rotation system is planar iff every component satisfies Euler's formula: V - E + F = 2.
    std::int64_t components = 0, vertices = 0;
    std::vector<std::int64_t> parent(n);
    for (std::int64_t v = 0; v < n; ++v) parent[v] = v;
    auto find = [&parent](std::int64_t x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (std::int64_t e = 0; e < m; ++e) parent[find(pairs[2 * e])] = find(pairs[2 * e + 1]);
    for (std::int64_t v = 0; v < n; ++v) {
      if (emb->first[v] == kNone) continue;
      ++vertices;
      if (find(v) == v) ++components;
    }
    if (vertices - m + count_faces(*emb) != 2 * components)
      raise<Error>("lcn planarity: internal error, the embedding of a planar graph is not planar");
  }
  return true;
}

}  // namespace detail

bool is_planar(std::int64_t n, const ArrayView& edges) {
  const std::vector<std::int64_t> pairs =
      detail::simple_edges(n, detail::host_pairs(edges, "edges"), edges.shape[0], "lcn is_planar");
  return detail::lr_planar(n, pairs, nullptr);
}

}  // namespace ironkernels::lcn
