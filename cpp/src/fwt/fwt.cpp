// FWT entry point: argument validation (before anything is written), batch collapsing, block-diagonal
// views, dispatch to the CPU (fwt_cpu.cpp) or CUDA (cuda/fwt/).
#include "ironkernels/fwt.hpp"

#include <cmath>
#include <cstdint>

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

FwtPlan make_plan(const ArrayView& x, const ArrayView& out, const FwtOptions& opt) {
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
  const int factor = hadamard_factor_of(n);
  if (factor == 0)
    raise<ValueError>("fwt: the transform length N = x.shape[", axis, "] = ", n,
                      " is not 2^k or m·2^k; accepted: N = 2^k (k >= 0) or m·2^k with m = 12, 20, 28 (k >= 0)");
  const int log_n = __builtin_ctzll(static_cast<unsigned long long>(n / factor));
  if (log_n > kFwtMaxLog2N)
    raise<ValueError>("fwt: N = 2^", log_n, " is too large; accepted: N = 2^0 … 2^", kFwtMaxLog2N);
  if (factor > 1 && opt.order != FwtOrder::natural)
    raise<ValueError>("fwt: order='", opt.order == FwtOrder::sequency ? "sequency" : "dyadic", "' is defined for N = 2^k; N = ",
                      n, " takes order='natural'");
  if (x.device.type == DeviceType::cuda && !IRONKERNELS_WITH_CUDA)
    raise<UnsupportedError>("fwt: x is on ", device_name(x.device), " but this copy of ironkernels was built without CUDA");

  FwtPlan p;
  p.x = x.data;
  p.y = out.data;
  p.device = x.device;
  p.log_n = log_n;
  p.factor = factor;
  p.rows = n ? x.size() / n : 0;
  switch (x.dtype) {  // complex: the real view, whose trailing dimension of 2 joins the batch
    case DType::complex64: p.dtype = DType::float32; p.rows *= 2; break;
    case DType::complex128: p.dtype = DType::float64; p.rows *= 2; break;
    default: p.dtype = x.dtype;
  }
  const int parts = is_complex(x.dtype) ? 2 : 1;
  if (p.is_integer()) p.int_scale = integer_scale(x.dtype, opt);
  else p.scale = opt.scale ? *opt.scale : (opt.normalized ? 1.0 / std::sqrt(static_cast<double>(n)) : 1.0);
  p.order = opt.order;
  p.x_axis_stride = x.strides[axis] * parts;
  p.y_axis_stride = out.strides[axis] * parts;
  if (p.rows == 0) return p;

  if (!out.elements_distinct())
    raise<ValueError>("fwt: out repeats elements (a zero stride, or rows laid over each other: strides ",
                      strides_text(out), " for shape ", shape_text(out), "); accepted: an out whose elements are distinct");
  if (!x.same_layout(out) && x.overlaps(out)) {
    raise<ValueError>("fwt: out overlaps x without being the same array; pass out=x for in place, or a separate array");
  }

  for (int d = 0; d < nd; ++d) {
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
  if (p.batch_ndim > kFwtMaxBatchDims)
    raise<ValueError>("fwt: x has ", p.batch_ndim, " batch dimensions (besides the axis) that cannot be merged (strided); at most ",
                      kFwtMaxBatchDims, " are accepted");
  return p;
}

}  // namespace

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
// The block-diagonal transform: x and out seen with the axis split into (N / block, block), the
// inner one transformed (no pass of its own; the views' strides are the axis's).
void fwt_blocks(const ArrayView& x, const ArrayView& out, const FwtOptions& options, Stream stream) {
  const int nd = x.ndim();
  const int axis = options.axis < 0 ? options.axis + nd : options.axis;
  const bool strides_given = x.strides.size() == x.shape.size() && out.strides.size() == out.shape.size();
  if (nd < 1 || axis < 0 || axis >= nd || !strides_given) {
    FwtOptions whole = options;
    whole.block = 0;
    return ironkernels::fwt(x, out, whole, stream);  // make_plan's errors
  }
  const std::int64_t n = x.shape[axis], block = options.block;
  if (block < 1 || detail::hadamard_factor_of(block) == 0 || n % block != 0)
    raise<ValueError>("fwt: block = ", block, " for N = x.shape[", axis, "] = ", n, "; accepted: a divisor of N that "
                      "is 2^k or m·2^k (m = 12, 20, 28), or None for the whole axis");
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
  ironkernels::fwt(split(x), split(out), inner, stream);
}

}  // namespace

void fwt(const ArrayView& x, const ArrayView& out, const FwtOptions& options, Stream stream) {
  if (options.block != 0) return fwt_blocks(x, out, options, stream);
  const detail::FwtPlan plan = detail::make_plan(x, out, options);
  if (plan.rows == 0) return;
  if (plan.device.type == DeviceType::cpu) {
    detail::fwt_cpu(plan);
    return;
  }
#if IRONKERNELS_WITH_CUDA
  detail::fwt_cuda(plan, stream);
#else
  (void)stream;
#endif
}

}  // namespace ironkernels
