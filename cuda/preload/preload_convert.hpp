#pragma once
// The drop-in's element passes for ZGEMM and SGEMM (preload_convert.cu), each enqueued on `s`;
// every matrix here is column-major (element (r, c) at r + c·ld) unless its name says rows
// (row-major, element (r, c) at r·cols + c, the layout gemm's Python path gives its temporaries).
#include <cuComplex.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ironkernels::preload {

/// One half of a stacked operand: the real or imaginary parts of the source, negated or not.
struct Half {
  bool imag = false, negate = false;
};
/// A stacked real matrix: `first` and `second` halves of the source interleaved (`along_rows`: rows
/// 2r and 2r + 1 from source row r, 2R × C, else columns 2c and 2c + 1 from column c, R × 2C),
/// row-major, as gemm's complex path stacks op(A).
struct Stack {
  double* data = nullptr;
  Half first, second;
};

/// The complex R × C matrix `src` stacked into `to`.
cudaError_t stack_complex(const cuDoubleComplex* src, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                          bool along_rows, Stack to, cudaStream_t s);

/// C = z·alpha (where alpha != 1) + beta·C (where beta != 0), z = re_rows + i·im_rows taken part by
/// part (each m × n, rows ld_rows apart), each complex product (a + bi)(c + di) as (ac − bd) +
/// (ad + bc)i with every operation rounded on its own.
cudaError_t combine_complex(const double* re_rows, const double* im_rows, std::int64_t m, std::int64_t n,
                            std::int64_t ld_rows, cuDoubleComplex alpha, cuDoubleComplex beta, cuDoubleComplex* c,
                            std::int64_t ldc, cudaStream_t s);

/// dst (rows × cols, leading dimension rows) = src widened to float64.
cudaError_t widen(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, double* dst, cudaStream_t s);

/// dst_rows (m × n) = src widened to float64.
cudaError_t widen_to_rows(const float* src, std::int64_t m, std::int64_t n, std::int64_t ld, double* dst_rows,
                          cudaStream_t s);

/// dst = src_rows (m × n) rounded to float32 (to nearest, ties to even).
cudaError_t narrow_from_rows(const double* src_rows, std::int64_t m, std::int64_t n, float* dst, std::int64_t ld,
                             cudaStream_t s);

}  // namespace ironkernels::preload
