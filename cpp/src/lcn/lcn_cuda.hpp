#pragma once
// CUDA entry points of the lcn module (cuda/lcn/).
#include <cuda_runtime.h>

#include <cstdint>

namespace ironkernels::lcn::detail {
/// counts[e] = crossings of edge e; xy (n×2), edges (m×2) and counts (m) in device memory.
void count_crossings_cuda(const std::int64_t* xy, const std::int64_t* edges, std::int64_t m, std::int64_t* counts,
                          cudaStream_t stream);
}  // namespace ironkernels::lcn::detail
