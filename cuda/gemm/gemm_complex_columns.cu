// gemm_complex_columns: the stacked [Y_re | Y_im] of a complex b in one pass (each element of b read
// once, its four copies written), in place of a framework's four strided copies.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/float_bits.cuh"
#include "core/cuda_check.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels {
namespace {

using detail::negated;

// Element (r, c) of b (rows × cols, row stride ld), Im its imaginary part (negated where
// `conjugate`): without trans_b b is k × n and y 2k × 2n, rows 2r and 2r + 1 taking (Re, −Im) in
// column c and (Im, Re) in column n + c; with trans_b b is n × k and y 2n × 2k, row r taking the pair
// (Re, −Im) at 2c and row n + r the pair (Im, Re).
__global__ void complex_columns_kernel(const double2* b, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                       bool trans_b, bool conjugate, double* y) {
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (std::int64_t c = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
         c += std::int64_t(gridDim.x) * blockDim.x) {
      double2 v = b[r * ld + c];
      if (conjugate) v.y = negated(v.y);
      if (trans_b) {
        reinterpret_cast<double2*>(y + r * 2 * cols)[c] = make_double2(v.x, negated(v.y));
        reinterpret_cast<double2*>(y + (rows + r) * 2 * cols)[c] = make_double2(v.y, v.x);
      } else {
        double* even = y + 2 * r * (2 * cols);
        double* odd = even + 2 * cols;
        even[c] = v.x, odd[c] = negated(v.y), even[cols + c] = v.y, odd[cols + c] = v.x;
      }
    }
}

}  // namespace

void gemm_complex_columns(const ArrayView& b, bool trans_b, const ArrayView& y, Stream stream, bool conjugate) {
  if (b.dtype != DType::complex128 || b.ndim() != 2)
    raise<ValueError>("gemm_complex_columns: b must be a 2-D complex128 array, got ", b.ndim(), "-D ",
                      dtype_name(b.dtype));
  if (b.device.type != DeviceType::cuda || y.device != b.device)
    raise<ValueError>("gemm_complex_columns: b and y must be on one CUDA device, got ", device_name(b.device), " and ",
                      device_name(y.device));
  const std::int64_t rows = b.shape[0], cols = b.shape[1];
  if ((cols > 1 && b.strides[1] != 1) || (rows > 1 && b.strides[0] < cols))
    raise<ValueError>("gemm_complex_columns: b's rows must be contiguous, got strides (", b.strides[0], ", ",
                      b.strides[1], ") for shape (", rows, ", ", cols, ")");
  const std::int64_t y_rows = 2 * rows, y_cols = 2 * cols;  // (2k, 2n), or with trans_b (2n, 2k)
  if (y.dtype != DType::float64 || y.ndim() != 2 || y.shape[0] != y_rows || y.shape[1] != y_cols ||
      !y.is_c_contiguous())
    raise<ValueError>("gemm_complex_columns: y must be a row-major float64 array of shape (", y_rows, ", ", y_cols,
                      ")");
  if (y.overlaps(b)) raise<ValueError>("gemm_complex_columns: y overlaps b");
  if (rows == 0 || cols == 0) return;
  DeviceGuard guard(b.device);
  const int threads = 256;
  const dim3 grid(unsigned(std::min<std::int64_t>((cols + threads - 1) / threads, 1024)),
                  unsigned(std::min<std::int64_t>(rows, 65535)));
  complex_columns_kernel<<<grid, threads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const double2*>(b.data), rows, cols, rows > 1 ? b.strides[0] : cols, trans_b,
      conjugate, static_cast<double*>(y.data));
  IK_CUDA_CHECK_LAUNCH("complex_columns_kernel");
}

}  // namespace ironkernels
