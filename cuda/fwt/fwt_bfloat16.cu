// FWT kernels for bfloat16 (one file per dtype so they compile in parallel).
#include "fwt/fwt_single_exchange.cuh"
#include "fwt/fwt_table.cuh"

namespace ironkernels::detail {
void fwt_cuda_bfloat16(const FwtPlan& plan, cudaStream_t stream) {
  fwt_gpu::launch_dtype<__nv_bfloat16>(plan, stream);
}
}  // namespace ironkernels::detail
