// FWT kernels for float32 (one file per dtype so they compile in parallel).
#include "fwt/fwt_table.cuh"

namespace ironkernels::detail {
void fwt_cuda_float32(const FwtPlan& plan, cudaStream_t stream) {
  fwt_gpu::launch_dtype<float>(plan, stream);
}
}  // namespace ironkernels::detail
