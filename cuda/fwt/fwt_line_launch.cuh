#pragma once
// What the line passes' files share: the block size and grid of the element-wise passes, and the
// dispatch of a pass's launch over the dtypes it is built for.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "fwt/fwt_line_passes.hpp"
#include "fwt/fwt_tile.cuh"

namespace ironkernels::detail::fwt_gpu {

constexpr int kLineThreads = 256;

// Blocks of kLineThreads threads for `per_thread` elements each over the lines (at most 2^20; the
// kernels loop by the grid's stride).
inline unsigned line_grid(const LinePassArgs& pass, int per_thread) {
  const std::int64_t items = pass.lines.rows << pass.lines.log_n;
  const std::int64_t blocks = (items + kLineThreads * per_thread - 1) / (kLineThreads * per_thread);
  return static_cast<unsigned>(blocks < (1 << 20) ? (blocks > 0 ? blocks : 1) : (1 << 20));
}

// Launch<T>::run(a, stream) for the dtype's storage type (integers as unsigned).
template <template <class> class Launch>
inline void by_dtype(DType dtype, const LinePassArgs& a, cudaStream_t stream) {
  switch (dtype) {
    case DType::float32: return Launch<float>::run(a, stream);
    case DType::float16: return Launch<__half>::run(a, stream);
    case DType::bfloat16: return Launch<__nv_bfloat16>::run(a, stream);
    case DType::float64: return Launch<double>::run(a, stream);
    case DType::int32: return Launch<std::uint32_t>::run(a, stream);
    case DType::int64: return Launch<std::uint64_t>::run(a, stream);
    default: raise<ValueError>("fwt: no line pass for ", dtype_name(dtype));
  }
}

}  // namespace ironkernels::detail::fwt_gpu
