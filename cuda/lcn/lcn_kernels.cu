// Exact crossing counts of a grid drawing on the GPU: all pairs, tiled through shared memory.
// One thread per edge counts that edge's crossings with every other edge (no atomics, exact int64
// predicates: the same bound as the CPU evaluator, see ironkernels/lcn.hpp).
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_check.hpp"
#include "lcn/lcn_internal.hpp"

namespace ironkernels::lcn::detail {
namespace {

constexpr int kThreads = 256;

struct Seg {
  long long x0, y0, x1, y1;
  long long s, t;
};

// The same exact predicates as cpp/src/lcn/predicates.hpp (that bound holds here too).
__device__ __forceinline__ int orient(long long ax, long long ay, long long bx, long long by, long long cx, long long cy) {
  const long long d = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
  return (d > 0) - (d < 0);
}

__device__ __forceinline__ bool crosses(const Seg& a, const Seg& b) {
  if (a.s == b.s || a.s == b.t || a.t == b.s || a.t == b.t) return false;
  if (max(b.x0, b.x1) < min(a.x0, a.x1) || max(a.x0, a.x1) < min(b.x0, b.x1) || max(b.y0, b.y1) < min(a.y0, a.y1) ||
      max(a.y0, a.y1) < min(b.y0, b.y1))
    return false;
  const int o1 = orient(a.x0, a.y0, a.x1, a.y1, b.x0, b.y0), o2 = orient(a.x0, a.y0, a.x1, a.y1, b.x1, b.y1);
  if (o1 == 0 || o2 == 0 || o1 == o2) return false;
  const int o3 = orient(b.x0, b.y0, b.x1, b.y1, a.x0, a.y0), o4 = orient(b.x0, b.y0, b.x1, b.y1, a.x1, a.y1);
  return o3 != 0 && o4 != 0 && o3 != o4;
}

__device__ __forceinline__ Seg load_seg(const long long* xy, const long long* edges, long long e) {
  const long long s = edges[2 * e], t = edges[2 * e + 1];
  return {xy[2 * s], xy[2 * s + 1], xy[2 * t], xy[2 * t + 1], s, t};
}

__global__ void __launch_bounds__(kThreads) count_crossings_kernel(const long long* __restrict__ xy,
                                                                    const long long* __restrict__ edges, long long m,
                                                                    long long* __restrict__ counts) {
  __shared__ Seg tile[kThreads];
  const long long e = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  const bool active = e < m;
  const Seg mine = active ? load_seg(xy, edges, e) : Seg{0, 0, 0, 0, -1, -1};
  long long count = 0;
  for (long long base = 0; base < m; base += kThreads) {
    const long long f = base + threadIdx.x;
    if (f < m) tile[threadIdx.x] = load_seg(xy, edges, f);
    __syncthreads();
    const int len = static_cast<int>(m - base < kThreads ? m - base : kThreads);
    if (active)
      for (int j = 0; j < len; ++j) count += crosses(mine, tile[j]);
    __syncthreads();
  }
  if (active) counts[e] = count;
}

}  // namespace

void count_crossings_cuda(const std::int64_t* xy, const std::int64_t* edges, std::int64_t m, std::int64_t* counts,
                          cudaStream_t stream) {
  if (m == 0) return;
  const long long blocks = (m + kThreads - 1) / kThreads;
  count_crossings_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      reinterpret_cast<const long long*>(xy), reinterpret_cast<const long long*>(edges), m,
      reinterpret_cast<long long*>(counts));
  IK_CUDA_CHECK_LAUNCH("count_crossings_kernel");
}

}  // namespace ironkernels::lcn::detail
