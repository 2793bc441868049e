#pragma once
// A validated FWT call, reduced to what the kernels need: rows of 2^log_n contiguous elements whose
// start offsets follow a collapsed batch of at most kMaxBatchDims dimensions (outer to inner).
#include <cstdint>

#include "ironkernels/core/array.hpp"

namespace ironkernels::detail {

constexpr int kFwtMaxBatchDims = 8;

struct FwtPlan {
  const void* x = nullptr;
  void* y = nullptr;
  DType dtype = DType::float32;
  Device device{};
  int log_n = 0;
  std::int64_t rows = 0;
  int batch_ndim = 0;
  std::int64_t batch_shape[kFwtMaxBatchDims] = {};
  std::int64_t x_stride[kFwtMaxBatchDims] = {};  // elements
  std::int64_t y_stride[kFwtMaxBatchDims] = {};
  double scale = 1.0;

  /// Element offsets of row r in x and y.
  void row_offsets(std::int64_t r, std::int64_t& xo, std::int64_t& yo) const {
    xo = yo = 0;
    for (int d = batch_ndim - 1; d >= 0; --d) {
      const std::int64_t i = r % batch_shape[d];
      r /= batch_shape[d];
      xo += i * x_stride[d];
      yo += i * y_stride[d];
    }
  }
};

void fwt_cpu(const FwtPlan& plan);
#if IRONKERNELS_WITH_CUDA
void fwt_cuda(const FwtPlan& plan, Stream stream);  // cuda/fwt/fwt_kernels.cu
#endif

}  // namespace ironkernels::detail
