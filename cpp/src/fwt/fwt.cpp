// FWT entry point: argument validation (before anything is written), batch collapsing, block-diagonal
// views, dispatch to the CPU (fwt_cpu.cpp) or CUDA (cuda/fwt/).
#include "ironkernels/fwt.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "ironkernels/core/runtime.hpp"
#include "fwt/fwt_plan.hpp"
#include "fwt/hadamard_factors.hpp"
#include "ironkernels/core/error.hpp"

namespace ironkernels {
namespace detail {
namespace {

bool is_complex(DType d) { return d == DType::complex64 || d == DType::complex128; }

// The scale of an integer transform: an integer that fits int64 (the product wraps like the sums).
std::int64_t integer_scale(DType dt, const FwtOptions& opt) {
  if (opt.normalized && !opt.scale)
    raise<ValueError>("fwt: normalized=True is not defined for ", dtype_name(dt),
                      " (1/sqrt(N) is not an integer); accepted: scale=None or an integer scale");
  if (!opt.scale) return 1;
  const double s = *opt.scale;
  if (!(s == std::floor(s)))
    raise<ValueError>("fwt: scale=", s, " is not an integer; ", dtype_name(dt), " accepts integer scales only");
  if (!(std::fabs(s) < 0x1p63))
    raise<ValueError>("fwt: scale=", s, " is outside int64's range; ", dtype_name(dt),
                      " accepts integer scales of magnitude below 2^63");
  return static_cast<std::int64_t>(s);
}

bool is_power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// The lines of x and out along `axis` (complex arrays as their real views, whose trailing dimension
// of 2 joins the batch), the batch collapsed; unscaled, log_n and factor unset.
FwtPlan lines_of(const ArrayView& x, const ArrayView& out, int axis) {
  FwtPlan p;
  p.x = x.data;
  p.y = out.data;
  p.device = x.device;
  const std::int64_t n = x.shape[axis];
  p.rows = n ? x.size() / n : 0;
  switch (x.dtype) {
    case DType::complex64: p.dtype = DType::float32; p.rows *= 2; break;
    case DType::complex128: p.dtype = DType::float64; p.rows *= 2; break;
    default: p.dtype = x.dtype;
  }
  const int parts = is_complex(x.dtype) ? 2 : 1;
  p.x_axis_stride = x.strides[axis] * parts;
  p.y_axis_stride = out.strides[axis] * parts;
  if (p.rows == 0) return p;
  for (int d = 0; d < x.ndim(); ++d) {
    if (d == axis) continue;
    p.batch_shape[p.batch_ndim] = x.shape[d];
    p.x_stride[p.batch_ndim] = x.strides[d] * parts;
    p.y_stride[p.batch_ndim] = out.strides[d] * parts;
    ++p.batch_ndim;
  }
  if (parts == 2) {
    p.batch_shape[p.batch_ndim] = 2;
    p.x_stride[p.batch_ndim] = p.y_stride[p.batch_ndim] = 1;
    ++p.batch_ndim;
  }
  collapse_batch(p);
  return p;
}

FwtPlan make_plan(const ArrayView& x, const ArrayView& out, const FwtOptions& opt, const FactorMatrix& user) {
  switch (x.dtype) {
    case DType::float16:
    case DType::bfloat16:
    case DType::float32:
    case DType::float64:
    case DType::complex64:
    case DType::complex128:
    case DType::int32:
    case DType::int64: break;
    case DType::int8:
    case DType::uint8:
      raise<TypeError>("fwt: x has dtype ", dtype_name(x.dtype), "; accepted: float16, bfloat16, float32, float64, "
                       "complex64, complex128, int32, int64");
  }
  if (out.dtype != x.dtype)
    raise<TypeError>("fwt: out has dtype ", dtype_name(out.dtype), " but x has ", dtype_name(x.dtype),
                     "; they must match");
  if (out.device != x.device)
    raise<ValueError>("fwt: out is on ", device_name(out.device), " but x is on ", device_name(x.device),
                      "; they must be on the same device (no implicit transfers)");
  if (x.ndim() < 1) raise<ValueError>("fwt: x must have at least one dimension, got a scalar");
  if (x.strides.size() != x.shape.size() || out.strides.size() != out.shape.size())
    raise<ValueError>("fwt: strides and shape lengths differ");
  if (out.shape != x.shape)
    raise<ValueError>("fwt: out has shape ", shape_text(out), " but x has shape ", shape_text(x), "; they must match");
  const int nd = x.ndim();
  const int axis = opt.axis < 0 ? opt.axis + nd : opt.axis;
  if (axis < 0 || axis >= nd)
    raise<ValueError>("fwt: axis=", opt.axis, " is out of range for an array of ", nd, " dimensions");
  const std::int64_t n = x.shape[axis];
  const int factor = user ? int(opt.hadamard.shape[0]) : hadamard_factor_of(n);  // (checked square)
  if (user && (n % factor != 0 || !is_power_of_two(n / factor)))
    raise<ValueError>("fwt: the transform length N = x.shape[", axis, "] = ", n, " is not m·2^k for the hadamard of order m = ",
                      factor, "; accepted: N = ", factor, "·2^k (or a block of that length)");
  if (factor == 0)
    raise<ValueError>("fwt: the transform length N = x.shape[", axis, "] = ", n,
                      " is not 2^k or m·2^k; accepted: N = 2^k (k >= 0) or m·2^k with m = 12, 20, 28 (k >= 0), or "
                      "m the order of a hadamard= matrix");
  const int log_n = __builtin_ctzll(static_cast<unsigned long long>(n / factor));
  if (log_n > kFwtMaxLog2N)
    raise<ValueError>("fwt: N = 2^", log_n, " is too large; accepted: N = 2^0 … 2^", kFwtMaxLog2N);
  if ((factor > 1 || user) && opt.order != FwtOrder::natural)
    raise<ValueError>("fwt: order='", opt.order == FwtOrder::sequency ? "sequency" : "dyadic", "' is defined for H_{2^k}; N = ",
                      n, user ? " with a hadamard=" : "", " takes order='natural'");
  if (opt.inverse && (x.dtype == DType::int32 || x.dtype == DType::int64))
    raise<TypeError>("fwt: inverse=True for x of dtype ", dtype_name(x.dtype), "; the integer transform wraps modulo 2^",
                     x.dtype == DType::int32 ? 32 : 64, " and has no inverse; accepted: floating and complex dtypes");
  if (x.device.type == DeviceType::cuda && !IRONKERNELS_WITH_CUDA)
    raise<UnsupportedError>("fwt: x is on ", device_name(x.device), " but this copy of ironkernels was built without CUDA");

  if (x.size() != 0) {
    if (!out.elements_distinct())
      raise<ValueError>("fwt: out repeats elements (a zero stride, or rows laid over each other: strides ",
                        strides_text(out), " for shape ", shape_text(out), "); accepted: an out whose elements are distinct");
    if (!x.same_layout(out) && x.overlaps(out))
      raise<ValueError>("fwt: out overlaps x without being the same array; pass out=x for in place, or a separate array");
  }

  FwtPlan p = lines_of(x, out, axis);
  p.log_n = log_n;
  p.factor = factor;
  p.factor_matrix = user;
  if (p.is_integer()) p.int_scale = integer_scale(x.dtype, opt);
  else p.scale = opt.scale ? *opt.scale : (opt.normalized ? 1.0 / std::sqrt(static_cast<double>(n)) : 1.0);
  if (opt.inverse) {  // H_N·H_Nᵀ = N·I: the transpose, scaled by 1/(N·scale)
    if (p.scale == 0.0)
      raise<ValueError>("fwt: inverse=True with scale = 0; the transform it would undo is not invertible");
    p.scale = 1.0 / (static_cast<double>(n) * p.scale);
  }
  p.order = opt.order;
  if (p.batch_ndim > kFwtMaxBatchDims)
    raise<ValueError>("fwt: x has ", p.batch_ndim, " batch dimensions (besides the axis) that cannot be merged (strided); at most ",
                      kFwtMaxBatchDims, " are accepted");
  return p;
}

}  // namespace

FactorMatrix checked_factor_matrix(const ArrayView& h, bool transpose, const char* op) {
  if (!h.data) return nullptr;
  if (h.dtype != DType::int8 || h.ndim() != 2 || h.shape[0] != h.shape[1] || h.device.type != DeviceType::cpu ||
      h.strides.size() != 2)
    raise<ValueError>(op, ": hadamard must be a square int8 matrix in host memory, got dtype ", dtype_name(h.dtype),
                      " shape ", shape_text(h), " on ", device_name(h.device), "; accepted: m × m values ±1, H·Hᵀ = m·I");
  const std::int64_t m = h.shape[0];
  if (m < 1 || m > kFwtMaxUserFactor)
    raise<ValueError>(op, ": hadamard is ", m, " × ", m, "; accepted: order 1 … ", kFwtMaxUserFactor);
  auto matrix = std::make_shared<std::vector<std::int8_t>>(static_cast<std::size_t>(m * m));
  const auto* src = static_cast<const std::int8_t*>(h.data);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int8_t v = src[i * h.strides[0] + j * h.strides[1]];
      if (v != 1 && v != -1)
        raise<ValueError>(op, ": hadamard[", i, ", ", j, "] = ", int(v), "; accepted: +1 or -1");
      (*matrix)[std::size_t(transpose ? j * m + i : i * m + j)] = v;
    }
  for (std::int64_t i = 0; i < m; ++i)  // rows pairwise orthogonal (each row's norm is m already)
    for (std::int64_t j = i + 1; j < m; ++j) {
      std::int64_t dot = 0;
      for (std::int64_t c = 0; c < m; ++c) dot += (*matrix)[std::size_t(i * m + c)] * (*matrix)[std::size_t(j * m + c)];
      if (dot != 0)
        raise<ValueError>(op, ": hadamard is not a Hadamard matrix: rows ", transpose ? "(of its transpose) " : "", i, " and ",
                          j, " have dot product ", dot, "; accepted: H·Hᵀ = m·I");
    }
  return matrix;
}

std::vector<std::int8_t> checked_signs(const ArrayView& s, std::int64_t n, const char* op) {
  if (s.dtype != DType::int8 || s.ndim() != 1 || s.shape[0] != n || s.strides.size() != 1 ||
      s.device.type != DeviceType::cpu)
    raise<ValueError>(op, ": signs must be N = ", n, " int8 values ±1 in host memory (N the rotated axis's length), "
                      "got dtype ", dtype_name(s.dtype), " shape ", shape_text(s), " on ", device_name(s.device));
  std::vector<std::int8_t> d(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    d[std::size_t(j)] = static_cast<const std::int8_t*>(s.data)[j * s.strides[0]];
    if (d[std::size_t(j)] != 1 && d[std::size_t(j)] != -1)
      raise<ValueError>(op, ": signs[", j, "] = ", int(d[std::size_t(j)]), "; accepted: +1 or -1");
  }
  return d;
}

void collapse_batch(FwtPlan& p) {
  int k = 0;
  for (int d = 0; d < p.batch_ndim; ++d) {
    if (p.batch_shape[d] == 1) continue;
    if (k > 0 && p.x_stride[k - 1] == p.batch_shape[d] * p.x_stride[d] &&
        p.y_stride[k - 1] == p.batch_shape[d] * p.y_stride[d]) {
      p.batch_shape[k - 1] *= p.batch_shape[d];
      p.x_stride[k - 1] = p.x_stride[d];
      p.y_stride[k - 1] = p.y_stride[d];
    } else {
      p.batch_shape[k] = p.batch_shape[d];
      p.x_stride[k] = p.x_stride[d];
      p.y_stride[k] = p.y_stride[d];
      ++k;
    }
  }
  p.batch_ndim = k;
}


}  // namespace detail

