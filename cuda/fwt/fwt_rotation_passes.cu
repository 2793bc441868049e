// The randomised and caller-given parts of a rotation on CUDA: the signs pass (y = D ∘ x along the
// lines) and the H_m pass of a caller's base matrix across the m blocks of 2^k (in place, after the
// blocks' own transforms). Both are element-wise over memory; the H_m pass does m operations per
// element, the matrix read by every warp at once (a broadcast).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/stream_workspace.hpp"
#include "core/cuda_check.hpp"
#include "fwt/fwt_line_launch.cuh"
#include "fwt/fwt_line_passes.hpp"
#include "fwt/fwt_plan.hpp"
#include "fwt/fwt_tile.cuh"
#include "fwt/fwt_values.cuh"
#include "ironkernels/core/runtime.hpp"

namespace ironkernels::detail {
namespace fwt_gpu {
namespace {

constexpr std::int64_t kSignChunk = 2048;  // elements of one line per block

// One block per chunk of a line: y = x, or its negation where signs[j] < 0 (floating values: the
// sign bit; integers: two's complement).
template <class U>
__global__ void __launch_bounds__(kLineThreads) fwt_signs_kernel(const KernelArgs a, std::int64_t n,
                                                                 const std::int8_t* signs, bool integer) {
  const U bit = U(1) << (8 * sizeof(U) - 1);
  const std::int64_t chunks = (n + kSignChunk - 1) / kSignChunk;
  for (std::int64_t item = blockIdx.x; item < a.rows * chunks; item += gridDim.x) {
    const std::int64_t r = item / chunks, begin = item % chunks * kSignChunk, end = min(begin + kSignChunk, n);
    std::int64_t xo, yo;
    row_offsets(a, r, xo, yo);
    const U* x = static_cast<const U*>(a.x) + xo;
    U* y = static_cast<U*>(a.y) + yo;
    for (std::int64_t j = begin + threadIdx.x; j < end; j += kLineThreads) {
      const U v = x[j * a.x_axis_stride];
      y[j * a.y_axis_stride] = signs[j] > 0 ? v : integer ? U(U(0) - v) : U(v ^ bit);
    }
  }
}

// Column b of line r (a thread's): the m elements b + j·2^k through the caller's H_m, scaled, in
// the order of the host's apply_factor (a running sum over j, then the scale), so the values are
// the host's bit for bit. The column's inputs wait in shared memory, z[j][thread].
template <class T>
__global__ void __launch_bounds__(kLineThreads) fwt_user_factor_kernel(const KernelArgs a, const std::int8_t* h, int m) {
  using C = typename Compute<T>::type;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  C* z = reinterpret_cast<C*>(smem_raw);
  const std::int64_t items = a.rows << a.log_n;
  const std::int64_t x_block = a.x_axis_stride << a.log_n, y_block = a.y_axis_stride << a.log_n;
  const C sc = scale_value<C>(a);
  const int t = threadIdx.x, threads = blockDim.x;
  for (std::int64_t i = blockIdx.x * std::int64_t(threads) + t; i < items; i += std::int64_t(gridDim.x) * threads) {
    const std::int64_t r = i >> a.log_n, b = i & ((std::int64_t(1) << a.log_n) - 1);
    std::int64_t xo, yo;
    row_offsets(a, r, xo, yo);
    const T* in = static_cast<const T*>(a.x) + xo + b * a.x_axis_stride;
    T* y = static_cast<T*>(a.y) + yo + b * a.y_axis_stride;
    for (int j = 0; j < m; ++j) {
      C o[1];
      VecIO<T, 1>::load(in + j * x_block, o);
      z[j * threads + t] = o[0];
    }
    for (int row = 0; row < m; ++row) {
      C sum = C(0);
      for (int j = 0; j < m; ++j) sum = __ldg(h + row * m + j) > 0 ? C(sum + z[j * threads + t]) : C(sum - z[j * threads + t]);
      const C o[1] = {a.scaled ? C(sum * sc) : sum};
      VecIO<T, 1>::store(y + row * y_block, o);
    }
  }
}

template <class T>
struct UserFactorLaunch {
  static void run(const LinePassArgs& pass, const std::int8_t* h, int m, cudaStream_t stream) {
    using C = typename Compute<T>::type;
    // As many threads as 48 KB of columns hold (a multiple of 32, 32 to kLineThreads); past that
    // (m > 192 for 8-byte values) one warp with the shared memory it needs.
    const int per_thread = m * int(sizeof(C));
    const int threads = std::clamp((48 * 1024 / per_thread) / 32 * 32, 32, kLineThreads);
    const int bytes = threads * per_thread;
    if (bytes > 48 * 1024)
      IK_CUDA_CHECK(cudaFuncSetAttribute(fwt_user_factor_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    const std::int64_t items = pass.lines.rows << pass.lines.log_n;
    const unsigned grid = unsigned(std::clamp<std::int64_t>((items + threads - 1) / threads, 1, std::int64_t(1) << 20));
    fwt_user_factor_kernel<T><<<grid, threads, bytes, stream>>>(pass.lines, h, m);
    IK_CUDA_CHECK_LAUNCH("fwt_user_factor_kernel");
  }
};

}  // namespace

void launch_user_factor_pass(DType dtype, const LinePassArgs& pass, const std::int8_t* h, int m, cudaStream_t stream) {
  switch (dtype) {
    case DType::float32: return UserFactorLaunch<float>::run(pass, h, m, stream);
    case DType::float16: return UserFactorLaunch<__half>::run(pass, h, m, stream);
    case DType::bfloat16: return UserFactorLaunch<__nv_bfloat16>::run(pass, h, m, stream);
    case DType::float64: return UserFactorLaunch<double>::run(pass, h, m, stream);
    case DType::int32: return UserFactorLaunch<std::uint32_t>::run(pass, h, m, stream);
    case DType::int64: return UserFactorLaunch<std::uint64_t>::run(pass, h, m, stream);
    default: raise<ValueError>("fwt: no H_m pass for ", dtype_name(dtype));
  }
}

}  // namespace fwt_gpu

void fwt_signs_cuda(const FwtPlan& p, std::int64_t n, const std::int8_t* signs, Stream stream_handle) {
  DeviceGuard guard(p.device);
  const auto stream = static_cast<cudaStream_t>(stream_handle);
  StreamWorkspace device_signs(std::size_t(n), stream);
  IK_CUDA_CHECK(cudaMemcpyAsync(device_signs.data(), signs, std::size_t(n), cudaMemcpyHostToDevice, stream));
  const fwt_gpu::KernelArgs a = fwt_gpu::make_args(p);
  const std::int64_t items = p.rows * ((n + fwt_gpu::kSignChunk - 1) / fwt_gpu::kSignChunk);
  const unsigned grid = unsigned(std::clamp<std::int64_t>(items, 1, std::int64_t(1) << 20));
  const auto* s = static_cast<const std::int8_t*>(device_signs.data());
  switch (dtype_size(p.dtype)) {
    case 2: fwt_gpu::fwt_signs_kernel<std::uint16_t><<<grid, fwt_gpu::kLineThreads, 0, stream>>>(a, n, s, false); break;
    case 4: fwt_gpu::fwt_signs_kernel<std::uint32_t><<<grid, fwt_gpu::kLineThreads, 0, stream>>>(a, n, s, p.is_integer()); break;
    default: fwt_gpu::fwt_signs_kernel<std::uint64_t><<<grid, fwt_gpu::kLineThreads, 0, stream>>>(a, n, s, p.is_integer());
  }
  IK_CUDA_CHECK_LAUNCH("fwt_signs_kernel");
}

}  // namespace ironkernels::detail
