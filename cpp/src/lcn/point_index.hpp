#pragma once
// Exact spatial indexes of a grid drawing for legalise(): which grid points hold a vertex, and which
// grid points lie inside an edge. Only lattice points matter (vertices sit on them), and the lattice
// points inside the segment a-b are a + j·(b-a)/g for 0 < j < g, g = gcd(|dx|, |dy|): an edge with
// g = 1, the usual case, contains none and cannot hold a vertex anywhere. Edges with few interior
// points list them in a hash; the rare ones with many (long axis-parallel or diagonal edges) are
// kept per supporting line.
#include <cstdint>
#include <cstdlib>
#include <unordered_map>
#include <vector>

#include "lcn/predicates.hpp"

namespace ironkernels::lcn::detail {

/// Edges with at most this many interior lattice points list them one by one.
constexpr std::int64_t kShortEdgePoints = 64;

inline std::uint64_t point_key(Point p) {  // coordinates in [0, 2^30]: never the empty key
  return (static_cast<std::uint64_t>(p.x) << 31) | static_cast<std::uint64_t>(p.y);
}

inline std::int64_t gcd64(std::int64_t a, std::int64_t b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b != 0) {
    const std::int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/// p strictly inside the segment a-b (on it, and neither end).
inline bool inside_segment(Point p, Point a, Point b) {
  return on_segment(p, a, b) && !(p.x == a.x && p.y == a.y) && !(p.x == b.x && p.y == b.y);
}

/// Open-addressing map from point keys to int64 values, -1 meaning absent. Entries are never
/// erased: callers store -1 instead, so probing needs no tombstones.
class PointMap {
 public:
  explicit PointMap(std::size_t expected = 16) { rehash(capacity_for(expected)); }
  std::int64_t get(std::uint64_t key) const {
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return values_[i];
      if (keys_[i] == kEmpty) return -1;
    }
  }
  /// The value of `key`, inserted as -1 when absent.
  std::int64_t& ref(std::uint64_t key) {
    if (2 * (used_ + 1) > keys_.size()) rehash(2 * keys_.size());
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return values_[i];
      if (keys_[i] == kEmpty) {
        keys_[i] = key;
        values_[i] = -1;
        ++used_;
        return values_[i];
      }
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t(0);
  static std::size_t capacity_for(std::size_t expected) {
    std::size_t c = 16;
    while (c < 2 * expected + 2) c *= 2;
    return c;
  }
  std::size_t slot(std::uint64_t key) const { return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void rehash(std::size_t capacity) {
    std::vector<std::uint64_t> old_keys(capacity, kEmpty);
    std::vector<std::int64_t> old_values(capacity, -1);
    old_keys.swap(keys_);
    old_values.swap(values_);
    mask_ = capacity - 1;
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c /= 2) --shift_;
    used_ = 0;
    for (std::size_t i = 0; i < old_keys.size(); ++i)
      if (old_keys[i] != kEmpty) ref(old_keys[i]) = old_values[i];
  }
  std::vector<std::uint64_t> keys_;
  std::vector<std::int64_t> values_;
  std::size_t mask_ = 0, used_ = 0;
  int shift_ = 64;
};

/// A supporting line: primitive direction (dx, dy), normalised to dx > 0 or dx = 0 < dy, and
/// the offset dx·y - dy·x shared by its points (exact: |offset| <= 2^61).
struct Line {
  std::int64_t dx, dy, offset;
  bool operator==(const Line& o) const { return dx == o.dx && dy == o.dy && offset == o.offset; }
};
struct LineHash {
  std::size_t operator()(const Line& l) const {
    std::uint64_t h = static_cast<std::uint64_t>(l.dx) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<std::uint64_t>(l.dy) + 0x7F4A7C15ull + (h << 6) + (h >> 2);
    h ^= static_cast<std::uint64_t>(l.offset) + 0x9E3779B9ull + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h * 0xBF58476D1CE4E5B9ull);
  }
};
inline Line line_through(Point a, Point b) {
  std::int64_t dx = b.x - a.x, dy = b.y - a.y;
  const std::int64_t g = gcd64(dx, dy);
  dx /= g;
  dy /= g;
  if (dx < 0 || (dx == 0 && dy < 0)) {
    dx = -dx;
    dy = -dy;
  }
  return {dx, dy, dx * a.y - dy * a.x};
}

/// The edges of a drawing (those added) by the grid points inside them. Edge geometry is read from
/// `p` when an edge is added and must not change until it is removed.
class EdgeIndex {
 public:
  EdgeIndex(const std::vector<Point>& p, const std::int64_t* edges, std::size_t expected_points)
      : p_(p), edges_(edges), head_(expected_points) {}

