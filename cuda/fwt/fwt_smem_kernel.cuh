#pragma once
// The FWT's shared-memory kernel for any layout, fwt_smem_kernel.
#include <cuda_runtime.h>

#include <cstdint>

#include "fwt/fwt_values.cuh"

namespace ironkernels::detail::fwt_gpu {

// Fallback for data the vector path cannot take (misaligned pointers, strides that are not a
// multiple of 16 bytes, rows shorter than a vector that are not packed, batches whose dims do not
// collapse to one uniform stride): scalar, coalesced loads into
// shared memory and every stage there. Correct for any layout; not the fast path.
constexpr int kSmemThreads = 256;
constexpr int kSmemMinTileBits = 11;

template <class T>
__global__ void __launch_bounds__(kSmemThreads) fwt_smem_kernel(const KernelArgs a, int tile_bits) {
  using C = typename Compute<T>::type;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  C* smem = reinterpret_cast<C*>(smem_raw);
  const int log_n = a.log_n, tile = 1 << tile_bits;
  const std::int64_t n_mask = (std::int64_t(1) << log_n) - 1;
  const std::int64_t row0 = std::int64_t(blockIdx.x) << (tile_bits - log_n);
  for (int i = threadIdx.x; i < tile; i += kSmemThreads) {
    const std::int64_t row = row0 + (i >> log_n);
    C v[1] = {C(0)};
    if (row < a.rows) {
      std::int64_t xo, yo;
      row_offsets(a, row, xo, yo);
      VecIO<T, 1>::load(static_cast<const T*>(a.x) + xo + (i & n_mask) * a.x_axis_stride, v);
    }
    smem[i] = v[0];
  }
  for (int b = 0; b < log_n; ++b) {
    __syncthreads();
    for (int p = threadIdx.x; p < tile / 2; p += kSmemThreads) {
      const int lo = ((p >> b) << (b + 1)) | (p & ((1 << b) - 1));
      bfly(smem[lo], smem[lo | (1 << b)]);
    }
  }
  __syncthreads();
  const C sc = scale_value<C>(a);
  for (int i = threadIdx.x; i < tile; i += kSmemThreads) {
    const std::int64_t row = row0 + (i >> log_n);
    if (row < a.rows) {
      std::int64_t xo, yo;
      row_offsets(a, row, xo, yo);
      const C v[1] = {smem[i] * sc};
      VecIO<T, 1>::store(static_cast<T*>(a.y) + yo + (i & n_mask) * a.y_axis_stride, v);
    }
  }
}

}  // namespace ironkernels::detail::fwt_gpu
