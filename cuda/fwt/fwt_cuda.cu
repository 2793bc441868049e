// CUDA FWT dispatch: each plan goes to the row kernels of the table (contiguous rows up to one
// tile; rows of 256 KB over a pair of CTAs), the column pass (a strided axis of 2^7-2^13
// lines in blocks of a power of two), the strided kernel (any axis, integers, complex parts, the
// passes of long rows) or the shared-memory fallback; a transform longer than its kernel takes is
// split into passes, H_{L1·L2} = (H_{L1} ⊗ I_{L2})(I_{L1} ⊗ H_{L2}): the inner factor from x into
// y, the outer one in place on y, each as one more dimension of lines. N = m·2^k adds a pass of
// H_m across the m blocks of 2^k; the sequency and dyadic orders are applied in the row kernels'
// store, or as a gather of the input before the transform.
#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "common/stream_workspace.hpp"
#include "core/dev_overrides.hpp"
#include "fwt/fwt_line_passes.hpp"
#include "fwt/fwt_strided.cuh"
#include "fwt/fwt_table.cuh"

namespace ironkernels::detail {

bool fwt_cuda_rows_float32(const FwtPlan&, cudaStream_t);
bool fwt_cuda_rows_float16(const FwtPlan&, cudaStream_t);
bool fwt_cuda_rows_bfloat16(const FwtPlan&, cudaStream_t);
bool fwt_cuda_rows_float64(const FwtPlan&, cudaStream_t);
void fwt_cuda_strided_float32(const fwt_gpu::StridedArgs&, cudaStream_t, int);
void fwt_cuda_strided_float16(const fwt_gpu::StridedArgs&, cudaStream_t, int);
void fwt_cuda_strided_bfloat16(const fwt_gpu::StridedArgs&, cudaStream_t, int);
void fwt_cuda_strided_float64(const fwt_gpu::StridedArgs&, cudaStream_t, int);
void fwt_cuda_strided_int32(const fwt_gpu::StridedArgs&, cudaStream_t, int);
void fwt_cuda_strided_int64(const fwt_gpu::StridedArgs&, cudaStream_t, int);
bool fwt_cuda_rows_int32(const FwtPlan&, cudaStream_t);
bool fwt_cuda_rows_int64(const FwtPlan&, cudaStream_t);
void fwt_cuda_smem_int32(const FwtPlan&, cudaStream_t);
void fwt_cuda_smem_int64(const FwtPlan&, cudaStream_t);

namespace {

// Rows the table's kernels take in one pass (log2): 2^15 (16-bit types), and rows of 256 KB of 4-
// and 8-byte types (2^16, 2^15), more than one block's registers and shared memory hold, over a
// pair of CTAs, so one bit less without clusters.
int table_max_log_n(const FwtPlan& p) {
  if (!p.unit_axis_stride() || !fwt_gpu::uses_tile_kernel(p)) return -1;
  const int bytes = int(dtype_size(p.dtype));
  if (bytes == 2) return 15;
  const int pair = bytes == 4 ? 16 : 15;
  return fwt_gpu::cluster_launch_supported(p.device.id) ? pair : pair - 1;
}

// The longest table rows the passes of longer transforms are built from (log2): one-CTA rows (the
// two-CTA rows were not measured as a pass of a split).
int pass_table_max_log_n(const FwtPlan& p) {
  const int table_max = table_max_log_n(p);
  return std::min(table_max, dtype_size(p.dtype) == 8 ? 14 : 15);
}

// Rows the shared-memory fallback holds in one block on this device (log2): 2^15 four-byte values
// (128 KB) on sm_80/90, 2^14 on sm_86/89.
int smem_max_log_n(const FwtPlan& p) {
  const int compute_bytes = dtype_size(p.dtype) == 8 ? 8 : 4;
  return fwt_gpu::floor_log2(fwt_gpu::block_smem_limit(p.device.id) / compute_bytes);
}

// Rows of the inner pass when the table's rows are split (log2): 2^14, where float32 rows run at the
// copy ceiling (2^15 is a few percent slower), while the outer pass keeps columns of 256 bytes
// (at most 8 row bits); 2^15 beyond; IRONKERNELS_FWT_ROW_BITS sets it (bench sweeps).
int split_row_bits(int log_n, int table_max) {
  static const int forced = dev_override_int("IRONKERNELS_FWT_ROW_BITS", 0);
  if (forced > 0 && forced <= table_max) return forced;
  return std::min(table_max, log_n - 14 <= 8 ? 14 : 15);
}

// The inner factor of a strided transform too long for one pass (log2): half of it (the outer
// factor's columns are wider: its inner extent includes the inner factor), as far as one pass
// takes it.
int split_strided_bits(int log_n, const fwt_gpu::StridedLayout& layout) {
  return std::max(1, std::min(log_n / 2, layout.max_log_rows()));
}

bool is_16bit(DType d) { return d == DType::float16 || d == DType::bfloat16; }

// The table's row kernel for p (rows up to table_max_log_n). False, launching nothing, for an
// output order (p.order) that kernel does not apply in its store.
bool launch_table_rows(const FwtPlan& p, cudaStream_t stream) {
  switch (p.dtype) {
    case DType::float32: return fwt_cuda_rows_float32(p, stream);
    case DType::float16: return fwt_cuda_rows_float16(p, stream);
    case DType::bfloat16: return fwt_cuda_rows_bfloat16(p, stream);
    case DType::float64: return fwt_cuda_rows_float64(p, stream);
    case DType::int32: return fwt_cuda_rows_int32(p, stream);
    case DType::int64: return fwt_cuda_rows_int64(p, stream);
    default: raise<ValueError>("fwt: no row kernel for ", dtype_name(p.dtype));
  }
}
void launch_rows(const FwtPlan& p, cudaStream_t stream) { launch_table_rows(p, stream); }

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

// Lines of 2^j contiguous elements side by side whose rows are contiguous too (the complex parts: a
// trailing dimension of 2, stride 1, and the axis stride 2) are rows of 2^(n+j) elements whose j
// lowest bits are not transformed, H_N ⊗ I_{2^j}: p as such rows when the table takes them (32-
// and 64-bit types).
bool as_rows_of_pairs(const FwtPlan& p, FwtPlan& rows) {
  const int last = p.batch_ndim - 1;
  // 16-bit rows do bits 0 and 2 on the tensor cores, which cannot leave one out.
  if (last < 0 || p.skip_low_bits || dtype_size(p.dtype) == 2 || p.x_stride[last] != 1 || p.y_stride[last] != 1)
    return false;
  const std::int64_t inner = p.batch_shape[last];
  const std::int64_t vector = 16 / static_cast<std::int64_t>(dtype_size(p.dtype));
  if (inner > vector || (inner & (inner - 1)) || p.x_axis_stride != inner || p.y_axis_stride != inner) return false;
  rows = p;
  rows.batch_ndim = last;
  rows.skip_low_bits = fwt_gpu::floor_log2(inner);
  rows.log_n = p.log_n + rows.skip_low_bits;
  rows.x_axis_stride = rows.y_axis_stride = 1;
  rows.rows = p.rows / inner;
  // Longer than one pass, the rows must be packed, so that the passes' lines stay the table's.
  const std::int64_t n = std::int64_t(1) << rows.log_n;
  const bool packed = rows.batch_ndim == 0 || (rows.batch_ndim == 1 && rows.x_stride[0] == n && rows.y_stride[0] == n);
  const int table_max = table_max_log_n(rows);
  return table_max >= 0 && (rows.log_n <= table_max || packed);
}

// p's lines as `count` blocks of 2^log_block each, every block a line of its own (x into y), unscaled.
FwtPlan blocks_of(const FwtPlan& p, int log_block, std::int64_t count) {
  FwtPlan blocks = p;
  blocks.factor = 1;
  blocks.log_n = log_block;
  blocks.scale = 1.0;
  blocks.int_scale = 1;
  blocks.rows = p.rows * count;
  const std::int64_t block = std::int64_t(1) << log_block;
  add_dimension(blocks, count, block * p.x_axis_stride, block * p.y_axis_stride);
  return blocks;
}

// The column pass on `blocks` (rows of blocks of 2^log_n, from x into y): H_factor ⊗
// H_{2^outer_bits} across each row's blocks, with blocks' scale.
void launch_column_pass(const FwtPlan& blocks, int factor, int outer_bits, cudaStream_t stream) {
  fwt_gpu::LinePassArgs pass{fwt_gpu::make_args(blocks), false, factor, blocks.device.id};
  pass.outer_bits = outer_bits;
  fwt_gpu::launch_factor_columns_pass(blocks.dtype, pass, stream);
}

// H_factor ⊗ H_{2^outer_bits} across the blocks of 2^log_block of p's lines, in place on y, with
// p's scale (the factor columns).
void launch_columns(const FwtPlan& p, int log_block, int factor, int outer_bits, cudaStream_t stream) {
  FwtPlan across = in_place_on_y(p);
  across.log_n = log_block;
  launch_column_pass(across, factor, outer_bits, stream);
}

// IRONKERNELS_FWT_OUTER_COLUMNS=0|1 (tests): the column pass off, or on from 2^6 lines wherever it
// takes them, for the outer pass of long rows and a strided axis; -1 unset.
int forced_columns() {
  static const int forced = dev_override_int("IRONKERNELS_FWT_OUTER_COLUMNS", -1);
  return forced;
}

// The outer pass of long rows as the factor columns with H_{2^(bits-5)} ⊗ H_32 across the blocks
// (cp.async tiles of 128-byte columns) instead of the strided kernel, for outer factors of 8 to 10
// bits, where it is faster (float32 2^24: 2.20 of clone against the strided kernel's 2.34); below
// 8 bits it is level or slower (bench/DECISIONS.md).
bool outer_columns(const FwtPlan& p, int table_max, int outer_bits) {
  const int forced = forced_columns();
  if (table_max < 0 || !p.unit_axis_stride() || outer_bits < 6 || outer_bits > 10 || forced == 0) return false;
  if (forced != 1 && outer_bits < 8) return false;
  FwtPlan blocks = p;
  blocks.log_n = p.log_n - outer_bits;
  return fwt_gpu::factor_columns_take(p.dtype, fwt_gpu::make_args(blocks), 256);
}

// IRONKERNELS_FWT_CLUSTER_COLUMNS=0 (tests, bench): strided axes of 2^11 lines and more take the
// paths of GPUs without clusters (the one-CTA column pass up to 2^12 lines).
bool cluster_columns(int device) {
  static const bool off = dev_override_int("IRONKERNELS_FWT_CLUSTER_COLUMNS", 1) == 0;
  return !off && fwt_gpu::cluster_launch_supported(device);
}

// A strided axis whose lines, of 2^7 to 2^13, are blocks of `inner` contiguous elements, the axis
// stride (a power of two of at least the column width; complex parts count in it): the column
// pass, x into y, a block per column of the tile (bench/DECISIONS.md: 2^10 x 64 float32 1.14 of the
// contiguous rows' time against the strided kernel's 1.56), and from 2^11 lines a cluster per
// column. Without clusters, lines of at most 2^12 (8-byte values 2^11), 64-byte columns at 2^11 and
// 32-byte ones at 2^12 only as the whole inner extent, a contiguous tile: beside other columns of
// the same rows they were slower than the strided kernel.
bool strided_columns(const FwtPlan& p, cudaStream_t stream) {
  const int forced = forced_columns();
  const int last = p.batch_ndim - 1, bytes = int(dtype_size(p.dtype));
  if (forced == 0 || p.factor != 1 || p.skip_low_bits || last < 0 || (bytes != 4 && bytes != 8)) return false;
  const bool clusters = p.log_n >= 11 && cluster_columns(p.device.id);
  if (p.log_n < (forced == 1 ? 6 : 7) || p.log_n > (clusters ? 13 : bytes == 4 ? 12 : 11)) return false;
  const std::int64_t inner = p.batch_shape[last];
  if (p.x_stride[last] != 1 || p.y_stride[last] != 1 || p.x_axis_stride != inner || p.y_axis_stride != inner ||
      (inner & (inner - 1)))
    return false;
  const int column_bytes = clusters ? fwt_gpu::cluster_column_bytes(inner * bytes, p.log_n) : fwt_gpu::column_pass_bytes(p.log_n);
  if (column_bytes == 32 && inner * bytes != 32) return false;
  FwtPlan across = p;
  across.batch_ndim = last;
  across.rows = p.rows / inner;
  across.log_n = fwt_gpu::floor_log2(inner);
  if (!fwt_gpu::factor_columns_take(p.dtype, fwt_gpu::make_args(across), column_bytes)) return false;
  if (!clusters) {
    launch_column_pass(across, 1, p.log_n, stream);
  } else {
    fwt_gpu::LinePassArgs pass{fwt_gpu::make_args(across), false, 1, across.device.id};
    pass.outer_bits = p.log_n;
    fwt_gpu::launch_cluster_columns_pass(p.dtype, pass, stream);
  }
  return true;
}

// One pass when a kernel holds the whole transform (the table's rows, the strided kernel on one
// block or on a cluster, the shared-memory fallback, in that order), else two factors, each of
// which may split again.
void run(const FwtPlan& p, cudaStream_t stream) {
  FwtPlan rows;
  const bool pairs = as_rows_of_pairs(p, rows);
  if (pairs && rows.log_n <= table_max_log_n(rows)) return launch_rows(rows, stream);
  const int table_max = table_max_log_n(p);
  if (p.log_n <= table_max) return launch_rows(p, stream);
  const fwt_gpu::StridedLayout layout = fwt_gpu::strided_layout(p);
  fwt_gpu::StridedArgs args;
  if (!p.skip_low_bits && fwt_gpu::strided_cluster_args(p, layout, args)) return launch_strided(p, args, stream);
  if (pairs) return run(rows, stream);
  if (p.skip_low_bits && table_max < 0) raise<ValueError>("fwt: internal error: rows of pairs off the table");
  if (table_max < 0 && fwt_gpu::strided_args(p, layout, args)) return launch_strided(p, args, stream);
  // The shared-memory kernel: for layouts the vector kernels cannot read, for lines the strided
  // kernel holds but refuses (too few elements in all for a warp), and for 16-bit lines, whose
  // values would be rounded to their type between passes.
  const int smem_max = smem_max_log_n(p);
  if (table_max < 0 && p.log_n <= smem_max &&
      (!layout.vectorizable || is_16bit(p.dtype) || p.log_n <= layout.max_log_rows()))
    return launch_smem(p, stream);
  const int inner_bits = table_max >= 0         ? split_row_bits(p.log_n, pass_table_max_log_n(p))
                         : layout.vectorizable ? split_strided_bits(p.log_n, layout)
                                               : smem_max;
  // Two factors: L2 = 2^inner_bits lines of stride s (from x into y), then L1 lines of stride L2·s
  // in place on y, which may split again.
  if (inner_bits < 1 || inner_bits >= p.log_n)
    raise<ValueError>("fwt: internal error: no split of N = 2^", p.log_n, " (inner factor 2^", inner_bits, ")");
  const int outer_bits = p.log_n - inner_bits;
  const std::int64_t l1 = std::int64_t(1) << outer_bits, l2 = std::int64_t(1) << inner_bits;
  run(blocks_of(p, inner_bits, l1), stream);
  if (outer_columns(p, table_max, outer_bits)) return launch_columns(p, inner_bits, 1, outer_bits, stream);

  FwtPlan outer = p;
  outer.skip_low_bits = 0;  // the skipped bits are the inner factor's lowest
  outer.x = p.y;
  outer.log_n = outer_bits;
  outer.rows = p.rows * l2;
  outer.x_axis_stride = outer.y_axis_stride = l2 * p.y_axis_stride;
  for (int d = 0; d < outer.batch_ndim; ++d) outer.x_stride[d] = outer.y_stride[d];
  add_dimension(outer, l2, p.y_axis_stride, p.y_axis_stride);
  run(outer, stream);
}

// The blocks' bits that the factor columns' pass takes with H_m, for N = m·2^k on unit strides
// past one table row: the blocks of 2^(k-A) that remain are the table's rows of 2^14 (2^15 at k =
// 20), A at most 5 (32 values per thread); 0 where the table's rows hold 2^k or the pass does
// not take the lines.
int factor_column_bits(const FwtPlan& p) {
  const int table_max = pass_table_max_log_n(p);
  if (!p.unit_axis_stride() || table_max < 0 || p.log_n <= table_max) return 0;
  const int bits = std::min(5, std::max(1, p.log_n - 14));
  FwtPlan blocks = p;
  blocks.log_n = p.log_n - bits;
  return fwt_gpu::factor_columns_take(p.dtype, fwt_gpu::make_args(blocks), 256) ? bits : 0;
}

// N = m·2^k: on unit strides with 2^k within the factor tile's reach, H_m ⊗ H_{2^k} in one pass.
// Past one table row, H_{2^(k-A)} on each of the m·2^A blocks (x into y), then H_m ⊗ H_{2^A}
// across them in place (the factor columns). Otherwise H_{2^k} on each of the m blocks of every
// line (x into y; none for k = 0), then H_m across the blocks (in place on y), scaled there: the
// factor tile taking the low bits of a longer 2^k, before the outer pass, measured slower
// (bench/DECISIONS.md).
void run_factor(const FwtPlan& p, cudaStream_t stream) {
  if (p.unit_axis_stride() && p.log_n <= fwt_gpu::factor_tile_max_bits(p.dtype))
    return fwt_gpu::launch_factor_tile_pass(p.dtype, {fwt_gpu::make_args(p), false, p.factor, p.device.id}, stream);
  if (const int bits = factor_column_bits(p)) {
    run(blocks_of(p, p.log_n - bits, std::int64_t(p.factor) << bits), stream);
    return launch_columns(p, p.log_n - bits, p.factor, bits, stream);
  }
  FwtPlan across = p;  // the lines of the H_m pass: columns of 2^k
  if (p.log_n > 0) {
    run(blocks_of(p, p.log_n, p.factor), stream);
    across = in_place_on_y(p);
  }
  fwt_gpu::launch_factor_pass(p.dtype, {fwt_gpu::make_args(across), false, p.factor, p.device.id}, stream);
}

// N = m·2^k with the caller's H_m: H_{2^k} on each of the m blocks of every line (x into y, the
// power-of-two kernels), then H_m across the blocks in place on y, scaled there (as on the host).
void run_user_factor(const FwtPlan& p, cudaStream_t stream) {
  FwtPlan across = p;
  if (p.log_n > 0) {
    FwtPlan blocks = blocks_of(p, p.log_n, p.factor);
    blocks.factor_matrix = nullptr;
    run(blocks, stream);
    across = in_place_on_y(p);
  }
  const std::vector<std::int8_t>& h = *p.factor_matrix;
  StreamWorkspace matrix(h.size(), stream);
  IK_CUDA_CHECK(cudaMemcpyAsync(matrix.data(), h.data(), h.size(), cudaMemcpyHostToDevice, stream));
  fwt_gpu::launch_user_factor_pass(p.dtype, {fwt_gpu::make_args(across), false, p.factor, p.device.id},
                                   static_cast<const std::int8_t*>(matrix.data()), p.factor, stream);
}

// Sequency or dyadic order, y = P·H·x with (P·z)[k] = z[σ(k)]. Both ordered matrices are
// symmetric, so P·H = H·Pᵀ: x is gathered as Pᵀ·x (z[j] = x[σ⁻¹(j)]) and z transformed. Out of
// place z is y, transformed in place; in place z is a workspace laid out as x (its dimensions in
// x's order, packed), transformed into y: the same sums either way.
// Rows the table's kernels take in one pass are ordered in their store instead, where that
// kernel can (fwt_gpu::tile_orders_in_store): one pass instead of two.
void run_ordered(const FwtPlan& p, cudaStream_t stream) {
  FwtPlan rows;
  if (as_rows_of_pairs(p, rows) && rows.log_n <= table_max_log_n(rows)) {
    if (launch_table_rows(rows, stream)) return;
  } else if (p.log_n <= table_max_log_n(p) && launch_table_rows(p, stream)) {
    return;
  }
  const bool sequency = p.order == FwtOrder::sequency;
  FwtPlan natural = p;
  natural.order = FwtOrder::natural;
  if (p.x != p.y) {
    fwt_gpu::launch_order_pass(p.dtype, {fwt_gpu::make_args(p), sequency, 0, p.device.id}, stream);
    return run(in_place_on_y(natural), stream);
  }
  const std::int64_t n = std::int64_t(1) << p.log_n;
  StreamWorkspace workspace(static_cast<std::size_t>(p.rows * n) * dtype_size(p.dtype), stream);
  FwtPlan gather = p;  // x into the workspace
  gather.y = workspace.data();
  natural.x = gather.y;
  const int dims = p.batch_ndim + 1;  // dimension p.batch_ndim is the axis
  int by_stride[kFwtBatchCapacity + 1];
  std::iota(by_stride, by_stride + dims, 0);
  auto x_stride = [&](int d) { return std::abs(d == p.batch_ndim ? p.x_axis_stride : p.x_stride[d]); };
  std::stable_sort(by_stride, by_stride + dims, [&](int i, int j) { return x_stride(i) < x_stride(j); });
  std::int64_t packed = 1;
  for (int i = 0; i < dims; ++i) {
    const int d = by_stride[i];
    if (d == p.batch_ndim) {
      gather.y_axis_stride = natural.x_axis_stride = packed;
      packed *= n;
    } else {
      gather.y_stride[d] = natural.x_stride[d] = packed;
      packed *= p.batch_shape[d];
    }
  }
  fwt_gpu::launch_order_pass(p.dtype, {fwt_gpu::make_args(gather), sequency, 0, p.device.id}, stream);
  run(natural, stream);
}

}  // namespace

void fwt_cuda(const FwtPlan& plan, Stream stream_handle) {
  DeviceGuard guard(plan.device);
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_handle);
  if (plan.factor_matrix) return run_user_factor(plan, stream);
  if (plan.factor > 1) return run_factor(plan, stream);
  if (plan.order != FwtOrder::natural) return run_ordered(plan, stream);
  if (strided_columns(plan, stream)) return;
  run(plan, stream);
}

}  // namespace ironkernels::detail
