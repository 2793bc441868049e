// Per-line statistics on the CPU, in the canonical order every backend sums in.
#include "gemm/gemm_lines.hpp"

#include <algorithm>
#include <cmath>

#include "gemm/certificate.hpp"

namespace ironkernels::detail {

LineStats line_stats_cpu(const double* line, std::int64_t positions, std::int64_t stride) {
  using ozaki::kLineSumChunk, ozaki::kLineSumLanes;
  LineStats s;
  for (std::int64_t c0 = 0; c0 < positions; c0 += kLineSumChunk) {
    ozaki::ScaledSum lanes[kLineSumLanes];
    for (std::int64_t l = c0; l < std::min(positions, c0 + kLineSumChunk); ++l) {
      const double v = line[l * stride];
      if (!ozaki::finite(v)) s.nonfinite = true;
      if (!ozaki::finite(v) || v == 0.0) continue;
      lanes[(l - c0) % kLineSumLanes].add_value(v);
      s.largest = std::max(s.largest, std::fabs(v)), ++s.nonzeros;
      s.lowest_bit = std::min(s.lowest_bit, certify::lowest_bit_exponent(v));
    }
    for (int o = kLineSumLanes / 2; o > 0; o >>= 1)
      for (int v = 0; v < o; ++v) lanes[v].add(lanes[v + o]);
    s.sum.add(lanes[0]);
  }
  return s;
}

}  // namespace ironkernels::detail
