#pragma once
// Internal entry points of the lcn module: the evaluator with or without the validity checks, and
// the CUDA kernels (cuda/lcn/).
#include <cstdint>

#include "ironkernels/lcn.hpp"

#if IRONKERNELS_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace ironkernels::lcn::detail {
/// The argument checks every entry point shares, CPU and GPU alike (ValueError naming the item).
void check_vertex_coordinates(std::int64_t v, std::int64_t x, std::int64_t y);
void check_edge(std::int64_t e, std::int64_t s, std::int64_t t, std::int64_t n);
void check_vertex_index(std::int64_t v, std::int64_t n);
void check_position(std::int64_t x, std::int64_t y);
void check_candidates(const std::int64_t* xy, std::int64_t count);

/// The (count, 2) int64 C-contiguous host array `v` as pairs (TypeError/ValueError naming `name`).
std::int64_t* host_pairs(const ArrayView& v, const char* name);
/// count_crossings' checks of one array: int64, C-contiguous, (count, 2) or, for ndim 1, (m,).
void check_int64_array(const ArrayView& v, const char* name, int ndim);

/// The input checks of evaluate() (ValueError naming the vertex or edge).
void validate_input(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                    std::int64_t width, std::int64_t height);
Evaluation evaluate_impl(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                         std::int64_t width, std::int64_t height, bool with_validity, const Progress& progress = {});
#if IRONKERNELS_WITH_CUDA
/// validate_input's checks on device arrays (waits for `stream`; ValueError naming the first bad vertex,
/// else the first bad edge).
void validate_cuda(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m, Device device,
                   cudaStream_t stream);
/// counts[e] = crossings of edge e; xy (n×2), edges (m×2) and counts (m) in device memory. All pairs
/// up to 32768 edges, a uniform grid above (then it waits for `stream`).
void count_crossings_cuda(const std::int64_t* xy, const std::int64_t* edges, std::int64_t m, std::int64_t* counts,
                          Device device, cudaStream_t stream);
#endif
}  // namespace ironkernels::lcn::detail
