// FWT kernels for bfloat16 (one file per dtype so they compile in parallel): the row kernels of the
// table and the strided kernel.
#include "fwt/fwt_single_exchange.cuh"
#include "fwt/fwt_strided.cuh"
#include "fwt/fwt_table.cuh"

namespace ironkernels::detail {
bool fwt_cuda_rows_bfloat16(const FwtPlan& plan, cudaStream_t stream) { return fwt_gpu::launch_dtype<__nv_bfloat16>(plan, stream); }
void fwt_cuda_strided_bfloat16(const fwt_gpu::StridedArgs& a, cudaStream_t stream, int device) {
  fwt_gpu::launch_strided<__nv_bfloat16>(a, stream, device);
}
}  // namespace ironkernels::detail
