// FWT kernels for float64 (one file per dtype so they compile in parallel): the row kernels of the
// table and the strided kernel.
#include "fwt/fwt_strided.cuh"
#include "fwt/fwt_table.cuh"

namespace ironkernels::detail {
bool fwt_cuda_rows_float64(const FwtPlan& plan, cudaStream_t stream) { return fwt_gpu::launch_dtype<double>(plan, stream); }
void fwt_cuda_strided_float64(const fwt_gpu::StridedArgs& a, cudaStream_t stream, int device) {
  fwt_gpu::launch_strided<double>(a, stream, device);
}
}  // namespace ironkernels::detail
