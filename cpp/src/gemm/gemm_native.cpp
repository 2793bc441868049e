// Contract.native() resolved per call (ironkernels/gemm.hpp, gemm_native_contract).
#include "gemm/gemm_native.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "gemm/gemm_checks.hpp"
#include "gemm/ozaki.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels {
namespace detail {

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
    }
    for (int o = kLineSumLanes / 2; o > 0; o >>= 1)
      for (int v = 0; v < o; ++v) lanes[v].add(lanes[v + o]);
    s.sum.add(lanes[0]);
  }
  return s;
}

void add_line_spread(const LineStats& line, const NativeBits& bits, int side, NativeSpreads& s) {
  if (line.nonfinite || line.nonzeros == 0) return;
  double& w = s.worst[side][native_bin(bits, side, line.largest)];
  w = std::max(w, double(line.nonzeros) / line.sum.sum);
}

NativeSpreads native_spreads_cpu(const StridedLines& a, const StridedLines& b, const NativeBits& bits) {
  NativeSpreads s;
  init_native_spreads(s);
  const StridedLines* sides[2] = {&a, &b};
  for (int side = 0; side < 2; ++side) {
    const StridedLines& x = *sides[side];
    for (std::int64_t r = 0; r < x.lines; ++r)
      add_line_spread(line_stats_cpu(x.data + r * x.line_stride, x.positions, x.position_stride), bits, side, s);
  }
  return s;
}

NativeBits native_bits(std::int64_t k) {
  NativeBits bits;
  const std::int64_t k1 = std::max<std::int64_t>(k, 1);
  double mantissas[2][kGemmMaxModuli + 1] = {};
  for (int c = 2; c <= kGemmMaxModuli; ++c) {
    const ozaki::Budget b = ozaki::budget(ozaki::crt_constants(gemm_moduli().data(), c), k1);
    bits.a[c] = b.bits_a, bits.b[c] = b.bits_b;
    if (b.bits_a == 0) continue;
    mantissas[0][c] = ozaki::mantissa(b.cap_a), mantissas[1][c] = ozaki::mantissa(b.cap_b);
    for (int side = 0; side < 2; ++side) {
      double* edges = bits.edges[side];
      int& count = bits.edge_count[side];
      if (std::find(edges, edges + count, mantissas[side][c]) == edges + count) edges[count++] = mantissas[side][c];
    }
  }
  for (int side = 0; side < 2; ++side) {
    double* edges = bits.edges[side];
    std::sort(edges, edges + bits.edge_count[side]);
    for (int c = 2; c <= kGemmMaxModuli; ++c)
      bits.edge[side][c] = int(std::lower_bound(edges, edges + bits.edge_count[side], mantissas[side][c]) - edges);
  }
  return bits;
}

double native_target(std::int64_t k) { return std::sqrt(double(std::max<std::int64_t>(k, 1))) * 0x1p-53; }

GemmNativeChoice native_choice(const NativeSpreads& s, std::int64_t k, const NativeBits& bits) {
  GemmNativeChoice c;
  c.spread_a = std::sqrt(*std::max_element(std::begin(s.worst[0]), std::end(s.worst[0])));
  c.spread_b = std::sqrt(*std::max_element(std::begin(s.worst[1]), std::end(s.worst[1])));
  c.target = native_target(k);
  native_count(s, c.target, bits, c.moduli, c.bound);
  return c;
}

}  // namespace detail

GemmNativeChoice gemm_native_choice(double spread_a, double spread_b, std::int64_t k) {
  if (!(spread_a >= 1.0) || !(spread_b >= 1.0) || k < 0)
    raise<ValueError>("gemm_native_choice: spreads must be >= 1 and k >= 0, got ", spread_a, ", ", spread_b, ", ", k);
  detail::NativeSpreads s;  // every line keeping the fewest bits: the count for any lines of these spreads
  s.worst[0][detail::kNativeBins - 1] = spread_a * spread_a, s.worst[1][detail::kNativeBins - 1] = spread_b * spread_b;
  GemmNativeChoice c = detail::native_choice(s, k, detail::native_bits(k));
  c.spread_a = spread_a, c.spread_b = spread_b;
  return c;
}

GemmNativeChoice gemm_native_contract(const ArrayView& a, const ArrayView& b, bool trans_a, bool trans_b,
                                      Stream stream) {
  detail::check_float64_matrix(a, "a");
  detail::check_float64_matrix(b, "b");
  if (a.device.type != b.device.type || a.device.id != b.device.id)
    raise<ValueError>("gemm: b is on ", device_name(b.device), " but a is on ", device_name(a.device),
                      "; all arrays must be on one device");
  const std::int64_t m = trans_a ? a.shape[1] : a.shape[0], k = trans_a ? a.shape[0] : a.shape[1];
  const std::int64_t kb = trans_b ? b.shape[1] : b.shape[0], n = trans_b ? b.shape[0] : b.shape[1];
  if (k != kb)
    raise<ValueError>("gemm: op(a) is ", m, "x", k, " but op(b) is ", kb, "x", n, "; inner dimensions must match");
  // Rows of op(A) and columns of op(B) as lines over k positions.
  const detail::StridedLines rows{static_cast<const double*>(a.data), m, k, trans_a ? a.strides[1] : a.strides[0],
                                  trans_a ? a.strides[0] : a.strides[1]};
  const detail::StridedLines cols{static_cast<const double*>(b.data), n, k, trans_b ? b.strides[0] : b.strides[1],
                                  trans_b ? b.strides[1] : b.strides[0]};
  const detail::NativeBits bits = detail::native_bits(k);
  detail::NativeSpreads s;
  if (a.device.type == DeviceType::cpu) {
    s = detail::native_spreads_cpu(rows, cols, bits);
  } else {
#if IRONKERNELS_WITH_CUDA
    s = detail::native_spreads_cuda(rows, cols, bits, a.device, stream);
#else
    (void)stream;
    raise<UnsupportedError>("gemm: this build of ironkernels has no CUDA backend; use host arrays");
#endif
  }
  return detail::native_choice(s, k, bits);
}

}  // namespace ironkernels
