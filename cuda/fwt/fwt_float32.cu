// FWT kernels for float32 (one file per dtype so they compile in parallel).
#include "fwt/fwt_tile.cuh"

namespace ironkernels::detail {
void fwt_cuda_float32(const FwtPlan& plan, cudaStream_t stream) {
  // 8 vectors of 16 bytes per thread: 32 values in registers (16 for float64).
  fwt_gpu::launch_dtype<float, 8>(plan, stream);
}
}  // namespace ironkernels::detail
