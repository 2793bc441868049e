// The two element-wise passes over the lines of a transform that the butterfly kernels do not do:
// the output orders (sequency, dyadic) as a gather of the input, z[j] = x[σ⁻¹(j)], before a
// natural-order transform, and the factor H_m of N = m·2^k (H_N = H_m ⊗ H_{2^k}) across the m
// blocks of 2^k after their own transforms. Both are memory-bound: one read and one write of each
// element, neighbouring threads on neighbouring elements of a line.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_check.hpp"
#include "fwt/fwt_line_passes.hpp"
#include "fwt/fwt_values.cuh"
#include "fwt/hadamard_factors.hpp"

namespace ironkernels::detail::fwt_gpu {
namespace {

constexpr int kLineThreads = 256;

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

// Column b of line r: the m elements b + j·2^k, j < M, through H_M, scaled, from x into y (in
// place after the blocks' transforms). The signs are compile-time constants (M² adds and
// subtracts, no selects).
template <class T, int M>
__global__ void __launch_bounds__(kLineThreads) fwt_factor_kernel(const LinePassArgs pass) {
  using C = typename Compute<T>::type;
  const KernelArgs& a = pass.lines;
  const std::int64_t items = a.rows << a.log_n;
  const std::int64_t x_block = a.x_axis_stride << a.log_n, y_block = a.y_axis_stride << a.log_n;
  for (std::int64_t i = blockIdx.x * std::int64_t(kLineThreads) + threadIdx.x; i < items;
       i += std::int64_t(gridDim.x) * kLineThreads) {
    const std::int64_t r = i >> a.log_n, b = i & ((std::int64_t(1) << a.log_n) - 1);
    std::int64_t xo, yo;
    row_offsets(a, r, xo, yo);
    const T* in = static_cast<const T*>(a.x) + xo + b * a.x_axis_stride;
    T* y = static_cast<T*>(a.y) + yo + b * a.y_axis_stride;
    C x[M][1];
#pragma unroll
    for (int j = 0; j < M; ++j) VecIO<T, 1>::load(in + j * x_block, x[j]);
    const C sc = scale_value<C>(a);
#pragma unroll
    for (int j = 0; j < M; ++j) {
      C acc = C(0);
#pragma unroll
      for (int c = 0; c < M; ++c) acc = hadamard_factor_entry(M, j, c) < 0 ? acc - x[c][0] : acc + x[c][0];
      C out[1] = {a.scaled ? acc * sc : acc};
      VecIO<T, 1>::store(y + j * y_block, out);
    }
  }
}

unsigned line_grid(const LinePassArgs& pass, int per_thread) {
  const std::int64_t items = pass.lines.rows << pass.lines.log_n;
  const std::int64_t blocks = (items + kLineThreads * per_thread - 1) / (kLineThreads * per_thread);
  return static_cast<unsigned>(blocks < (1 << 20) ? (blocks > 0 ? blocks : 1) : (1 << 20));
}

template <class T>
void launch_order(const LinePassArgs& pass, cudaStream_t stream) {
  fwt_order_kernel<T><<<line_grid(pass, kOrderItems), kLineThreads, 0, stream>>>(pass);
  IK_CUDA_CHECK_LAUNCH("fwt_order_kernel");
}

template <class T>
void launch_factor(const LinePassArgs& pass, cudaStream_t stream) {
  const unsigned grid = line_grid(pass, 1);
  switch (pass.factor) {
    case 12: fwt_factor_kernel<T, 12><<<grid, kLineThreads, 0, stream>>>(pass); break;
    case 20: fwt_factor_kernel<T, 20><<<grid, kLineThreads, 0, stream>>>(pass); break;
    case 28: fwt_factor_kernel<T, 28><<<grid, kLineThreads, 0, stream>>>(pass); break;
    default: raise<ValueError>("fwt: internal error: no H_", pass.factor);
  }
  IK_CUDA_CHECK_LAUNCH("fwt_factor_kernel");
}

template <template <class> class Launch>
void by_dtype(DType dtype, const LinePassArgs& a, cudaStream_t stream) {
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
template <class T>
struct OrderLaunch {
  static void run(const LinePassArgs& a, cudaStream_t s) { launch_order<T>(a, s); }
};
template <class T>
struct FactorLaunch {
  static void run(const LinePassArgs& a, cudaStream_t s) { launch_factor<T>(a, s); }
};

}  // namespace

void launch_order_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream) { by_dtype<OrderLaunch>(dtype, a, stream); }
void launch_factor_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream) { by_dtype<FactorLaunch>(dtype, a, stream); }

}  // namespace ironkernels::detail::fwt_gpu
