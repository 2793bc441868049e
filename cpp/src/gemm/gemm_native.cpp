// Contract.native() resolved per call (ironkernels/gemm.hpp, gemm_native_contract).
#include "gemm/gemm_native.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "gemm/gemm_checks.hpp"
#include "gemm/ozaki.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels {
namespace detail {

double max_spread_squared_cpu(const StridedLines& x) {
  double worst = 1.0;
  for (std::int64_t r = 0; r < x.lines; ++r) {
    const double* line = x.data + r * x.line_stride;
    int e = ozaki::kNoExponent;
    bool finite = true;
    for (std::int64_t l = 0; l < x.positions && finite; ++l) {
      const double v = line[l * x.position_stride];
      finite = ozaki::finite(v);
      if (finite && v != 0.0) e = std::max(e, ozaki::exponent_bound(v));
    }
    if (!finite || e == ozaki::kNoExponent) continue;
    double sum = 0.0;
    std::int64_t nonzeros = 0;
    for (std::int64_t l = 0; l < x.positions; ++l) {
      const double v = line[l * x.position_stride];
      if (v == 0.0) continue;
      const double scaled = std::ldexp(v, -e);  // in (-1, 1): no overflow for any exponent
      sum += scaled * scaled, ++nonzeros;
    }
    worst = std::max(worst, double(nonzeros) / sum);
  }
  return worst;
}

NativeBits native_bits(std::int64_t k) {
  NativeBits bits;
  for (int c = 2; c <= kGemmMaxModuli; ++c) {
    const GemmBits b = gemm_fast_bits(c, std::max<std::int64_t>(k, 1));
    bits.a[c] = b.a, bits.b[c] = b.b;
  }
  return bits;
}

double native_target(std::int64_t k) { return std::sqrt(double(std::max<std::int64_t>(k, 1))) * 0x1p-53; }

}  // namespace detail

GemmNativeChoice gemm_native_choice(double spread_a, double spread_b, std::int64_t k) {
  if (!(spread_a >= 1.0) || !(spread_b >= 1.0) || k < 0)
    raise<ValueError>("gemm_native_choice: spreads must be >= 1 and k >= 0, got ", spread_a, ", ", spread_b, ", ", k);
  GemmNativeChoice c;
  c.spread_a = spread_a, c.spread_b = spread_b;
  c.target = detail::native_target(k);
  detail::native_count(spread_a, spread_b, c.target, detail::native_bits(k), c.moduli, c.bound);
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
  double sa = 1.0, sb = 1.0;
  if (a.device.type == DeviceType::cpu) {
    sa = detail::max_spread_squared_cpu(rows), sb = detail::max_spread_squared_cpu(cols);
  } else {
#if IRONKERNELS_WITH_CUDA
    std::tie(sa, sb) = detail::max_spread_squared_cuda(rows, cols, a.device, stream);
#else
    (void)stream;
    raise<UnsupportedError>("gemm: this build of ironkernels has no CUDA backend; use host arrays");
#endif
  }
  return gemm_native_choice(std::sqrt(sa), std::sqrt(sb), k);
}

}  // namespace ironkernels