namespace {
using detail::FactorMatrix;

// The transform's plan: on x and out, or for the block-diagonal transform on their views with the
// axis split into (N / block, block), the inner one transformed (no pass of its own).
detail::FwtPlan plan_transform(const ArrayView& x, const ArrayView& out, const FwtOptions& options,
                               const FactorMatrix& user) {
  const int nd = x.ndim();
  const int axis = options.axis < 0 ? options.axis + nd : options.axis;
  const bool strides_given = x.strides.size() == x.shape.size() && out.strides.size() == out.shape.size();
  if (options.block == 0 || nd < 1 || axis < 0 || axis >= nd || !strides_given)
    return detail::make_plan(x, out, options, user);  // (and its errors for those shapes)
  const std::int64_t n = x.shape[axis], block = options.block;
  const std::int64_t m = user ? options.hadamard.shape[0] : 0;
  const bool length_ok = user ? block % m == 0 && ((block / m) & (block / m - 1)) == 0 : detail::hadamard_factor_of(block) != 0;
  if (block < 1 || !length_ok || n % block != 0) {
    if (user)
      raise<ValueError>("fwt: block = ", block, " for N = x.shape[", axis, "] = ", n, "; accepted: a divisor of N that is ",
                        m, "·2^k (the hadamard's order times a power of two), or None for the whole axis");
    raise<ValueError>("fwt: block = ", block, " for N = x.shape[", axis, "] = ", n, "; accepted: a divisor of N that "
                      "is 2^k or m·2^k (m = 12, 20, 28), or None for the whole axis");
  }
  if (out.shape != x.shape)
    raise<ValueError>("fwt: out has shape ", shape_text(out), " but x has shape ", shape_text(x), "; they must match");
  auto split = [&](const ArrayView& v) {
    ArrayView s = v;
    s.shape[axis] = n / block;
    s.strides[axis] = v.strides[axis] * block;
    s.shape.insert(s.shape.begin() + axis + 1, block);
    s.strides.insert(s.strides.begin() + axis + 1, v.strides[axis]);
    return s;
  };
  FwtOptions inner = options;
  inner.block = 0;
  inner.axis = axis + 1;
  return detail::make_plan(split(x), split(out), inner, user);
}

void run_transform(const detail::FwtPlan& plan, Stream stream) {
  if (plan.device.type == DeviceType::cpu) return detail::fwt_cpu(plan);
#if IRONKERNELS_WITH_CUDA
  detail::fwt_cuda(plan, stream);
#else
  (void)stream;
#endif
}

void run_signs(const detail::FwtPlan& lines, std::int64_t n, const std::int8_t* signs, Stream stream) {
  if (lines.device.type == DeviceType::cpu) return detail::fwt_signs_cpu(lines, n, signs);
#if IRONKERNELS_WITH_CUDA
  detail::fwt_signs_cuda(lines, n, signs, stream);
#else
  (void)stream;
#endif
}

}  // namespace

void fwt(const ArrayView& x, const ArrayView& out, const FwtOptions& options, Stream stream) {
  // Every argument is checked before the first write: the matrix, the transform's plan, the signs.
  const FactorMatrix user = detail::checked_factor_matrix(options.hadamard, options.inverse, "fwt");
  detail::FwtPlan plan = plan_transform(x, out, options, user);
  const auto* signs = static_cast<const std::int8_t*>(options.signs.data);
  if (!signs) {
    if (plan.rows != 0) run_transform(plan, stream);
    return;
  }
  const int axis = options.axis < 0 ? options.axis + x.ndim() : options.axis;  // valid: the plan checked it
  const std::int64_t n = x.shape[axis];
  const std::vector<std::int8_t> d = detail::checked_signs(options.signs, n, "fwt");
  if (plan.rows == 0) return;
  if (options.inverse) {  // D · (Hᵀ·x scaled), D in place on out
    run_transform(plan, stream);
    return run_signs(detail::in_place_on_y(detail::lines_of(out, out, axis)), n, d.data(), stream);
  }
  run_signs(detail::lines_of(x, out, axis), n, d.data(), stream);  // D·x into out, then H on out in place
  run_transform(detail::in_place_on_y(plan), stream);
}

}  // namespace ironkernels
