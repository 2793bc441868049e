// fwt_quantize on CUDA: the single-pass kernel (fwt_quantize_fused.cu) where it takes the call, else
// two passes: x rotated by the library's own CUDA fwt into a float32 workspace (float64 for float64
// input; 16-bit or signed rows widened and signed there first), then one kernel that gives each
// group its largest magnitude, scale and codes with the functions the host path calls
// (quantize_formats.hpp), on the device's rotation.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/stream_workspace.hpp"
#include "core/cuda_check.hpp"
#include "fwt/fwt_quantize_cuda.hpp"
#include "fwt/fwt_values.cuh"
#include "fwt/quantize_formats.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/fwt.hpp"

namespace ironkernels::detail {
namespace {
namespace qf = quant;

constexpr int kThreads = 256;

unsigned grid_for(std::int64_t items, std::int64_t per_block) {
  return unsigned(std::clamp<std::int64_t>((items + per_block - 1) / per_block, 1, std::int64_t(1) << 20));
}

// r = signs ∘ x, widened exactly (16-bit inputs) or copied.
template <class In, class Work>
__global__ void widen_signs_kernel(const In* x, Work* r, std::int64_t total, std::int64_t n, const std::int8_t* signs,
                                   bool bfloat) {
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    Work v;
    if constexpr (sizeof(In) == 2) v = fwt_gpu::widen_16bit(x[e], bfloat);
    else v = x[e];
    r[e] = signs && signs[e % n] < 0 ? -v : v;
  }
}

// nvfp4: the largest finite magnitude of the rotated tensor, as the bits of a non-negative float
// (whose order is the integers'): one atomic per block at most, and only where it raises the maximum
// so far (one per warp on one address serialised the pass).
template <class Work>
__global__ void tensor_amax_kernel(const Work* r, std::int64_t total, unsigned* amax_bits) {
  __shared__ float partials[kThreads / 32];
  float amax = 0.0f;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const float a = fabsf(float(r[e]));
    if (isfinite(a) && a > amax) amax = a;
  }
  for (int d = 16; d; d >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, d));
  if ((threadIdx.x & 31) == 0) partials[threadIdx.x >> 5] = amax;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < int(blockDim.x >> 5); ++w) amax = fmaxf(amax, partials[w]);
    if (amax > 0.0f && __float_as_uint(amax) > *static_cast<volatile unsigned*>(amax_bits))
      atomicMax(amax_bits, __float_as_uint(amax));
  }
}

struct QuantizeArgs {
  QuantFormat to;
  std::int64_t groups_total, groups, group;  // groups per row
  bool swizzled;
  std::uint8_t* q;
  void* scales;
  const unsigned* tensor_amax_bits;  // nvfp4: the rotated tensor's amax, where no global_amax is given
  float global_amax;                 // nvfp4: > 0, the caller's
  float* tensor_scale;               // nvfp4
};

// Each group on kLanes lanes of a warp (its length rounded up to a power of two, at most 32; groups
// of up to 16 share a warp; a compile-time count keeps the element loops' strides constant): its
// largest magnitude (NaN if it holds NaN or ±Inf, as the host's group_amax), the scale, then each
// element's code, two per byte where packed.
template <class Work, int kLanes>
__global__ void quantize_groups_kernel(const Work* r, QuantizeArgs a) {
  constexpr int per_warp = 32 / kLanes;
  const int lane = threadIdx.x & 31, sub = lane & (kLanes - 1);
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  const float encode =
      a.to == QuantFormat::nvfp4
          ? qf::tensor_encode_scale(a.global_amax > 0.0f ? a.global_amax : __uint_as_float(*a.tensor_amax_bits))
          : 1.0f;
  if (a.to == QuantFormat::nvfp4 && blockIdx.x == 0 && threadIdx.x == 0) *a.tensor_scale = 1.0f / encode;
  for (std::int64_t g0 = (std::int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32) * per_warp;
       g0 < a.groups_total; g0 += warps * per_warp) {  // (warp-uniform: every lane reaches the shuffles)
    const std::int64_t g = g0 + lane / kLanes;
    const bool live = kLanes == 32 || g < a.groups_total;
    const Work* v = r + g * a.group;
    float amax = 0.0f;
    int finite = 1;
    for (std::int64_t j = sub; live && j < a.group; j += kLanes) {
      const float m = fabsf(float(v[j]));
      finite &= isfinite(m);
      amax = m > amax ? m : amax;
    }
    for (int d = kLanes / 2; d; d >>= 1) {  // within the group's lanes
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, d));
      finite &= __shfl_xor_sync(0xffffffffu, finite, d);
    }
    if (!live) continue;
    const qf::GroupScale scale = qf::group_scale(a.to, finite ? amax : NAN, encode);
    if (sub == 0) {
      const std::int64_t row = g / a.groups, column = g % a.groups;
      const std::int64_t at = a.swizzled ? qf::swizzled_scale_index(row, column, a.groups) : g;
      if (qf::fixed_group(a.to)) static_cast<std::uint8_t*>(a.scales)[at] = scale.code;
      else static_cast<float*>(a.scales)[at] = scale.stored_value;
    }
    if (qf::packs_pairs(a.to)) {  // element 2i in the low nibble
      for (std::int64_t j = 2 * sub; j < a.group; j += 2 * kLanes)
        a.q[(g * a.group + j) / 2] = std::uint8_t(qf::element_code(a.to, float(v[j]), scale) |
                                                  (qf::element_code(a.to, float(v[j + 1]), scale) << 4));
    } else {
      for (std::int64_t j = sub; j < a.group; j += kLanes) a.q[g * a.group + j] = qf::element_code(a.to, float(v[j]), scale);
    }
  }
}

