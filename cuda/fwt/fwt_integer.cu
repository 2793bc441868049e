// FWT kernels for int32 and int64, computed as unsigned (wrapping): the table's rows (those of
// float32 and float64), the strided kernel and the shared-memory fallback.
#include "fwt/fwt_strided.cuh"
#include "fwt/fwt_table.cuh"

namespace ironkernels::detail {
bool fwt_cuda_rows_int32(const FwtPlan& plan, cudaStream_t stream) { return fwt_gpu::launch_dtype<std::uint32_t>(plan, stream); }
bool fwt_cuda_rows_int64(const FwtPlan& plan, cudaStream_t stream) { return fwt_gpu::launch_dtype<std::uint64_t>(plan, stream); }
void fwt_cuda_strided_int32(const fwt_gpu::StridedArgs& a, cudaStream_t stream, int device) {
  fwt_gpu::launch_strided<std::uint32_t>(a, stream, device);
}
void fwt_cuda_strided_int64(const fwt_gpu::StridedArgs& a, cudaStream_t stream, int device) {
  fwt_gpu::launch_strided<std::uint64_t>(a, stream, device);
}
void fwt_cuda_smem_int32(const FwtPlan& plan, cudaStream_t stream) {
  fwt_gpu::launch_smem<std::uint32_t>(fwt_gpu::make_args(plan), stream, plan.device.id);
}
void fwt_cuda_smem_int64(const FwtPlan& plan, cudaStream_t stream) {
  fwt_gpu::launch_smem<std::uint64_t>(fwt_gpu::make_args(plan), stream, plan.device.id);
}
}  // namespace ironkernels::detail
