// FWT kernels for float16 (one file per dtype so they compile in parallel).
#include "fwt/fwt_single_exchange.cuh"
#include "fwt/fwt_table.cuh"

namespace ironkernels::detail {
void fwt_cuda_float16(const FwtPlan& plan, cudaStream_t stream) {
  fwt_gpu::launch_dtype<__half>(plan, stream);
}
}  // namespace ironkernels::detail
