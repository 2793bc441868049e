#pragma once
// The lines a certified call computes in native float64: gathered, multiplied by cuBLAS DGEMM in
// blocks (or, without cuBLAS, one fma per position) and written into C with alpha and beta.
#include <algorithm>
#include <climits>
#include <cstdint>

#include "core/cuda_check.hpp"
#include "gemm/cublas_loader.hpp"
#include "gemm/gemm_lines.cuh"
#include "gemm/gemm_reconstruct.cuh"
#include "gemm/ozaki.hpp"

namespace ironkernels::detail {
namespace {
namespace oz = ozaki;

// Lines `list[r]` (or r) of x, r < count, as a row-major count × k matrix.
__global__ void gather_lines_kernel(Lines x, const int* list, std::int64_t count, double* out) {
  const std::int64_t total = count * x.cols;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = e / x.cols, l = e % x.cols;
    out[e] = x(list ? list[r] : r, l);
  }
}

// The native lines' products (column-major count × width, the other side's lines o0 … o0 + width)
// into C with alpha/beta: line list[r] (or r) is a row of C, or with `transposed` a column. Elements
// whose other line holds Inf/NaN belong to the reconstruction (unless `every`).
__global__ void scatter_native_kernel(const double* product, std::int64_t count, std::int64_t width, std::int64_t o0,
                                      const int* list, const int* other_nonfinite, bool every, bool transposed,
                                      OutputArgs c) {
  const std::int64_t total = count * width;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = e % count, o = o0 + e / count, line = list ? list[r] : r;
    if (!every && other_nonfinite[o]) continue;
    const std::int64_t i = transposed ? o : line, j = transposed ? line : o;
    double& out = c.data[i * c.rs + j * c.cs];
    out = oz::finish(c.alpha, product[e], c.beta, out);
  }
}

// Without cuBLAS: the native lines' elements one thread each, one fma per position in order (within
// γ_k, as a DGEMM).
__global__ void native_elements_kernel(Lines x, Lines y, const int* list, std::int64_t count, const int* other_nonfinite,
                                       bool every, bool transposed, OutputArgs c) {
  const std::int64_t total = count * y.rows;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = e % count, o = e / count, line = list ? list[r] : r;
    if (!every && other_nonfinite[o]) continue;
    double sum = 0.0;
    for (std::int64_t l = 0; l < x.cols; ++l)
      sum = transposed ? fma(y(o, l), x(line, l), sum) : fma(x(line, l), y(o, l), sum);
    const std::int64_t i = transposed ? o : line, j = transposed ? line : o;
    double& out = c.data[i * c.rs + j * c.cs];
    out = oz::finish(c.alpha, sum, c.beta, out);
  }
}

// One operand of a column-major BLAS call: matrix L (its lines as rows) or, with `transposed`, Lᵀ, as
// cuBLAS takes it (an op and a leading dimension); `ok` false where neither of L's strides is 1 or a
// leading dimension would not fit.
struct BlasOperand {
  cublasOperation_t op = CUBLAS_OP_N;
  std::int64_t ld = 0;
  bool ok = false;
};
inline BlasOperand blas_operand(const Lines& l, bool transposed) {
  // L stored column-major (rs = 1) is L under op N; stored row-major (cs = 1) it is Lᵀ under op N.
  const std::int64_t rows = std::max<std::int64_t>(l.rows, 1), cols = std::max<std::int64_t>(l.cols, 1);
  BlasOperand o;
  if (l.rs == 1 && l.cs >= rows && l.cs <= INT_MAX) o = {transposed ? CUBLAS_OP_T : CUBLAS_OP_N, l.cs, true};
  else if (l.cs == 1 && l.rs >= cols && l.rs <= INT_MAX) o = {transposed ? CUBLAS_OP_N : CUBLAS_OP_T, l.rs, true};
  return o;
}

// The whole call as one DGEMM written straight into C with alpha and beta, where op(A), op(B) and C
// are each laid out as BLAS takes them: no gather, product buffer or scatter, so a call the
// certificate sends native costs the certificate and one DGEMM. False (nothing enqueued) otherwise.
inline bool native_into_c(const Lines& a, const Lines& bt, const OutputArgs& c, std::int64_t m, std::int64_t n,
                          cublasHandle_t handle) {
  const std::int64_t k = a.cols;
  if (!handle || m == 0 || n == 0 || k == 0 || std::max({m, n, k}) > INT_MAX) return false;
  BlasOperand x, y;
  std::int64_t ldc = 0;
  bool row_major = false;
  if (c.cs == 1 && c.rs >= n && c.rs <= INT_MAX) {  // C row-major: Cᵀ (n × m) = op(B)ᵀ · op(A)ᵀ
    row_major = true, ldc = c.rs, x = blas_operand(bt, false), y = blas_operand(a, true);
  } else if (c.rs == 1 && c.cs >= m && c.cs <= INT_MAX) {  // C column-major: C = op(A) · op(B)
    ldc = c.cs, x = blas_operand(a, false), y = blas_operand(bt, true);
  }
  if (!ldc || !x.ok || !y.ok) return false;
  const Lines& first = row_major ? bt : a;
  const Lines& second = row_major ? a : bt;
  IK_CUBLAS_CHECK(cublas_api().dgemm(handle, x.op, y.op, int(row_major ? n : m), int(row_major ? m : n), int(k),
                                     &c.alpha, first.data, int(x.ld), second.data, int(y.ld), &c.beta, c.data,
                                     int(ldc)));
  return true;
}

