#pragma once
// The CUDA paths of fwt_quantize (cuda/fwt/fwt_quantize_fused.cu, cuda/fwt/fwt_quantize.cu), called by the host entry point once
// every argument is checked.
#include <cstdint>

#include "ironkernels/core/array.hpp"
#include "ironkernels/fwt_quantize.hpp"

namespace ironkernels::detail {

struct QuantizeShape {
  std::int64_t rows, n, group;  // rows of N elements, elements per scale
};

/// The single-pass kernel (cuda/fwt/fwt_quantize_fused.cu) where it takes the call: float16, bfloat16
/// and float32 rows, rotations of 2^k to 2^15 or m·2^k (2^k >= 32, blocks of up to 16384 elements),
/// power-of-two groups, 16-byte aligned x and q; false (nothing queued) otherwise.
bool fwt_quantize_fused(const ArrayView& x, const ArrayView& q, const ArrayView& scales, const ArrayView& tensor_scale,
                        const FwtQuantizeOptions& options, const QuantizeShape& shape, Stream stream);

void fwt_quantize_cuda(const ArrayView& x, const ArrayView& q, const ArrayView& scales, const ArrayView& tensor_scale,
                       const FwtQuantizeOptions& options, const QuantizeShape& shape, Stream stream);

}  // namespace ironkernels::detail
