// fwt_quantize's single pass on CUDA: which calls it takes, its arguments and launches (the kernel:
// fwt_quantize_fused.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/stream_workspace.hpp"
#include "core/cuda_check.hpp"
#include "core/dev_overrides.hpp"
#include "fwt/fwt_quantize_cuda.hpp"
#include "fwt/fwt_quantize_fused.cuh"
#include "fwt/hadamard_factors.hpp"
#include "ironkernels/core/runtime.hpp"

namespace ironkernels::detail {
namespace {
using quantize_fused::FusedArgs;
using quantize_fused::kMaxLogSpan;

bool is_power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
int log2_of(std::int64_t v) { return 63 - __builtin_clzll(static_cast<unsigned long long>(v)); }
bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace

bool fwt_quantize_fused(const ArrayView& x, const ArrayView& q, const ArrayView& scales, const ArrayView& tensor_scale,
                        const FwtQuantizeOptions& o, const QuantizeShape& s, Stream stream_handle) {
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  // IRONKERNELS_FWT_QUANTIZE_TWO_PASS=1 (tests, bench): the two-pass path for every call.
  static const bool two_pass = dev_override_int("IRONKERNELS_FWT_QUANTIZE_TWO_PASS", 0) != 0;
  const std::int64_t l = o.block ? o.block : s.n;
  if (two_pass || o.hadamard.data || x.dtype == DType::float64 || !is_power_of_two(s.group)) return false;
  const int factor = hadamard_factor_of(l);  // 1, or m of m·2^k
  const std::int64_t chunk = l / std::max(factor, 1);  // the rotation's power-of-two part
  int e = 16;
  std::int64_t span = 0;  // a block's elements
  if (factor == 1) {
    const std::int64_t span_bits = std::max(log2_of(l), log2_of(s.group));
    if (span_bits > kMaxLogSpan) return false;
    e = span_bits > 13 ? 32 : 16;
    // The rotation and the group, and at least 256 threads' runs where they are shorter.
    span = std::max<std::int64_t>(std::int64_t(1) << span_bits, 256 * e);
  } else {
    // m·2^k, in runs of 32: blocks of 2^k of at least 32 (a run; a warp's columns) holding the
    // groups; a power of two of whole rotations per block, their 2^k parts at least 512 together
    // (whole warps), at most 16384 elements (the span in shared memory).
    if (factor == 0 || chunk < 32 || s.group > chunk) return false;
    std::int64_t rotations = 1;
    while (rotations * chunk < 512) rotations *= 2;
    span = rotations * l;
    if (span > 16384) return false;
    e = 32;
  }
  if (s.n % e != 0 || !aligned16(x.data) || !aligned16(q.data)) return false;

  StreamWorkspace signs(o.signs.data ? std::size_t(s.n) : 1, stream);
  StreamWorkspace amax(sizeof(unsigned), stream);
  FusedArgs a{};
  a.x = x.data;
  if (o.signs.data) {
    IK_CUDA_CHECK(cudaMemcpyAsync(signs.data(), o.signs.data, std::size_t(s.n), cudaMemcpyHostToDevice, stream));
    a.signs = static_cast<const std::int8_t*>(signs.data());
  }
  a.n = s.n, a.total = s.rows * s.n;
  a.log_l = log2_of(chunk), a.log_g = log2_of(s.group), a.factor = std::max(factor, 1);
  a.scaled = o.normalized && l > 1;
  a.scale = a.scaled ? float(1.0 / std::sqrt(double(l))) : 1.0f;
  a.bfloat = x.dtype == DType::bfloat16;
  a.to = o.to;
  a.swizzled = o.scale_layout == ScaleLayout::swizzled_128x4;
  a.q = static_cast<std::uint8_t*>(q.data);
  a.scales = scales.data;
  a.amax_bits = static_cast<unsigned*>(amax.data());
  a.global_amax = static_cast<float>(o.global_amax);
  a.tensor_scale = static_cast<float*>(tensor_scale.data);
  if (a.swizzled)  // the tiles' padding is zeros
    IK_CUDA_CHECK(cudaMemsetAsync(scales.data, 0, std::size_t(scales.size()) * dtype_size(scales.dtype), stream));
  auto run = [&](const FusedArgs& args) {
    namespace qz = quantize_fused;
    const bool wide = x.dtype == DType::float32;
    if (e == 16)
      return wide ? qz::launch_by_format<float, 16>(args, span, stream)
                  : qz::launch_by_format<std::uint16_t, 16>(args, span, stream);
    return wide ? qz::launch_by_format<float, 32>(args, span, stream)
                : qz::launch_by_format<std::uint16_t, 32>(args, span, stream);
  };
  if (o.to == QuantFormat::nvfp4 && o.global_amax == 0.0) {
    IK_CUDA_CHECK(cudaMemsetAsync(amax.data(), 0, sizeof(unsigned), stream));
    FusedArgs pass = a;
    pass.amax_only = true;
    run(pass);
  }
  run(a);
  return true;
}

}  // namespace ironkernels::detail
