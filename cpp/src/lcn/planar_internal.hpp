#pragma once
// Shared by the planarity test, the triangulation and the Schnyder drawing: the simple graph of the
// input and a combinatorial embedding (rotation system) stored as darts.
#include <cstdint>
#include <utility>
#include <vector>

namespace ironkernels::lcn::detail {

/// A set of unordered vertex pairs (vertices below 2^32): open addressing, no removal.
class PairSet {
 public:
  explicit PairSet(std::int64_t expected) {
    std::size_t cap = 16;
    while (cap < 2 * static_cast<std::size_t>(expected) + 16) cap *= 2;
    slots_.assign(cap, kEmpty);
  }
  /// Adds {a, b}; false when it was there already.
  bool insert(std::int64_t a, std::int64_t b) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    return place(key(a, b));
  }
  bool contains(std::int64_t a, std::int64_t b) const {
    const std::uint64_t k = key(a, b);
    for (std::size_t i = slot(k);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == k) return true;
      if (slots_[i] == kEmpty) return false;
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t(0);  // no pair a < b < 2^32 has this key
  static std::uint64_t key(std::int64_t a, std::int64_t b) {
    if (a > b) std::swap(a, b);
    return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint64_t>(b);
  }
  std::size_t slot(std::uint64_t k) const {  // splitmix64's finaliser: consecutive keys spread out
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ull;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebull;
    k ^= k >> 31;
    return static_cast<std::size_t>(k) & (slots_.size() - 1);
  }
  bool place(std::uint64_t k) {
    for (std::size_t i = slot(k);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == k) return false;
      if (slots_[i] == kEmpty) {
        slots_[i] = k;
        ++size_;
        return true;
      }
    }
  }
  void grow() {
    std::vector<std::uint64_t> old(slots_.size() * 2, kEmpty);
    old.swap(slots_);
    size_ = 0;
    for (std::uint64_t k : old)
      if (k != kEmpty) place(k);
  }
  std::vector<std::uint64_t> slots_;
  std::size_t size_ = 0;
};

/// The input's edges as a simple graph, 2 entries per edge, each unordered pair once, in the order of
/// first appearance. ValueError (message prefixed by `fn`) for n or m negative, n above 2^32, an
/// endpoint outside [0, n) or a self-loop.
std::vector<std::int64_t> simple_edges(std::int64_t n, const std::int64_t* edges, std::int64_t m, const char* fn);

/// A rotation system: for every vertex the cyclic order of the darts (directed half-edges) leaving
/// it. Dart 2e and 2e+1 are the two directions of edge e. Faces are traced by face_next; any planar
/// rotation system, or its mirror image, gives the same faces, so the orientation is never assumed.
struct Embedding {
  std::vector<std::int64_t> head;        // per dart: the vertex it points to; its origin is head[d ^ 1]
  std::vector<std::int64_t> next, prev;  // per dart: the next / previous dart around its origin
  std::vector<std::int64_t> first;       // per vertex: some dart leaving it, -1 for an isolated vertex

  std::int64_t vertices() const { return static_cast<std::int64_t>(first.size()); }
  std::int64_t edges() const { return static_cast<std::int64_t>(head.size() / 2); }
  std::int64_t origin(std::int64_t d) const { return head[d ^ 1]; }
  /// The dart after d on the face it bounds.
  std::int64_t face_next(std::int64_t d) const { return next[d ^ 1]; }

  /// Links dart d, leaving v, into v's rotation just before dart `at` (alone when at is -1).
  void link_before(std::int64_t d, std::int64_t v, std::int64_t at);
  /// A new edge a-b: dart a->b just before `before_a` around a and b->a just before `before_b` around b
  /// (-1 for a vertex without darts). When before_a and before_b are the darts leaving a and b along
  /// one face, that face is split in two: a->b followed by before_b, and b->a followed by before_a.
  /// Returns the dart a->b.
  std::int64_t add_edge(std::int64_t a, std::int64_t before_a, std::int64_t b, std::int64_t before_b);
};

/// Left-right planarity test of the simple graph `pairs` on n vertices. When planar and emb is not
/// null, *emb becomes a planar rotation system of it (edge e of `pairs` is darts 2e, 2e+1).
bool lr_planar(std::int64_t n, const std::vector<std::int64_t>& pairs, Embedding* emb);

/// Number of faces of the rotation system (of all its components together).
std::int64_t count_faces(const Embedding& emb);

/// Adds edges to a planar rotation system of a simple graph on n >= 3 vertices until it is a
/// triangulation (3n - 6 edges, every face a triangle), keeping it planar and simple.
void triangulate(Embedding& emb);

}  // namespace ironkernels::lcn::detail
