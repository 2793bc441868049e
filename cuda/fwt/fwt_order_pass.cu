// The output orders (sequency, dyadic) on CUDA: a gather of the input, z[j] = x[σ⁻¹(j)], before a
// natural-order transform. Memory-bound: one read and one write of each element, neighbouring
// threads on neighbouring outputs of a line.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_check.hpp"
#include "fwt/fwt_line_launch.cuh"
#include "fwt/fwt_line_passes.hpp"
#include "fwt/fwt_values.cuh"

namespace ironkernels::detail::fwt_gpu {
namespace {

// σ⁻¹(j) for σ(k), the natural index of output k in sequency or dyadic order (natural_index in
// fwt.cpp: the bits of k, or of its Gray code, reversed over log_n bits): j's bits reversed, then
// (sequency) the inverse Gray code, a prefix xor.
__device__ __forceinline__ std::uint32_t inverse_order_index(std::uint32_t j, int log_n, bool sequency) {
  if (log_n == 0) return 0;
  std::uint32_t g = __brev(j) >> (32 - log_n);
  if (sequency)
    for (int s = 1; s < 32; s <<= 1) g ^= g >> s;
  return g;
}

// Each thread gathers kOrderItems outputs a block apart, all loads before the stores (enough bytes
// in flight per thread for the memory system; one element per thread leaves it latency-bound).
constexpr int kOrderItems = 8;

template <class T>
__global__ void __launch_bounds__(kLineThreads) fwt_order_kernel(const LinePassArgs pass) {
  const KernelArgs& a = pass.lines;
  const std::int64_t items = a.rows << a.log_n, mask = (std::int64_t(1) << a.log_n) - 1;
  const T* src = static_cast<const T*>(a.x);
  T* dst = static_cast<T*>(a.y);
  for (std::int64_t base = blockIdx.x * std::int64_t(kLineThreads * kOrderItems); base < items;
       base += std::int64_t(gridDim.x) * kLineThreads * kOrderItems) {
    T v[kOrderItems];
    std::int64_t to[kOrderItems];
#pragma unroll
    for (int j = 0; j < kOrderItems; ++j) {
      const std::int64_t i = base + j * kLineThreads + threadIdx.x;
      to[j] = -1;
      if (i >= items) continue;
      const std::uint32_t k = static_cast<std::uint32_t>(i & mask);
      std::int64_t xo, yo;
      row_offsets(a, i >> a.log_n, xo, yo);
      v[j] = src[xo + std::int64_t(inverse_order_index(k, a.log_n, pass.sequency)) * a.x_axis_stride];
      to[j] = yo + k * a.y_axis_stride;
    }
#pragma unroll
    for (int j = 0; j < kOrderItems; ++j)
      if (to[j] >= 0) dst[to[j]] = v[j];
  }
}

template <class T>
void launch_order(const LinePassArgs& pass, cudaStream_t stream) {
  fwt_order_kernel<T><<<line_grid(pass, kOrderItems), kLineThreads, 0, stream>>>(pass);
  IK_CUDA_CHECK_LAUNCH("fwt_order_kernel");
}

template <class T>
struct OrderLaunch {
  static void run(const LinePassArgs& a, cudaStream_t s) { launch_order<T>(a, s); }
};

}  // namespace

void launch_order_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream) { by_dtype<OrderLaunch>(dtype, a, stream); }

}  // namespace ironkernels::detail::fwt_gpu
