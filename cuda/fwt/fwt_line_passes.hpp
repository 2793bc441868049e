#pragma once
// Host side of fwt_line_passes.cu: the output orders as a gather of the input before the
// transform, and the factor H_m of N = m·2^k as a pass across the m blocks of each line.
#include <cuda_runtime.h>

#include <cstdint>

#include "fwt/fwt_plan.hpp"

namespace ironkernels::detail::fwt_gpu {

struct LinePassArgs {
  const void* src;  // order: x (dst[j] = src[σ⁻¹(j)]); factor: the blocks' transforms (x when k = 0)
  void* dst;
  std::int64_t rows;  // lines
  int batch_ndim;     // of the lines' starts, outer to inner
  std::int64_t shape[kFwtBatchCapacity];
  std::int64_t src_stride[kFwtBatchCapacity];
  std::int64_t dst_stride[kFwtBatchCapacity];
  std::int64_t src_axis_stride, dst_axis_stride;
  int log_len;    // order: log2 N; factor: k, the 2^k columns of each line
  bool sequency;  // order: sequency, else dyadic
  int factor;     // factor: m = 12, 20, 28
  double scale;
  std::uint64_t int_scale;
  bool scaled;
};

void launch_order_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream);
void launch_factor_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream);

}  // namespace ironkernels::detail::fwt_gpu
