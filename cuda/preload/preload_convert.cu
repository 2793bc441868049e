// The drop-in's element passes for ZGEMM and SGEMM (preload_convert.hpp). The passes between a
// column-major and a row-major matrix go through 32 × 32 tiles in shared memory, each side read and
// written along its contiguous dimension. Complex products round every operation on its own
// (explicit _rn intrinsics: no contraction into FMAs), as gemm's Python path writes them.
#include <algorithm>

#include "common/float_bits.cuh"
#include "preload_convert.hpp"

namespace ironkernels::preload {
namespace {

constexpr int kTile = 32, kTileRows = 8;  // a tile, and the rows of threads that move it

// Each tile of a rows × cols matrix: op.in(r, c) reads it from the input side (column-major where
// kFromColumns, so threadIdx.x walks r; row-major otherwise), op.out(r, c, v) writes the other side.
template <bool kFromColumns, class Op>
__global__ void tile_kernel(Op op, std::int64_t rows, std::int64_t cols) {
  __shared__ typename Op::Value tile[kTile][kTile + 1];
  const std::int64_t r0 = std::int64_t(blockIdx.x) * kTile, col_tiles = (cols + kTile - 1) / kTile;
  for (std::int64_t t = blockIdx.y; t < col_tiles; t += gridDim.y) {
    const std::int64_t c0 = t * kTile;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const int lr = kFromColumns ? int(threadIdx.x) : j, lc = kFromColumns ? j : int(threadIdx.x);
      if (r0 + lr < rows && c0 + lc < cols) tile[lr][lc] = op.in(r0 + lr, c0 + lc);
    }
    __syncthreads();
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const int lr = kFromColumns ? j : int(threadIdx.x), lc = kFromColumns ? int(threadIdx.x) : j;
      if (r0 + lr < rows && c0 + lc < cols) op.out(r0 + lr, c0 + lc, tile[lr][lc]);
    }
    __syncthreads();
  }
}

template <bool kFromColumns, class Op>
cudaError_t tiles(const Op& op, std::int64_t rows, std::int64_t cols, cudaStream_t s) {
  if (rows == 0 || cols == 0) return cudaSuccess;
  const dim3 grid(unsigned((rows + kTile - 1) / kTile),
                  unsigned(std::min<std::int64_t>((cols + kTile - 1) / kTile, 65535)));
  tile_kernel<kFromColumns><<<grid, dim3(kTile, kTileRows), 0, s>>>(op, rows, cols);
  return cudaGetLastError();
}

struct StackOp {
  using Value = double2;
  const double2* src;
  std::int64_t ld, ld_out, col_step, second_at;  // (r, c)'s first half at r·ld_out + c·col_step, its second second_at on
  Stack to;
  __device__ Value in(std::int64_t r, std::int64_t c) const { return src[r + c * ld]; }
  __device__ static double part(double2 v, Half h) {
    const double p = h.imag ? v.y : v.x;
    return h.negate ? detail::negated(p) : p;
  }
  __device__ void out(std::int64_t r, std::int64_t c, double2 v) const {
    const std::int64_t at = r * ld_out + c * col_step;
    to.data[at] = part(v, to.first);
    to.data[at + second_at] = part(v, to.second);
  }
};

__device__ double2 multiply(double2 a, double2 b) {  // (a + bi)(c + di) = (ac − bd) + (ad + bc)i
  return make_double2(__dsub_rn(__dmul_rn(a.x, b.x), __dmul_rn(a.y, b.y)),
                      __dadd_rn(__dmul_rn(a.x, b.y), __dmul_rn(a.y, b.x)));
}

struct CombineOp {
  using Value = double2;
  const double *re, *im;
  std::int64_t ld_rows;
  double2* c;
  std::int64_t ldc;
  double2 alpha, beta;
  bool scale, add;
  __device__ Value in(std::int64_t r, std::int64_t col) const {
    return make_double2(re[r * ld_rows + col], im[r * ld_rows + col]);
  }
  __device__ void out(std::int64_t r, std::int64_t col, double2 z) const {
    double2& dst = c[r + col * ldc];
    if (scale) z = multiply(z, alpha);
    if (add) {
      const double2 t = multiply(beta, dst);
      z = make_double2(__dadd_rn(z.x, t.x), __dadd_rn(z.y, t.y));
    }
    dst = z;
  }
};

struct WidenRowsOp {
  using Value = double;
  const float* src;
  std::int64_t ld, n;
  double* dst;
  __device__ Value in(std::int64_t r, std::int64_t c) const { return double(src[r + c * ld]); }
  __device__ void out(std::int64_t r, std::int64_t c, double v) const { dst[r * n + c] = v; }
};

struct NarrowRowsOp {
  using Value = float;
  const double* src;
  std::int64_t n, ld;
  float* dst;
  __device__ Value in(std::int64_t r, std::int64_t c) const { return __double2float_rn(src[r * n + c]); }
  __device__ void out(std::int64_t r, std::int64_t c, float v) const { dst[r + c * ld] = v; }
};

__global__ void widen_kernel(const float* src, std::int64_t rows, std::int64_t total, std::int64_t ld, double* dst) {
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x)
    dst[e] = double(src[e % rows + e / rows * ld]);
}

}  // namespace

cudaError_t stack_complex(const cuDoubleComplex* src, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                          bool along_rows, Stack to, cudaStream_t s) {
  // Interleaved: rows 2r and 2r + 1 of the 2R × C result (along_rows), else columns 2c and 2c + 1 of R × 2C.
  const StackOp op{src, ld, 2 * cols, along_rows ? 1 : 2, along_rows ? cols : 1, to};
  return tiles<true>(op, rows, cols, s);
}

cudaError_t combine_complex(const double* re_rows, const double* im_rows, std::int64_t m, std::int64_t n,
                            std::int64_t ld_rows, cuDoubleComplex alpha, cuDoubleComplex beta, cuDoubleComplex* c,
                            std::int64_t ldc, cudaStream_t s) {
  const bool scale = !(alpha.x == 1.0 && alpha.y == 0.0), add = !(beta.x == 0.0 && beta.y == 0.0);
  return tiles<false>(CombineOp{re_rows, im_rows, ld_rows, c, ldc, alpha, beta, scale, add}, m, n, s);
}

cudaError_t widen(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* dst,
                  cudaStream_t s) {
  const std::int64_t total = rows * cols;
  if (total == 0) return cudaSuccess;
  const int threads = 256;
  widen_kernel<<<unsigned(std::min<std::int64_t>((total + threads - 1) / threads, 1 << 20)), threads, 0, s>>>(
      src, rows, total, ld, dst);
  return cudaGetLastError();
}

cudaError_t widen_to_rows(const float* src, std::int64_t m, std::int64_t n, std::int64_t ld, double* dst_rows,
                          cudaStream_t s) {
  return tiles<true>(WidenRowsOp{src, ld, n, dst_rows}, m, n, s);
}

cudaError_t narrow_from_rows(const double* src_rows, std::int64_t m, std::int64_t n, float* dst, std::int64_t ld,
                             cudaStream_t s) {
  return tiles<false>(NarrowRowsOp{src_rows, n, ld, dst}, m, n, s);
}

}  // namespace ironkernels::preload
