// FWT entry point: argument validation (before anything is written), batch collapsing, dispatch.
#include "ironkernels/fwt.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/cpu_isa.hpp"
#include "core/threads.hpp"
#include "fwt/fwt_cpu.hpp"
#include "fwt/fwt_plan.hpp"
#include "ironkernels/core/error.hpp"

namespace ironkernels {
namespace detail {
namespace {

FwtPlan make_plan(const ArrayView& x, const ArrayView& out, const FwtOptions& opt) {
  switch (x.dtype) {
    case DType::float16:
    case DType::bfloat16:
    case DType::float32:
    case DType::float64: break;
    default: raise<TypeError>("fwt: x has unsupported dtype ", dtype_name(x.dtype),
                              "; accepted: float16, bfloat16, float32, float64");
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
  if (axis != nd - 1)
    raise<ValueError>("fwt: axis=", opt.axis, " is not supported yet; only the last axis (axis=-1) is");
  const std::int64_t n = x.shape[nd - 1];
  if (n < 1 || (n & (n - 1)) != 0)
    raise<ValueError>("fwt: the transform length N = x.shape[-1] = ", n, " must be a power of two >= 1");
  const int log_n = __builtin_ctzll(static_cast<unsigned long long>(n));
  const int max_log_n = x.device.type == DeviceType::cuda ? kFwtMaxLog2N : 30;
  if (log_n > max_log_n)
    raise<ValueError>("fwt: N = 2^", log_n, " is too large on ", device_name(x.device), "; accepted: N = 2^0 … 2^",
                      max_log_n);
  if (n > 1 && x.size() > 0 && (x.strides[nd - 1] != 1 || out.strides[nd - 1] != 1))
    raise<ValueError>("fwt: the transformed (last) axis must be contiguous (stride 1); x has stride ",
                      x.strides[nd - 1], ", out has stride ", out.strides[nd - 1]);
  if (x.device.type == DeviceType::cuda && !IRONKERNELS_WITH_CUDA)
    raise<UnsupportedError>("fwt: x is on ", device_name(x.device), " but this copy of ironkernels was built without CUDA");

  FwtPlan p;
  p.x = x.data;
  p.y = out.data;
  p.dtype = x.dtype;
  p.device = x.device;
  p.log_n = log_n;
  p.rows = x.size() / n;
  p.scale = opt.scale ? *opt.scale : (opt.normalized ? 1.0 / std::sqrt(static_cast<double>(n)) : 1.0);
  if (p.rows == 0) return p;

  if (!out.elements_distinct())
    raise<ValueError>("fwt: out repeats elements (a zero stride, or rows laid over each other: strides ",
                      strides_text(out), " for shape ", shape_text(out), "); accepted: an out whose elements are distinct");
  if (!x.same_layout(out) && x.overlaps(out)) {
    raise<ValueError>("fwt: out overlaps x without being the same array; pass out=x for in place, or a separate array");
  }

  // Collapse the batch dims (drop size-1 dims, merge dims that are contiguous in both x and out).
  std::vector<std::int64_t> shp, xs, ys;
  for (int d = 0; d < nd - 1; ++d) {
    if (x.shape[d] == 1) continue;
    if (!shp.empty() && xs.back() == x.shape[d] * x.strides[d] && ys.back() == x.shape[d] * out.strides[d]) {
      shp.back() *= x.shape[d];
      xs.back() = x.strides[d];
      ys.back() = out.strides[d];
    } else {
      shp.push_back(x.shape[d]);
      xs.push_back(x.strides[d]);
      ys.push_back(out.strides[d]);
    }
  }
  if (static_cast<int>(shp.size()) > kFwtMaxBatchDims)
    raise<ValueError>("fwt: x has ", shp.size(), " batch dimensions that cannot be merged (strided); at most ",
                      kFwtMaxBatchDims, " are accepted");
  p.batch_ndim = static_cast<int>(shp.size());
  for (int d = 0; d < p.batch_ndim; ++d) {
    p.batch_shape[d] = shp[d];
    p.x_stride[d] = xs[d];
    p.y_stride[d] = ys[d];
  }
  return p;
}

// `fn(args...)` of the CPU kernel variant active_cpu_isa() picks (one per x86 ISA level).
#if defined(IRONKERNELS_X86_ISAS)
#define IK_CPU_ISA_CALL(fn, ...)                                             \
  switch (active_cpu_isa()) {                                                \
    case CpuIsa::avx512: return cpu_avx512::fn(__VA_ARGS__);                 \
    case CpuIsa::avx2: return cpu_avx2::fn(__VA_ARGS__);                     \
    default: return cpu_baseline::fn(__VA_ARGS__);                           \
  }
#else
#define IK_CPU_ISA_CALL(fn, ...) return cpu_baseline::fn(__VA_ARGS__);
#endif

template <class T>
void fwt_rows_dispatch(T* y, std::int64_t rows, std::int64_t stride, int log_n, T scale) {
  IK_CPU_ISA_CALL(fwt_rows, y, rows, stride, log_n, scale)
}

// float32 / float64: copy the rows to out (unless in place), transform there. A one-dimensional
// batch goes to the kernel in one call (no per-row dispatch for short rows).
template <class T>
void cpu_rows_native(const FwtPlan& p, std::int64_t begin, std::int64_t end) {
  const std::int64_t n = std::int64_t(1) << p.log_n;
  const T* x = static_cast<const T*>(p.x);
  T* y = static_cast<T*>(p.y);
  const T scale = static_cast<T>(p.scale);
  for (std::int64_t r = begin; r < end; ++r) {
    std::int64_t xo, yo;
    p.row_offsets(r, xo, yo);
    if (x + xo != y + yo) std::memcpy(y + yo, x + xo, n * sizeof(T));
    if (p.batch_ndim > 1) fwt_rows_dispatch<T>(y + yo, 1, n, p.log_n, scale);
  }
  if (p.batch_ndim <= 1) {
    const std::int64_t stride = p.batch_ndim ? p.y_stride[0] : n;
    fwt_rows_dispatch<T>(y + begin * stride, end - begin, stride, p.log_n, scale);
  }
}

// float16 / bfloat16: widen to float32, transform, round once on the way back (per ISA: the
// conversions use F16C / AVX-512 where the CPU has them, bit for bit those of core/half.hpp).
void fwt_rows_16bit_dispatch(Format16 f, const std::uint16_t* x, std::int64_t xs, std::uint16_t* y,
                             std::int64_t ys, std::int64_t rows, int log_n, float scale) {
  IK_CPU_ISA_CALL(fwt_rows_16bit, f, x, xs, y, ys, rows, log_n, scale)
}

void cpu_rows_16bit(const FwtPlan& p, Format16 f, std::int64_t begin, std::int64_t end) {
  const std::int64_t n = std::int64_t(1) << p.log_n;
  const auto* x = static_cast<const std::uint16_t*>(p.x);
  auto* y = static_cast<std::uint16_t*>(p.y);
  const float scale = static_cast<float>(p.scale);
  if (p.batch_ndim <= 1) {
    const std::int64_t xs = p.batch_ndim ? p.x_stride[0] : n, ys = p.batch_ndim ? p.y_stride[0] : n;
    return fwt_rows_16bit_dispatch(f, x + begin * xs, xs, y + begin * ys, ys, end - begin, p.log_n, scale);
  }
  for (std::int64_t r = begin; r < end; ++r) {
    std::int64_t xo, yo;
    p.row_offsets(r, xo, yo);
    fwt_rows_16bit_dispatch(f, x + xo, n, y + yo, n, 1, p.log_n, scale);
  }
}

}  // namespace

void widen_16bit_active(Format16 f, const std::uint16_t* src, float* dst, std::int64_t n) {
  IK_CPU_ISA_CALL(widen_16bit, f, src, dst, n)
}
void round_16bit_active(Format16 f, const float* src, std::uint16_t* dst, std::int64_t n) {
  IK_CPU_ISA_CALL(round_16bit, f, src, dst, n)
}
#undef IK_CPU_ISA_CALL

void fwt_cpu(const FwtPlan& p) {
  const std::int64_t grain = std::max<std::int64_t>(1, (std::int64_t(1) << 16) >> p.log_n);
  auto body = [&](std::int64_t b, std::int64_t e) {
    switch (p.dtype) {
      case DType::float32: return cpu_rows_native<float>(p, b, e);
      case DType::float64: return cpu_rows_native<double>(p, b, e);
      case DType::float16: return cpu_rows_16bit(p, Format16::float16, b, e);
      case DType::bfloat16: return cpu_rows_16bit(p, Format16::bfloat16, b, e);
      case DType::int64: return;  // rejected by the plan
    }
  };
  parallel_for(p.rows, grain, body);
}

}  // namespace detail

void fwt(const ArrayView& x, const ArrayView& out, const FwtOptions& options, Stream stream) {
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
