#pragma once
// The CPU crossing kernels of the lcn module, compiled once per x86 ISA level (sweep_kernels.inl)
// and picked at run time, like the FWT's. They test segments in double precision, several per
// SIMD vector, and give exactly the answers of predicates.hpp:
// - `exact`: every coordinate, less the drawing's minimum, is at most 2^26. Differences are then at
//   most 2^26 in magnitude, products at most 2^52 and each orientation determinant at most 2^53: every
//   value is an integer that double holds exactly (with or without FMA contraction: a fused a·b − c of
//   exact products rounds a representable value), and so is the sign of a product of two determinants.
// - otherwise (up to 2^30): the same arithmetic is a filter. With differences at most 2^30, each
//   determinant is off by less than 2^9 (half an ulp of each 2^60 product, and of the 2^61 result),
//   the sums below by less than 2^11; a lane with a determinant within 2^12 of 0 is decided again with
//   the exact int64 arithmetic of predicates.hpp (rare outside collinear configurations).
//
// With e = (a, b), f = (c, d), Δe = b − a, Δf = d − c, the four orientations of the proper-crossing
// test come from three determinants:
//   o(a,b,c) = Δe × (c − a),  X = Δe × Δf,  o(c,d,a) = Δf × (a − c),
//   o(a,b,d) = o(a,b,c) + X,   o(c,d,b) = o(c,d,a) − X.
// Segments that share an endpoint share a point, so one orientation is 0 and they never count: no
// endpoint index tests are needed.
#include <cstdint>

namespace ironkernels::lcn::detail {

/// The largest coordinate extent (after subtracting the minimum) of the exact double arithmetic.
constexpr std::int64_t kExactDoubleExtent = std::int64_t(1) << 26;

/// Padding (in elements) every kernel array needs past its last entry: one SIMD vector.
constexpr std::int64_t kSweepPad = 8;

/// Entries of the crossing sweep: segments (a the left endpoint) listed in the horizontal strips
/// their y-range touches, each strip sorted by left x. Row i is tested against entries j in
/// (i, end[i]): those of its strip whose left x lies in [ax[i], bx[i]], so every pair of segments
/// whose x-ranges overlap is tested once per strip the two share. It counts there only where one
/// of the two is `first` (in the lowest strip it touches): the strip holding the top of the lower
/// ends, which both touch when they cross. first == nullptr: one strip, every pair counts.
struct SweepRows {
  const double *ax, *ay, *bx, *by;
  const std::int64_t* end;
  const std::int64_t* first;  ///< -1 (first) or 0 per entry, or nullptr
};

/// Segments as coordinate arrays (endpoints in either order), `count` of them.
struct SegmentArrays {
  const double *ax, *ay, *bx, *by;
  std::int64_t count;
};

struct SweepKernels {
  /// Rows [i0, i1): cnt[i] and cnt[j] += 1 for every counted crossing pair (i, j).
  void (*sweep)(const SweepRows& r, std::int64_t i0, std::int64_t i1, std::int64_t* cnt, bool exact);
  /// Crossings of segment (p, q) with each of `s`: acc[f] += 1 (subtract: −= 1) for each segment f
  /// it crosses; returns how many it crosses.
  std::int64_t (*cross)(double px, double py, double qx, double qy, const SegmentArrays& s, std::int64_t* acc,
                        bool subtract, bool exact);
  /// The first point in [begin, end) of (px, py) on the closed segment (a, b) and at neither of its
  /// endpoints' points; `end` if none.
  std::int64_t (*on_segment)(double ax, double ay, double bx, double by, const double* px, const double* py,
                             std::int64_t begin, std::int64_t end, bool exact);
  /// Whether q lies on one of the closed segments `s`.
  bool (*point_on_any)(double qx, double qy, const SegmentArrays& s, bool exact);
};

#define IK_DECLARE_LCN_SWEEP(isa)      \
  namespace cpu_##isa {                \
    extern const SweepKernels kernels; \
  }
IK_DECLARE_LCN_SWEEP(baseline)
IK_DECLARE_LCN_SWEEP(avx2)
IK_DECLARE_LCN_SWEEP(avx512)
#undef IK_DECLARE_LCN_SWEEP

/// The variant of the active ISA (IRONKERNELS_CPU_ISA forces one).
const SweepKernels& sweep_kernels();

}  // namespace ironkernels::lcn::detail
