// FWT kernels for float64 (one file per dtype so they compile in parallel).
#include "fwt/fwt_table.cuh"

namespace ironkernels::detail {
void fwt_cuda_float64(const FwtPlan& plan, cudaStream_t stream) {
  fwt_gpu::launch_dtype<double>(plan, stream);
}
}  // namespace ironkernels::detail