  void add(std::int64_t e) {
    const Point a = p_[edges_[2 * e]], b = p_[edges_[2 * e + 1]];
    const std::int64_t g = gcd64(b.x - a.x, b.y - a.y);
    if (g - 1 > kShortEdgePoints) {
      const Line l = line_through(a, b);
      lines_[l].push_back(e);
      direction(l.dx, l.dy).live += 1;
      return;
    }
    const std::int64_t sx = (b.x - a.x) / g, sy = (b.y - a.y) / g;
    for (std::int64_t j = 1; j < g; ++j) {
      std::int64_t& head = head_.ref(point_key({a.x + j * sx, a.y + j * sy}));
      std::int64_t node;
      if (free_ >= 0) {
        node = free_;
        free_ = next_[node];
      } else {
        node = static_cast<std::int64_t>(edge_.size());
        edge_.push_back(0);
        next_.push_back(0);
      }
      edge_[node] = e;
      next_[node] = head;
      head = node;
    }
  }

  void remove(std::int64_t e) {
    const Point a = p_[edges_[2 * e]], b = p_[edges_[2 * e + 1]];
    const std::int64_t g = gcd64(b.x - a.x, b.y - a.y);
    if (g - 1 > kShortEdgePoints) {
      const Line l = line_through(a, b);
      auto& list = lines_[l];
      for (std::size_t i = 0; i < list.size(); ++i)
        if (list[i] == e) {
          list[i] = list.back();
          list.pop_back();
          break;
        }
      direction(l.dx, l.dy).live -= 1;
      return;
    }
    const std::int64_t sx = (b.x - a.x) / g, sy = (b.y - a.y) / g;
    for (std::int64_t j = 1; j < g; ++j) {
      std::int64_t* link = &head_.ref(point_key({a.x + j * sx, a.y + j * sy}));
      while (*link >= 0 && edge_[*link] != e) link = &next_[*link];
      if (*link < 0) continue;  // not there (cannot happen for an added edge)
      const std::int64_t node = *link;
      *link = next_[node];
      next_[node] = free_;
      free_ = node;
    }
  }

  /// Whether q lies inside an indexed edge.
  bool blocks(Point q) const {
    if (head_.get(point_key(q)) >= 0) return true;
    for (const Direction& d : directions_) {
      if (d.live == 0) continue;
      const auto it = lines_.find({d.dx, d.dy, d.dx * q.y - d.dy * q.x});
      if (it == lines_.end()) continue;
      for (const std::int64_t e : it->second)
        if (inside_segment(q, p_[edges_[2 * e]], p_[edges_[2 * e + 1]])) return true;
    }
    return false;
  }

  /// The indexed edges with q inside them, appended to `out`.
  void edges_through(Point q, std::vector<std::int64_t>& out) const {
    for (std::int64_t node = head_.get(point_key(q)); node >= 0; node = next_[node]) out.push_back(edge_[node]);
    for (const Direction& d : directions_) {
      if (d.live == 0) continue;
      const auto it = lines_.find({d.dx, d.dy, d.dx * q.y - d.dy * q.x});
      if (it == lines_.end()) continue;
      for (const std::int64_t e : it->second)
        if (inside_segment(q, p_[edges_[2 * e]], p_[edges_[2 * e + 1]])) out.push_back(e);
    }
  }

 private:
  struct Direction {
    std::int64_t dx, dy, live;
  };
  Direction& direction(std::int64_t dx, std::int64_t dy) {
    const std::uint64_t key = (static_cast<std::uint64_t>(dx) << 32) ^ static_cast<std::uint64_t>(dy + (std::int64_t(1) << 31));
    const auto it = direction_index_.find(key);
    if (it != direction_index_.end()) return directions_[it->second];
    direction_index_.emplace(key, directions_.size());
    directions_.push_back({dx, dy, 0});
    return directions_.back();
  }

  const std::vector<Point>& p_;
  const std::int64_t* edges_;
  PointMap head_;                           // interior point of a short edge -> first list node
  std::vector<std::int64_t> edge_, next_;   // list nodes: edge, next node (-1 ends)
  std::int64_t free_ = -1;                  // recycled nodes
  std::unordered_map<Line, std::vector<std::int64_t>, LineHash> lines_;  // long edges per line
  std::vector<Direction> directions_;       // the directions of long edges, with live counts
  std::unordered_map<std::uint64_t, std::size_t> direction_index_;
};

}  // namespace ironkernels::lcn::detail