template <class Work>
void rotate_and_quantize(const ArrayView& x, const ArrayView& q, const ArrayView& scales,
                         const ArrayView& tensor_scale, const FwtQuantizeOptions& o, const QuantizeShape& s,
                         cudaStream_t stream) {
  const std::int64_t total = s.rows * s.n;
  StreamWorkspace work(std::size_t(total) * sizeof(Work), stream);
  StreamWorkspace signs(o.signs.data ? std::size_t(s.n) : 1, stream);
  StreamWorkspace amax(sizeof(unsigned), stream);
  auto* r = static_cast<Work*>(work.data());
  const std::int8_t* device_signs = nullptr;
  if (o.signs.data) {
    IK_CUDA_CHECK(cudaMemcpyAsync(signs.data(), o.signs.data, std::size_t(s.n), cudaMemcpyHostToDevice, stream));
    device_signs = static_cast<const std::int8_t*>(signs.data());
  }
  const unsigned grid = grid_for(total, kThreads * 8);
  const DType work_dtype = sizeof(Work) == 8 ? DType::float64 : DType::float32;
  // float32 / float64 rows without signs go straight into the transform (x → workspace); 16-bit
  // ones are widened first (the transform runs in float32 and rounds to its output type).
  const bool widen = device_signs || x.dtype != work_dtype;
  if (widen) {
    const bool bfloat = x.dtype == DType::bfloat16;
    switch (x.dtype) {
      case DType::float16:
      case DType::bfloat16:
        widen_signs_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const std::uint16_t*>(x.data), r, total, s.n,
                                                          device_signs, bfloat);
        break;
      case DType::float32:
        widen_signs_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const float*>(x.data), r, total, s.n,
                                                          device_signs, false);
        break;
      default:
        widen_signs_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const double*>(x.data), r, total, s.n,
                                                          device_signs, false);
    }
    IK_CUDA_CHECK_LAUNCH("widen_signs_kernel");
  }
  FwtOptions fo;
  fo.axis = -1, fo.block = o.block, fo.normalized = o.normalized, fo.hadamard = o.hadamard;
  const ArrayView rv = ArrayView::contiguous(r, work_dtype, {s.rows, s.n}, x.device);
  fwt(widen ? rv : ArrayView::contiguous(x.data, work_dtype, {s.rows, s.n}, x.device), rv, fo, stream);

  QuantizeArgs a{o.to, s.rows * (s.n / s.group), s.n / s.group, s.group, o.scale_layout == ScaleLayout::swizzled_128x4,
                 static_cast<std::uint8_t*>(q.data), scales.data,
                 static_cast<const unsigned*>(amax.data()), static_cast<float>(o.global_amax),
                 static_cast<float*>(tensor_scale.data)};
  if (a.swizzled)  // the tiles' padding is zeros
    IK_CUDA_CHECK(cudaMemsetAsync(scales.data, 0, std::size_t(scales.size()) * dtype_size(scales.dtype), stream));
  if (o.to == QuantFormat::nvfp4 && o.global_amax == 0.0) {
    IK_CUDA_CHECK(cudaMemsetAsync(amax.data(), 0, sizeof(unsigned), stream));
    tensor_amax_kernel<<<grid, kThreads, 0, stream>>>(r, total, static_cast<unsigned*>(amax.data()));
    IK_CUDA_CHECK_LAUNCH("tensor_amax_kernel");
  }
  const auto launch = [&](auto lanes) {
    quantize_groups_kernel<Work, lanes()><<<grid_for(a.groups_total, kThreads / lanes()), kThreads, 0, stream>>>(r, a);
  };
  if (s.group >= 32) launch(std::integral_constant<int, 32>{});
  else if (s.group > 8) launch(std::integral_constant<int, 16>{});
  else if (s.group > 4) launch(std::integral_constant<int, 8>{});
  else if (s.group > 2) launch(std::integral_constant<int, 4>{});
  else if (s.group > 1) launch(std::integral_constant<int, 2>{});
  else launch(std::integral_constant<int, 1>{});
  IK_CUDA_CHECK_LAUNCH("quantize_groups_kernel");
}

}  // namespace

void fwt_quantize_cuda(const ArrayView& x, const ArrayView& q, const ArrayView& scales, const ArrayView& tensor_scale,
                       const FwtQuantizeOptions& o, const QuantizeShape& shape, Stream stream) {
  DeviceGuard guard(x.device);
  auto s = static_cast<cudaStream_t>(stream);
  if (shape.rows == 0 || shape.n == 0) {
    if (o.to == QuantFormat::nvfp4) {  // as a zero tensor's
      static const float one = 1.0f;
      IK_CUDA_CHECK(cudaMemcpyAsync(tensor_scale.data, &one, sizeof one, cudaMemcpyHostToDevice, s));
    }
    return;
  }
  if (fwt_quantize_fused(x, q, scales, tensor_scale, o, shape, stream)) return;
  if (x.dtype == DType::float64) rotate_and_quantize<double>(x, q, scales, tensor_scale, o, shape, s);
  else rotate_and_quantize<float>(x, q, scales, tensor_scale, o, shape, s);
}

}  // namespace ironkernels::detail
