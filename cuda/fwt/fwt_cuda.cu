// CUDA FWT dispatch: by dtype, and for rows longer than one tile a second pass.
#include "fwt/fwt_table.cuh"

namespace ironkernels::detail {

void fwt_cuda_float32(const FwtPlan&, cudaStream_t);
void fwt_cuda_float16(const FwtPlan&, cudaStream_t);
void fwt_cuda_bfloat16(const FwtPlan&, cudaStream_t);
void fwt_cuda_float64(const FwtPlan&, cudaStream_t);

namespace {
using fwt_gpu::KernelArgs;

// y <- scale · (H_2 ⊗ I_half) y, in place on every row: the last stage of a row split in two tiles.
template <class T>
__global__ void fwt_halves_kernel(const KernelArgs a, std::int64_t half) {
  using C = typename fwt_gpu::Compute<T>::type;
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= a.rows * half) return;
  const std::int64_t row = i / half, col = i % half;
  std::int64_t xo, yo;
  fwt_gpu::row_offsets(a, row, xo, yo);
  T* p = static_cast<T*>(a.y) + yo + col;
  C lo = static_cast<C>(p[0]), hi = static_cast<C>(p[half]);
  fwt_gpu::bfly(lo, hi);
  if (a.scaled) {
    lo *= static_cast<C>(a.scale);
    hi *= static_cast<C>(a.scale);
  }
  p[0] = static_cast<T>(lo);
  p[half] = static_cast<T>(hi);
}

// float64 rows of 2^15 (256 KB) do not fit one block's registers: the two halves are transformed as
// rows of 2^14 and then combined, two passes over memory (one pass over a thread-block cluster with
// IRONKERNELS_FWT_CLUSTERS=1 on Hopper).
void fwt_cuda_float64_split(const FwtPlan& plan, cudaStream_t stream) {
  constexpr int kTileLog = 14;
  if (plan.log_n != kTileLog + 1 || plan.batch_ndim >= kFwtMaxBatchDims)
    raise<ValueError>("fwt: float64 N = 2^", plan.log_n, " is not supported on CUDA");
  const std::int64_t half = std::int64_t(1) << kTileLog;
  FwtPlan sub = plan;
  sub.log_n = kTileLog;
  sub.rows = plan.rows * 2;
  sub.scale = 1.0;
  const bool packed = plan.batch_ndim == 0 ||
                      (plan.batch_ndim == 1 && plan.x_stride[0] == 2 * half && plan.y_stride[0] == 2 * half);
  if (packed) {  // rows back to back: the halves are rows of a one-dimensional batch
    sub.batch_ndim = 1;
    sub.batch_shape[0] = sub.rows;
    sub.x_stride[0] = sub.y_stride[0] = half;
  } else {  // the halves as an extra innermost batch dimension
    sub.batch_shape[sub.batch_ndim] = 2;
    sub.x_stride[sub.batch_ndim] = half;
    sub.y_stride[sub.batch_ndim] = half;
    sub.batch_ndim += 1;
  }
  fwt_cuda_float64(sub, stream);
  const KernelArgs a = fwt_gpu::make_args(plan);
  const std::int64_t total = plan.rows * half;
  constexpr int kThreads = 256;
  const std::int64_t blocks = (total + kThreads - 1) / kThreads;
  fwt_halves_kernel<double><<<fwt_gpu::grid_size(blocks, plan.rows), kThreads, 0, stream>>>(a, half);
  IK_CUDA_CHECK_LAUNCH("fwt_halves_kernel");
}
}  // namespace

void fwt_cuda(const FwtPlan& plan, Stream stream_handle) {
  DeviceGuard guard(plan.device);
  auto stream = static_cast<cudaStream_t>(stream_handle);
  switch (plan.dtype) {
    case DType::float32: return fwt_cuda_float32(plan, stream);
    case DType::float16: return fwt_cuda_float16(plan, stream);
    case DType::bfloat16: return fwt_cuda_bfloat16(plan, stream);
    case DType::int64: break;  // rejected by the plan
    case DType::float64:
      return plan.log_n <= 14 || (fwt_gpu::clusters_available(plan.device.id) && fwt_gpu::uses_tile_kernel(plan))
                 ? fwt_cuda_float64(plan, stream)
                 : fwt_cuda_float64_split(plan, stream);
  }
}

}  // namespace ironkernels::detail
