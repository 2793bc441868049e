// FWT kernels for float16 (one file per dtype so they compile in parallel): the row kernels of the
// table and the strided kernel.
#include "fwt/fwt_single_exchange.cuh"
#include "fwt/fwt_strided.cuh"
#include "fwt/fwt_table.cuh"

namespace ironkernels::detail {
bool fwt_cuda_rows_float16(const FwtPlan& plan, cudaStream_t stream) { return fwt_gpu::launch_dtype<__half>(plan, stream); }
void fwt_cuda_strided_float16(const fwt_gpu::StridedArgs& a, cudaStream_t stream, int device) {
  fwt_gpu::launch_strided<__half>(a, stream, device);
}
}  // namespace ironkernels::detail