// A native remedy: the lines `list` (count of them; all lines in order where list is null) of X
// times the other side's lines Y, into C with alpha/beta (X's lines are C's rows, or with
// `transposed` its columns). By cuBLAS DGEMM in blocks of Y's lines through `product` (X's lines
// gathered into `x_buffer`, Y's into `y_buffer` where its strides are not BLAS's), or without
// cuBLAS by native_elements_kernel. Elements whose other line holds Inf/NaN are left to the
// reconstruction unless `every`.
struct NativeRemedy {
  Lines x, y;
  const int* list;
  std::int64_t count;
  const int* other_nonfinite;
  bool every, transposed;
};
void native_remedy(const NativeRemedy& r, const OutputArgs& out, cublasHandle_t handle, double* x_buffer,
                   double* y_buffer, double* product, std::int64_t product_elements, cudaStream_t s) {
  if (r.count == 0 || r.y.rows == 0) return;
  const int threads = 256;
  auto grid = [&](std::int64_t elements) {
    return unsigned(std::min<std::int64_t>((elements + threads - 1) / threads, std::int64_t(1) << 20));
  };
  if (!handle) {
    native_elements_kernel<<<grid(r.count * r.y.rows), threads, 0, s>>>(r.x, r.y, r.list, r.count, r.other_nonfinite,
                                                                        r.every, r.transposed, out);
    IK_CUDA_CHECK_LAUNCH("native_elements_kernel");
    return;
  }
  const std::int64_t k = r.x.cols;
  // X's lines (count × k) and Yᵀ (k × lines) as cuBLAS takes them where their strides allow (X only
  // when it is all of X's lines, in order), else gathered row-major into the buffers.
  BlasOperand x = r.list ? BlasOperand{} : blas_operand(r.x, false);
  const double* x_data = r.x.data;
  if (k > 0 && !x.ok) {
    gather_lines_kernel<<<grid(r.count * k), threads, 0, s>>>(r.x, r.list, r.count, x_buffer);
    IK_CUDA_CHECK_LAUNCH("gather_lines_kernel");
    x = {CUBLAS_OP_T, std::max<std::int64_t>(k, 1), true}, x_data = x_buffer;
  }
  BlasOperand y = blas_operand(r.y, true);
  const double* y_data = r.y.data;
  if (k > 0 && !y.ok) {
    gather_lines_kernel<<<grid(r.y.rows * k), threads, 0, s>>>(r.y, nullptr, r.y.rows, y_buffer);
    IK_CUDA_CHECK_LAUNCH("gather_lines_kernel");
    y = {CUBLAS_OP_N, std::max<std::int64_t>(k, 1), true}, y_data = y_buffer;
  }
  const std::int64_t y_step = y.op == CUBLAS_OP_T ? 1 : y.ld;  // from one of Y's lines to the next
  const std::int64_t width = std::max<std::int64_t>(1, std::min(r.y.rows, product_elements / r.count));
  const double one = 1.0, zero = 0.0;
  for (std::int64_t o0 = 0; o0 < r.y.rows; o0 += width) {
    const std::int64_t w = std::min(width, r.y.rows - o0);
    if (k == 0) {
      IK_CUDA_CHECK(cudaMemsetAsync(product, 0, std::size_t(r.count * w) * sizeof(double), s));
    } else {
      IK_CUBLAS_CHECK(cublas_api().dgemm(handle, x.op, y.op, int(r.count), int(w), int(k), &one, x_data, int(x.ld),
                                         y_data + o0 * y_step, int(y.ld), &zero, product, int(r.count)));
    }
    scatter_native_kernel<<<grid(r.count * w), threads, 0, s>>>(product, r.count, w, o0, r.list, r.other_nonfinite,
                                                                r.every, r.transposed, out);
    IK_CUDA_CHECK_LAUNCH("scatter_native_kernel");
  }
}

}  // namespace
}  // namespace ironkernels::detail
