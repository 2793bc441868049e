// CUDA FWT dispatch: each plan goes to the row kernels of the table (contiguous rows up to one
// tile), the strided kernel (any axis, integers, complex parts, the passes of long rows) or the
// shared-memory fallback; a transform longer than its kernel takes is split into passes,
// H_{L1·L2} = (H_{L1} ⊗ I_{L2})(I_{L1} ⊗ H_{L2}): the inner factor from x into y, the outer one in
// place on y, each as one more dimension of lines.
#include <algorithm>

#include "fwt/fwt_strided.cuh"
#include "fwt/fwt_table.cuh"

namespace ironkernels::detail {

void fwt_cuda_rows_float32(const FwtPlan&, cudaStream_t);
void fwt_cuda_rows_float16(const FwtPlan&, cudaStream_t);
void fwt_cuda_rows_bfloat16(const FwtPlan&, cudaStream_t);
void fwt_cuda_rows_float64(const FwtPlan&, cudaStream_t);
void fwt_cuda_strided_float32(const fwt_gpu::StridedArgs&, cudaStream_t, int);
void fwt_cuda_strided_float16(const fwt_gpu::StridedArgs&, cudaStream_t, int);
void fwt_cuda_strided_bfloat16(const fwt_gpu::StridedArgs&, cudaStream_t, int);
void fwt_cuda_strided_float64(const fwt_gpu::StridedArgs&, cudaStream_t, int);
void fwt_cuda_strided_int32(const fwt_gpu::StridedArgs&, cudaStream_t, int);
void fwt_cuda_strided_int64(const fwt_gpu::StridedArgs&, cudaStream_t, int);
void fwt_cuda_smem_int32(const FwtPlan&, cudaStream_t);
void fwt_cuda_smem_int64(const FwtPlan&, cudaStream_t);

namespace {

// Rows the table's kernels take in one pass (log2): 2^15, and float64 2^14 (a row of 2^15 float64,
// 256 KB, exceeds one block's registers and shared memory; it spans a cluster only when clusters
// are enabled).
int table_max_log_n(const FwtPlan& p) {
  if (p.is_integer() || !p.unit_axis_stride() || !fwt_gpu::uses_tile_kernel(p)) return -1;
  if (p.dtype == DType::float64 && !fwt_gpu::clusters_available(p.device.id)) return 14;
  return fwt_gpu::kTileMaxLog2N;
}

// Rows the shared-memory fallback holds in one block (log2), at the smallest shared memory of a
// supported GPU: 2^14 four-byte (64 KB) values, 2^13 eight-byte ones.
int smem_max_log_n(const FwtPlan& p) { return dtype_size(p.dtype) == 8 || p.dtype == DType::int64 ? 13 : 14; }

void launch_rows(const FwtPlan& p, cudaStream_t stream) {
  switch (p.dtype) {
    case DType::float32: return fwt_cuda_rows_float32(p, stream);
    case DType::float16: return fwt_cuda_rows_float16(p, stream);
    case DType::bfloat16: return fwt_cuda_rows_bfloat16(p, stream);
    case DType::float64: return fwt_cuda_rows_float64(p, stream);
    default: raise<ValueError>("fwt: no row kernel for ", dtype_name(p.dtype));
  }
}

void launch_strided(const FwtPlan& p, const fwt_gpu::StridedArgs& a, cudaStream_t stream) {
  const int dev = p.device.id;
  switch (p.dtype) {
    case DType::float32: return fwt_cuda_strided_float32(a, stream, dev);
    case DType::float16: return fwt_cuda_strided_float16(a, stream, dev);
    case DType::bfloat16: return fwt_cuda_strided_bfloat16(a, stream, dev);
    case DType::float64: return fwt_cuda_strided_float64(a, stream, dev);
    case DType::int32: return fwt_cuda_strided_int32(a, stream, dev);
    case DType::int64: return fwt_cuda_strided_int64(a, stream, dev);
    default: raise<ValueError>("fwt: no strided kernel for ", dtype_name(p.dtype));
  }
}

void launch_smem(const FwtPlan& p, cudaStream_t stream) {
  const fwt_gpu::KernelArgs a = fwt_gpu::make_args(p);
  const int dev = p.device.id;
  switch (p.dtype) {
    case DType::float32: return fwt_gpu::launch_smem<float>(a, stream, dev);
    case DType::float16: return fwt_gpu::launch_smem<__half>(a, stream, dev);
    case DType::bfloat16: return fwt_gpu::launch_smem<__nv_bfloat16>(a, stream, dev);
    case DType::float64: return fwt_gpu::launch_smem<double>(a, stream, dev);
    case DType::int32: return fwt_cuda_smem_int32(p, stream);
    case DType::int64: return fwt_cuda_smem_int64(p, stream);
    default: raise<ValueError>("fwt: no fallback kernel for ", dtype_name(p.dtype));
  }
}

// Adds a batch dimension (extent, strides) to p, kept in descending order of x stride, and merges
// what is contiguous.
void add_dimension(FwtPlan& p, std::int64_t extent, std::int64_t xs, std::int64_t ys) {
  if (p.batch_ndim >= kFwtBatchCapacity)
    raise<ValueError>("fwt: the transform needs more passes than its batch dimensions leave room for; "
                      "accepted: at most ", kFwtMaxBatchDims - 3, " strided batch dimensions for N > 2^15");
  int at = p.batch_ndim;
  while (at > 0 && std::abs(p.x_stride[at - 1]) < std::abs(xs)) --at;
  for (int d = p.batch_ndim; d > at; --d) {
    p.batch_shape[d] = p.batch_shape[d - 1];
    p.x_stride[d] = p.x_stride[d - 1];
    p.y_stride[d] = p.y_stride[d - 1];
  }
  p.batch_shape[at] = extent;
  p.x_stride[at] = xs;
  p.y_stride[at] = ys;
  ++p.batch_ndim;
  collapse_batch(p);
}

void run(const FwtPlan& p, cudaStream_t stream) {
  int inner_bits = table_max_log_n(p);
  if (inner_bits >= 0) {
    if (p.log_n <= inner_bits) return launch_rows(p, stream);
  } else {
    const fwt_gpu::StridedLayout layout = fwt_gpu::strided_layout(p);
    fwt_gpu::StridedArgs args;
    if (fwt_gpu::strided_args(p, layout, args)) return launch_strided(p, args, stream);
    if (layout.vectorizable && p.log_n > layout.max_log_rows()) {
      inner_bits = layout.max_log_rows();
    } else {
      inner_bits = smem_max_log_n(p);
      if (p.log_n <= inner_bits) return launch_smem(p, stream);
    }
  }
  // Two factors: L2 = 2^inner_bits lines of stride s (from x into y), then L1 lines of stride L2·s
  // in place on y, which may split again.
  const int outer_bits = p.log_n - inner_bits;
  const std::int64_t l1 = std::int64_t(1) << outer_bits, l2 = std::int64_t(1) << inner_bits;
  FwtPlan inner = p;
  inner.log_n = inner_bits;
  inner.scale = 1.0;
  inner.int_scale = 1;
  inner.rows = p.rows * l1;
  add_dimension(inner, l1, l2 * p.x_axis_stride, l2 * p.y_axis_stride);
  run(inner, stream);

  FwtPlan outer = p;
  outer.x = p.y;
  outer.log_n = outer_bits;
  outer.rows = p.rows * l2;
  outer.x_axis_stride = outer.y_axis_stride = l2 * p.y_axis_stride;
  for (int d = 0; d < outer.batch_ndim; ++d) outer.x_stride[d] = outer.y_stride[d];
  add_dimension(outer, l2, p.y_axis_stride, p.y_axis_stride);
  run(outer, stream);
}

}  // namespace

void fwt_cuda(const FwtPlan& plan, Stream stream_handle) {
  DeviceGuard guard(plan.device);
  run(plan, static_cast<cudaStream_t>(stream_handle));
}

}  // namespace ironkernels::detail
