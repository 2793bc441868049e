#pragma once
// Internal entry points of the lcn module: the evaluator with or without the validity checks, and
// the CUDA kernels (cuda/lcn/).
#include <cstdint>

#include "ironkernels/lcn.hpp"

#if IRONKERNELS_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace ironkernels::lcn::detail {
Evaluation evaluate_impl(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                         std::int64_t width, std::int64_t height, bool with_validity);
#if IRONKERNELS_WITH_CUDA
/// counts[e] = crossings of edge e; xy (n×2), edges (m×2) and counts (m) in device memory.
void count_crossings_cuda(const std::int64_t* xy, const std::int64_t* edges, std::int64_t m, std::int64_t* counts,
                          cudaStream_t stream);
#endif
}  // namespace ironkernels::lcn::detail
