// CPU crossing kernels (sweep.hpp). Compiled once per ISA level with IRONKERNELS_CPU_ISA set to
// baseline, avx2 or avx512 (and the matching -m flags); GCC vector extensions give SIMD of that
// width. Inside the loops no branch depends on the geometry (every lane computes the whole test),
// and no load is conditional (masked loads are slow on some CPUs): the variants are templates.
#include <cstdint>

#include "lcn/predicates.hpp"
#include "lcn/sweep.hpp"

#ifndef IRONKERNELS_CPU_ISA
#error "IRONKERNELS_CPU_ISA must be defined"
#endif
#define IK_CAT2(a, b) a##b
#define IK_CAT(a, b) IK_CAT2(a, b)

namespace ironkernels::lcn::detail::IK_CAT(cpu_, IRONKERNELS_CPU_ISA) {
namespace {

#if defined(__AVX512F__)
constexpr int L = 8;
#elif defined(__AVX2__)
constexpr int L = 4;
#else
constexpr int L = 2;
#endif
static_assert(L <= kSweepPad, "the arrays' padding must cover one vector");
typedef double vd __attribute__((vector_size(8 * L), aligned(8), may_alias));
typedef std::int64_t vi __attribute__((vector_size(8 * L), aligned(8), may_alias));

// Filter bounds (sweep.hpp): the error of a crossing determinant sum, of one orientation.
constexpr double kCrossUnsure = 4096.0;
constexpr double kOrientUnsure = 1024.0;

inline vd ld(const double* p) { return *reinterpret_cast<const vd*>(p); }
inline vi ldi(const std::int64_t* p) { return *reinterpret_cast<const vi*>(p); }
inline void sti(std::int64_t* p, vi v) { *reinterpret_cast<vi*>(p) = v; }
inline vd vabs(vd x) { return reinterpret_cast<vd>(reinterpret_cast<vi>(x) & std::int64_t(0x7fffffffffffffff)); }

// All ones in the first `k` lanes (0 <= k <= L).
inline vi first_lanes(std::int64_t k) {
  vi lane;
  for (int l = 0; l < L; ++l) lane[l] = l;
  return lane < k;
}

inline std::int64_t lane_sum(vi v) {
  std::int64_t s = 0;
  for (int l = 0; l < L; ++l) s += v[l];
  return s;
}

inline bool any_lane(vi v) {
  std::int64_t s = 0;
  for (int l = 0; l < L; ++l) s |= v[l];
  return s != 0;
}

inline Point exact_point(double x, double y) { return {static_cast<std::int64_t>(x), static_cast<std::int64_t>(y)}; }

// Proper crossings of e = (a, a + (dx, dy)) with the L segments (c, d): all ones where they cross.
// Filtered: lanes whose determinants are too close to 0 for the rounding are decided exactly.
template <bool Filtered>
inline vi cross_lanes(double ax, double ay, double dx, double dy, vd cx, vd cy, vd ex, vd ey, vi keep) {
  const vd u = cx - ax, w = cy - ay, fx = ex - cx, fy = ey - cy;
  const vd o1 = dx * w - dy * u;
  const vd x = dx * fy - dy * fx;
  const vd o3 = fy * u - fx * w;
  const vd o2 = o1 + x, o4 = o3 - x;
  const vd p = o1 * o2, q = o3 * o4;
  vi hit = ((p > q ? p : q) < 0.0) & keep;  // both products negative
  if (Filtered) {
    const vi unsure = (vabs(o1) < kCrossUnsure) | (vabs(o2) < kCrossUnsure) | (vabs(o3) < kCrossUnsure) |
                      (vabs(o4) < kCrossUnsure);
    if (any_lane(unsure & keep))
      for (int l = 0; l < L; ++l)
        if (unsure[l] & keep[l])
          hit[l] = cross_properly(exact_point(ax, ay), exact_point(ax + dx, ay + dy), exact_point(cx[l], cy[l]),
                                  exact_point(ex[l], ey[l]))
                       ? -1
                       : 0;
  }
  return hit;
}

// Entries [lo, hi) of row i's partners: counts into cnt[j], returns the row's share.
template <bool Filtered, bool Masked>
inline std::int64_t sweep_range(const SweepRows& r, std::int64_t i, std::int64_t lo, std::int64_t hi,
                                std::int64_t* cnt) {
  const double ax = r.ax[i], ay = r.ay[i], dx = r.bx[i] - ax, dy = r.by[i] - ay;
  const double *cx = r.ax, *cy = r.ay, *ex = r.bx, *ey = r.by;  // locals: the stores to cnt cannot move them
  const std::int64_t* first = r.first;
  vi acc = {};
  auto block = [&](std::int64_t j, vi keep) {
    if (Masked) keep &= ldi(first + j);
    const vi hit = cross_lanes<Filtered>(ax, ay, dx, dy, ld(cx + j), ld(cy + j), ld(ex + j), ld(ey + j), keep);
    sti(cnt + j, ldi(cnt + j) - hit);  // a lane's mask is -1 where it counts
    acc -= hit;
  };
  std::int64_t j = lo;
  for (; j + L <= hi; j += L) block(j, first_lanes(L));
  if (j < hi) block(j, first_lanes(hi - j));  // the padding keeps this read inside the arrays
  return lane_sum(acc);
}

template <bool Filtered>
inline void sweep_row(const SweepRows& r, std::int64_t i, std::int64_t lo, std::int64_t hi, std::int64_t* cnt) {
  if (r.first == nullptr || r.first[i])
    cnt[i] += sweep_range<Filtered, false>(r, i, lo, hi, cnt);
  else
    cnt[i] += sweep_range<Filtered, true>(r, i, lo, hi, cnt);
}

// Rows in blocks of kBlock; a block whose partners span more than kTile entries takes them a tile at
// a time, every row of the block against one tile while it sits in L1 (a row alone would stream its
// partners from L2 or beyond, and memory would set the pace).
constexpr std::int64_t kBlock = 32, kTile = 512;

template <bool Filtered>
void sweep_rows(const SweepRows& r, std::int64_t i0, std::int64_t i1, std::int64_t* cnt) {
  for (std::int64_t b = i0; b < i1; b += kBlock) {
    const std::int64_t b1 = b + kBlock < i1 ? b + kBlock : i1;
    std::int64_t reach = b + 1;
    for (std::int64_t i = b; i < b1; ++i) reach = r.end[i] > reach ? r.end[i] : reach;
    if (reach - b <= kTile) {
      for (std::int64_t i = b; i < b1; ++i) sweep_row<Filtered>(r, i, i + 1, r.end[i], cnt);
      continue;
    }
    for (std::int64_t t = b + 1; t < reach; t += kTile) {
      const std::int64_t t1 = t + kTile < reach ? t + kTile : reach;
      for (std::int64_t i = b; i < b1; ++i) {
        const std::int64_t lo = i + 1 > t ? i + 1 : t, hi = r.end[i] < t1 ? r.end[i] : t1;
        if (lo < hi) sweep_row<Filtered>(r, i, lo, hi, cnt);
      }
    }
  }
}

void sweep(const SweepRows& r, std::int64_t i0, std::int64_t i1, std::int64_t* cnt, bool exact) {
  if (exact)
    sweep_rows<false>(r, i0, i1, cnt);
  else
    sweep_rows<true>(r, i0, i1, cnt);
}

template <bool Filtered>
std::int64_t cross_all(double px, double py, double qx, double qy, const SegmentArrays& s, std::int64_t* acc,
                       bool subtract) {
  const double dx = qx - px, dy = qy - py;
  vi total = {};
  auto block = [&](std::int64_t f, vi keep) {
    const vi hit = cross_lanes<Filtered>(px, py, dx, dy, ld(s.ax + f), ld(s.ay + f), ld(s.bx + f), ld(s.by + f), keep);
    sti(acc + f, subtract ? ldi(acc + f) + hit : ldi(acc + f) - hit);
    total -= hit;
  };
  std::int64_t f = 0;
  for (; f + L <= s.count; f += L) block(f, first_lanes(L));
  if (f < s.count) block(f, first_lanes(s.count - f));
  return lane_sum(total);
}

std::int64_t cross(double px, double py, double qx, double qy, const SegmentArrays& s, std::int64_t* acc, bool subtract,
                   bool exact) {
  return exact ? cross_all<false>(px, py, qx, qy, s, acc, subtract) : cross_all<true>(px, py, qx, qy, s, acc, subtract);
}

// Points on the closed segment (a, b) other than its endpoints' points.
template <bool Filtered>
std::int64_t on_segment_in(double ax, double ay, double bx, double by, const double* px, const double* py,
                           std::int64_t begin, std::int64_t end) {
  const double dx = bx - ax, dy = by - ay;
  const double x0 = ax < bx ? ax : bx, x1 = ax < bx ? bx : ax, y0 = ay < by ? ay : by, y1 = ay < by ? by : ay;
  auto lanes = [&](std::int64_t v, vi keep) {
    const vd x = ld(px + v), y = ld(py + v);
    const vd o = dx * (y - ay) - dy * (x - ax);
    const vi near = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1) & ((x != ax) | (y != ay)) & ((x != bx) | (y != by)) &
                    keep;
    vi on = near & (o == 0.0);
    if (Filtered) {
      const vi unsure = near & (vabs(o) < kOrientUnsure);
      if (any_lane(unsure))
        for (int l = 0; l < L; ++l)
          if (unsure[l])
            on[l] = orientation(exact_point(ax, ay), exact_point(bx, by), exact_point(x[l], y[l])) == 0 ? -1 : 0;
    }
    return on;
  };
  auto first_of = [](std::int64_t v, vi on) {
    int l = 0;
    while (!on[l]) ++l;
    return v + l;
  };
  std::int64_t v = begin;
  for (; v + L <= end; v += L) {
    const vi on = lanes(v, first_lanes(L));
    if (any_lane(on)) return first_of(v, on);
  }
  if (v < end) {
    const vi on = lanes(v, first_lanes(end - v));
    if (any_lane(on)) return first_of(v, on);
  }
  return end;
}

std::int64_t on_segment(double ax, double ay, double bx, double by, const double* px, const double* py,
                        std::int64_t begin, std::int64_t end, bool exact) {
  return exact ? on_segment_in<false>(ax, ay, bx, by, px, py, begin, end)
               : on_segment_in<true>(ax, ay, bx, by, px, py, begin, end);
}

template <bool Filtered>
bool point_on_any_in(double qx, double qy, const SegmentArrays& s) {
  auto lanes = [&](std::int64_t f, vi keep) {
    const vd ax = ld(s.ax + f), ay = ld(s.ay + f), bx = ld(s.bx + f), by = ld(s.by + f);
    const vi in_x = ((ax <= qx) & (qx <= bx)) | ((bx <= qx) & (qx <= ax));
    const vi in_y = ((ay <= qy) & (qy <= by)) | ((by <= qy) & (qy <= ay));
    const vd o = (bx - ax) * (qy - ay) - (by - ay) * (qx - ax);
    const vi near = in_x & in_y & keep;
    vi on = near & (o == 0.0);
    if (Filtered) {
      const vi unsure = near & (vabs(o) < kOrientUnsure);
      if (any_lane(unsure))
        for (int l = 0; l < L; ++l)
          if (unsure[l]) {
            const Point a = exact_point(ax[l], ay[l]), b = exact_point(bx[l], by[l]);
            on[l] = orientation(a, b, exact_point(qx, qy)) == 0 ? -1 : 0;
          }
    }
    return on;
  };
  vi found = {};
  std::int64_t f = 0;
  for (; f + L <= s.count; f += L) found |= lanes(f, first_lanes(L));
  if (f < s.count) found |= lanes(f, first_lanes(s.count - f));
  return any_lane(found);
}

bool point_on_any(double qx, double qy, const SegmentArrays& s, bool exact) {
  return exact ? point_on_any_in<false>(qx, qy, s) : point_on_any_in<true>(qx, qy, s);
}

}  // namespace

extern const SweepKernels kernels;
const SweepKernels kernels = {sweep, cross, on_segment, point_on_any};

}  // namespace ironkernels::lcn::detail::IK_CAT(cpu_, IRONKERNELS_CPU_ISA)
