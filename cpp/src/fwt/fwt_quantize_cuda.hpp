#pragma once
// The CUDA path of fwt_quantize (cuda/fwt/fwt_quantize.cu), called by the host entry point once
// every argument is checked.
#include <cstdint>

#include "ironkernels/core/array.hpp"
#include "ironkernels/fwt_quantize.hpp"

namespace ironkernels::detail {

struct QuantizeShape {
  std::int64_t rows, n, group;  // rows of N elements, elements per scale
};

void fwt_quantize_cuda(const ArrayView& x, const ArrayView& q, const ArrayView& scales, const ArrayView& tensor_scale,
                       const FwtQuantizeOptions& options, const QuantizeShape& shape, Stream stream);

}  // namespace ironkernels::detail
