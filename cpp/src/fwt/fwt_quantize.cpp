// fwt_quantize: validation of every argument before a byte is written; on the host the rotation in
// float32 through fwt() (float64 input in float64, then rounded once) and each group's scale and
// codes from quantize_formats.hpp; CUDA arrays go to cuda/fwt/fwt_quantize.cu.
#include "ironkernels/fwt_quantize.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/half.hpp"
#include "core/threads.hpp"
#include "fwt/fwt_cpu.hpp"
#include "fwt/fwt_plan.hpp"
#include "fwt/fwt_quantize_cuda.hpp"
#include "fwt/hadamard_factors.hpp"
#include "fwt/quantize_formats.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/fwt.hpp"

namespace ironkernels {
namespace {
namespace qf = detail::quant;

const char* format_name(QuantFormat f) {
  switch (f) {
    case QuantFormat::float8_e4m3fn: return "float8_e4m3fn";
    case QuantFormat::float8_e5m2: return "float8_e5m2";
    case QuantFormat::int8: return "int8";
    case QuantFormat::int4: return "int4";
    case QuantFormat::mxfp4: return "mxfp4";
    case QuantFormat::nvfp4: return "nvfp4";
  }
  raise<ValueError>("fwt_quantize: unknown format");
}

std::vector<std::int64_t> with_last(const ArrayView& x, std::int64_t last) {
  std::vector<std::int64_t> s = x.shape;
  s.back() = last;
  return s;
}

void check_output(const ArrayView& v, const char* name, DType dtype, const std::vector<std::int64_t>& shape,
                  const ArrayView& x) {
  if (v.dtype != dtype)
    raise<TypeError>("fwt_quantize: ", name, " has dtype ", dtype_name(v.dtype), "; accepted: ", dtype_name(dtype));
  if (v.shape != shape) {
    ArrayView want;
    want.shape = shape;
    raise<ValueError>("fwt_quantize: ", name, " has shape ", shape_text(v), "; accepted: ", shape_text(want));
  }
  if (v.size() && !v.is_c_contiguous())  // (an empty array's strides are whatever its producer wrote)
    raise<ValueError>("fwt_quantize: ", name, " is not C-contiguous; accepted: C-contiguous arrays");
  if (v.device != x.device)
    raise<ValueError>("fwt_quantize: ", name, " is on ", device_name(v.device), " but x is on ", device_name(x.device),
                      "; they must be on one device");
  if (v.overlaps(x)) raise<ValueError>("fwt_quantize: ", name, " overlaps x; accepted: a separate array");
}

// The rotated rows in float32: x widened (16-bit exactly; float64 rotated in float64, rounded once).
std::vector<float> rotate(const ArrayView& x, std::int64_t rows, std::int64_t n, const FwtQuantizeOptions& o) {
  FwtOptions fo;
  fo.axis = -1, fo.block = o.block, fo.normalized = o.normalized, fo.hadamard = o.hadamard, fo.signs = o.signs;
  std::vector<float> r(static_cast<std::size_t>(rows * n));
  if (x.dtype == DType::float64) {
    std::vector<double> w(static_cast<const double*>(x.data), static_cast<const double*>(x.data) + rows * n);
    ArrayView wv = ArrayView::contiguous(w.data(), DType::float64, {rows, n});
    fwt(wv, wv, fo);
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<float>(w[i]);
    return r;
  }
  if (x.dtype == DType::float32) {
    std::memcpy(r.data(), x.data, r.size() * sizeof(float));
  } else {
    const auto f = x.dtype == DType::float16 ? detail::Format16::float16 : detail::Format16::bfloat16;
    detail::widen_16bit_active(f, static_cast<const std::uint16_t*>(x.data), r.data(), rows * n);
  }
  ArrayView rv = ArrayView::contiguous(r.data(), DType::float32, {rows, n});
  fwt(rv, rv, fo);
  return r;
}

// The largest magnitude of v[0, count), NaN if any element is NaN or infinite.
float group_amax(const float* v, std::int64_t count) {
  float amax = 0.0f;
  bool finite = true;
  for (std::int64_t j = 0; j < count; ++j) {
    const float a = std::fabs(v[j]);
    finite &= std::isfinite(a);
    amax = a > amax ? a : amax;
  }
  return finite ? amax : NAN;
}

}  // namespace

void fwt_quantize(const ArrayView& x, const ArrayView& q, const ArrayView& scales, const ArrayView& tensor_scale,
                  const FwtQuantizeOptions& options, Stream stream) {
  FwtQuantizeOptions o = options;  // (its signs become a checked contiguous copy below)
  const char* format = format_name(o.to);
  const bool packed = qf::packs_pairs(o.to);
  const int fixed_group = qf::fixed_group(o.to);
  if (x.dtype != DType::float16 && x.dtype != DType::bfloat16 && x.dtype != DType::float32 && x.dtype != DType::float64)
    raise<TypeError>("fwt_quantize: x has dtype ", dtype_name(x.dtype), "; accepted: float16, bfloat16, float32, float64");
  if (x.ndim() < 1) raise<ValueError>("fwt_quantize: x must have at least one dimension, got a scalar");
  for (const ArrayView* v : {&x, &q, &scales, &tensor_scale, &options.signs, &options.hadamard})
    if (v->strides.size() != v->shape.size()) raise<ValueError>("fwt_quantize: an array's strides and shape lengths differ");
  if (x.size() && !x.is_c_contiguous())
    raise<ValueError>("fwt_quantize: x is not C-contiguous (strides ", strides_text(x), "); accepted: C-contiguous rows");
  const std::int64_t n = x.shape.back(), rows = n ? x.size() / n : 0;
  const std::int64_t rotation = o.block ? o.block : n;
  if (o.hadamard.data) {
    detail::checked_factor_matrix(o.hadamard, false, "fwt_quantize");
    const std::int64_t m = o.hadamard.shape[0];  // (checked square)
    if (m < 1 || rotation % m != 0 || ((rotation / m) & (rotation / m - 1)) != 0 || n % rotation != 0)
      raise<ValueError>("fwt_quantize: the rotation's length ", rotation, " (block, else N = x.shape[-1]) for N = ", n,
                        " and a hadamard of shape ", shape_text(o.hadamard), "; accepted: m·2^k dividing N, m the hadamard's order");
  } else if (rotation < 1 || detail::hadamard_factor_of(rotation) == 0 || n % rotation != 0) {
    raise<ValueError>("fwt_quantize: the rotation's length ", rotation, " (block, else N = x.shape[-1]) for N = ", n,
                      "; accepted: 2^k or m·2^k (m = 12, 20, 28) dividing N");
  }
  std::int64_t group = o.group ? o.group : (fixed_group ? fixed_group : n);
  if (fixed_group && group != fixed_group)
    raise<ValueError>("fwt_quantize: group = ", o.group, " for ", format, ", whose blocks are ", fixed_group,
                      "; accepted: None or ", fixed_group);
  if (group < 1 || n % group != 0 || (packed && group % 2 != 0))
    raise<ValueError>("fwt_quantize: group = ", group, " for N = ", n, "; accepted: a divisor of N",
                      packed ? " that is even (two values per byte)" : "");
  std::vector<std::int8_t> signs;
  if (o.signs.data) {
    signs = detail::checked_signs(o.signs, n, "fwt_quantize");
    o.signs = ArrayView::contiguous(signs.data(), DType::int8, {n});
  }
  check_output(q, "q", o.to == QuantFormat::int8 ? DType::int8 : DType::uint8, with_last(x, packed ? n / 2 : n), x);
  const DType scale_dtype = fixed_group ? DType::uint8 : DType::float32;
  const std::int64_t groups = n / group;
  const bool swizzled = o.scale_layout == ScaleLayout::swizzled_128x4;
  const std::int64_t tiled = ((rows + 127) / 128 * 128) * ((groups + 3) / 4 * 4);
  check_output(scales, "scales", scale_dtype, swizzled ? std::vector<std::int64_t>{tiled} : with_last(x, groups), x);
  if (o.to == QuantFormat::nvfp4) check_output(tensor_scale, "tensor_scale", DType::float32, {1}, x);
  if (o.global_amax != 0.0 && (o.to != QuantFormat::nvfp4 || !(o.global_amax > 0.0) ||
                               !(o.global_amax <= 3.4028234663852886e38)))
    raise<ValueError>("fwt_quantize: global_amax = ", o.global_amax, " for ", format,
                      "; accepted: a positive finite float32 value, for nvfp4 only (or 0: the tensor's own)");
  if (q.overlaps(scales) || (o.to == QuantFormat::nvfp4 && (tensor_scale.overlaps(q) || tensor_scale.overlaps(scales))))
    raise<ValueError>("fwt_quantize: q, scales and tensor_scale overlap; accepted: separate arrays");
  if (x.device.type == DeviceType::cuda) {
#if IRONKERNELS_WITH_CUDA
    return detail::fwt_quantize_cuda(x, q, scales, tensor_scale, o, {rows, n, group}, stream);
#else
    raise<UnsupportedError>("fwt_quantize: x is on ", device_name(x.device),
                            " but this copy of ironkernels was built without CUDA");
#endif
  }
  if (rows == 0 || n == 0) {
    if (o.to == QuantFormat::nvfp4) *static_cast<float*>(tensor_scale.data) = 1.0f;  // as a zero tensor's
    return;
  }

  const std::vector<float> r = rotate(x, rows, n, o);
  // nvfp4: the tensor's encode scale from the largest finite magnitude, and its decode scale, stored.
  float encode = 1.0f;
  if (o.to == QuantFormat::nvfp4) {
    float amax = static_cast<float>(o.global_amax);
    if (o.global_amax == 0.0)
      for (float v : r) amax = std::isfinite(v) && std::fabs(v) > amax ? std::fabs(v) : amax;
    encode = qf::tensor_encode_scale(amax);
    *static_cast<float*>(tensor_scale.data) = 1.0f / encode;
  }
  // The scales row-major; swizzled ones are placed afterwards (a permutation of rows·groups entries).
  std::vector<std::uint32_t> staged(swizzled ? std::size_t(rows * groups) : 0);
  auto* scale_out = swizzled ? static_cast<void*>(staged.data()) : scales.data;
  detail::parallel_for(rows * groups, 64, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t g = b; g < e; ++g) {
      const float* v = r.data() + g * group;  // groups are consecutive: row-major (rows, groups, group)
      const qf::GroupScale scale = qf::group_scale(o.to, group_amax(v, group), encode);
      if (fixed_group) static_cast<std::uint8_t*>(scale_out)[g] = scale.code;
      else static_cast<float*>(scale_out)[g] = scale.stored_value;
      auto* codes = static_cast<std::uint8_t*>(q.data);
      if (packed) {  // element 2i in the low nibble
        for (std::int64_t j = 0; j < group; j += 2)
          codes[(g * group + j) / 2] = std::uint8_t(qf::element_code(o.to, v[j], scale) |
                                                    (qf::element_code(o.to, v[j + 1], scale) << 4));
      } else {
        for (std::int64_t j = 0; j < group; ++j) codes[g * group + j] = qf::element_code(o.to, v[j], scale);
      }
    }
  });
  if (swizzled) {
    const std::size_t bytes = dtype_size(scale_dtype);
    auto* dst = static_cast<unsigned char*>(scales.data);
    std::memset(dst, 0, std::size_t(tiled) * bytes);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < groups; ++c)
        std::memcpy(dst + qf::swizzled_scale_index(r, c, groups) * bytes,
                    reinterpret_cast<const unsigned char*>(staged.data()) + (r * groups + c) * bytes, bytes);
  }
}

}  // namespace ironkernels
