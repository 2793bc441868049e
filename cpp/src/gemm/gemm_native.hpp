#pragma once
// Contract.native()'s per-call statistics: the exponent spread ρ = √nnz · 2^E / ‖line‖₂ of every row
// of op(A) and column of op(B) (see gemm_native_contract in ironkernels/gemm.hpp).
#include <cstdint>
#include <utility>

#include "ironkernels/core/array.hpp"

namespace ironkernels::detail {

// `lines` lines of `positions` float64 values: value l of line r at data[r·line_stride + l·position_stride].
struct StridedLines {
  const double* data;
  std::int64_t lines, positions, line_stride, position_stride;
};

// The largest ρ² over the lines holding only finite values and at least one nonzero (1 if none).
double max_spread_squared_cpu(const StridedLines& x);
#if IRONKERNELS_WITH_CUDA
// The same for two sets of lines on a CUDA device (op(A)'s rows, op(B)'s columns), on `stream`,
// waiting for it.
std::pair<double, double> max_spread_squared_cuda(const StridedLines& a, const StridedLines& b, Device device,
                                                  Stream stream);
#endif

}  // namespace ironkernels::detail
