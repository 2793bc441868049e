// GemmPlan::run and the INT8 products it enqueues: the Ozaki scheme II on CUDA, stage by stage, each
// stage's kernels in a header of their own (gemm_lines, gemm_residues, gemm_line_bits, gemm_certificate,
// gemm_reconstruct, gemm_native_remedy), the INT8 products in gemm_int8_mma.cuh, gemm_int8_wgmma.cuh or
// cuBLAS. Each per-element step is the function the CPU reference calls (gemm/ozaki.hpp,
// gemm/certificate.hpp), so every emulated element is the reference's, bit for bit, and every decision
// the reference's. The plan (sizes, workspace, engine) is made in gemm_plan.cu, tuned in gemm_tune.cu.
//
// Stages of GemmPlan::run, all on the caller's stream, in the caller's workspace:
//   (With a GemmPrepared, op(B)'s share of stages 1, 2 and 6 was done once, in its preparation.)
//   1. scan_lines_kernel      largest magnitude and Inf/NaN flag of every row of op(A) / column of op(B);
//      for certified contracts and norm scaling instead spread_parts_kernel + combine_spreads_kernel
//      (the same, and each line's 2-norm, nonzeros and lowest set bit)
//   2. (certified) the certificate: line_facts_kernel (each line's count table), residues_kernel<lower>
//      (lower-bound magnitudes, the lines' units) and their INT8 product Λ, certify_elements_kernel
//      (the count each element needs), count_histogram_kernel; the host waits for the histogram,
//      decides (certify::decide) and mark_native_kernel flags the lines that go native
//   3. line_bits_kernel       each line's exponent bound and bits at the chosen count
//   4. (accurate) residues_kernel<bound_max / bound_mean> (grouped magnitude bounds) + one INT8 product
//      over a quarter of K + column_bits_kernel / row_bits_kernel
//   5. finalize_lines_kernel  each line's power-of-two shift; the report's counters
//   6. residues_kernel        scaled, rounded lines as INT8 residues, K contiguous, zero padded
//   7. INT8 GEMMs, one per modulus (cublasGemmEx, the cuBLASLt algorithm tune() chose, mma.sync or
//      wgmma), and
//   8. reconstruct_kernel     Chinese remainder, one rounding, alpha/beta; Inf/NaN lines natively.
//      K in one chunk (<= 2^16): per slab of C's columns, every modulus's product, then the slab's
//      reconstruction, which reduces the INT32 products itself. Longer K: in chunks of 2^16, each
//      group of products reduced by reduce_kernel into residue planes, then one reconstruction. The
//      wgmma engine always takes the planes' path, its products reduced in their own epilogue.
//   9. (certified) native_remedy: the lines sent native (or the whole call) by cuBLAS DGEMM.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "core/cuda_check.hpp"
#include "gemm/certificate.hpp"
#include "gemm/cublas_loader.hpp"
#include "gemm/gemm_certificate.cuh"
#include "gemm/gemm_checks.hpp"
#include "gemm/gemm_int8_mma.cuh"
#include "gemm/gemm_int8_wgmma.cuh"
#include "gemm/gemm_line_bits.cuh"
#include "gemm/gemm_lines.cuh"
#include "gemm/gemm_native_remedy.cuh"
#include "gemm/gemm_plan_impl.hpp"
#include "gemm/gemm_reconstruct.cuh"
#include "gemm/gemm_residues.cuh"
#include "gemm/ozaki.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels {
namespace detail {
namespace {
namespace oz = ozaki;

unsigned blocks_for(std::int64_t count, int threads) {
  const std::int64_t b = (count + threads - 1) / threads;
  if (b > 0x7fffffff) raise<ValueError>("gemm: ", count, " elements are too many for one launch");
  return static_cast<unsigned>(b);
}

// A certified run's decision, kept in the workspace for report(); with `counters`, the lines holding
// Inf/NaN too (the whole call went native: no finalize_lines_kernel counts them).
__global__ void store_decision_kernel(certify::Decision* to, certify::Decision decision, int* counters,
                                      int nonfinite_rows, int nonfinite_cols) {
  *to = decision;
  if (counters) counters[0] = nonfinite_rows, counters[1] = nonfinite_cols;
}

void check_operand(const ArrayView& v, const char* name, std::int64_t rows, std::int64_t cols, const Device& device) {
  detail::check_float64_matrix(v, name);
  if (v.device.type != DeviceType::cuda || v.device.id != device.id)
    raise<ValueError>("gemm: ", name, " is on ", device_name(v.device), "; this plan runs on ", device_name(device));
  if (v.shape[0] != rows || v.shape[1] != cols)
    raise<ValueError>("gemm: ", name, " is ", v.shape[0], "x", v.shape[1], "; this plan expects ", rows, "x", cols);
}

// One side's LineInfo in a workspace or a prepared operand at `base`.
LineInfo line_info_at(unsigned char* base, const std::size_t (&o)[kLineArrays], std::size_t largest, std::size_t sum,
                      std::size_t units, std::size_t table, bool certified) {
  auto ints = [&](LineArray which) { return reinterpret_cast<int*>(base + o[which]); };
  LineInfo info{};
  info.exponent = ints(kExponent), info.nonfinite = ints(kNonfinite), info.bits = ints(kBits);
  info.shift = ints(kShift), info.fast = ints(kFast), info.nonzeros = ints(kNonzeros);
  info.largest = reinterpret_cast<unsigned long long*>(base + largest);
  info.norm_sum = reinterpret_cast<double*>(base + sum);
  if (certified) {
    info.native = ints(kNativeLine);
    info.lowest_bit = ints(kLowestBit), info.offset = ints(kOffset), info.exact_bits = ints(kExactBits);
    info.theta_bits = ints(kThetaBits), info.most = ints(kMost);
    info.units = reinterpret_cast<unsigned long long*>(base + units), info.count_for = base + table;
  }
  return info;
}

// A side's own share of a run, before anything depends on the other side (side 0: the rows of
// op(A), 1: the columns of op(B)): the scan, or the spread pass (norm scaling, certified contracts);
// for a certified contract its line facts and its lower-bound magnitudes into `lower`.
void line_share(const PlanCounts& p, const Lines& x, const LineInfo& info, int side, std::int64_t padded_lines,
                SpreadPart* parts, std::int8_t* lower, cudaStream_t s) {
  const int threads = 256;
  if (p.norms()) spread(x, info, parts, s);
  else scan_lines(x, info, s);
  if (!p.certified) return;
  line_facts_kernel<<<blocks_for(x.rows, threads), threads, 0, s>>>(info, x.rows, p.budgets, p.lo, side,
                                                                    std::max<std::int64_t>(p.k, 1));
  IK_CUDA_CHECK_LAUNCH("line_facts_kernel");
  residues<ResidueOutput::lower>(x, info, padded_lines, p.kp, p.mods, lower, s, p.lower_bits);
}

// Columns of op(B) as lines: element (j, l) of op(B)ᵀ.
Lines columns_of(const ArrayView& b, std::int64_t n, std::int64_t k, bool trans_b) {
  return Lines{static_cast<const double*>(b.data), n, k, trans_b ? b.strides[0] : b.strides[1],
               trans_b ? b.strides[1] : b.strides[0]};
}

LineInfo prepared_columns(const GemmPrepared::Impl& q) {
  return line_info_at(static_cast<unsigned char*>(q.memory.data()), q.layout.col_int, q.layout.largest, q.layout.sum,
                      q.layout.units, q.layout.table, q.certified);
}

bool same_contract(const GemmContract& x, const GemmContract& y) {
  return x.native == y.native && x.rtol == y.rtol && x.scaling == y.scaling && (x.certified() || x.moduli == y.moduli);
}

// A prepared operand serves a run with this plan and this B, or ValueError naming what differs.
void check_prepared(const GemmPrepared::Impl& q, const PlanCounts& p, const ArrayView& b) {
  if (q.device.id != p.device.id)
    raise<ValueError>("gemm: prepared_b is on ", device_name(q.device), "; this plan runs on ", device_name(p.device));
  if (q.n != p.n || q.k != p.k || q.trans_b != p.trans_b)
    raise<ValueError>("gemm: prepared_b holds a ", q.k, "x", q.n, " op(B)", q.trans_b ? " (transposed)" : "",
                      "; this plan's op(B) is ", p.k, "x", p.n, p.trans_b ? " (transposed)" : "");
  if (!same_contract(q.contract, p.contract))
    raise<ValueError>("gemm: prepared_b was made under another contract than this plan's");
  if (q.b.data != b.data || q.b.strides != b.strides || q.b.shape != b.shape)
    raise<ValueError>("gemm: b is not the array prepared_b was made from");
}

}  // namespace
}  // namespace detail

GemmPrepared::GemmPrepared(const ArrayView& b, bool trans_b, GemmContract contract, Stream stream)
    : impl_(std::make_unique<Impl>()) {
  using namespace detail;
  check_float64_matrix(b, "b");
  if (b.device.type != DeviceType::cuda)
    raise<ValueError>("gemm_prepare: b is on ", device_name(b.device), "; a prepared operand lives on a CUDA device");
  if (!contract.certified() && contract.scaling == GemmScaling::accurate)
    raise<ValueError>("gemm_prepare: contract scaling 'accurate' sets op(B)'s bits from both operands; accepted: "
                      "'fast', 'norm' or a certified contract");
  Impl& q = *impl_;
  const std::int64_t k = trans_b ? b.shape[1] : b.shape[0], n = trans_b ? b.shape[0] : b.shape[1];
  q.init(n, k, trans_b, contract, b.device);
  q.b = b;
  PreparedLayout& w = q.layout;
  AlignedOffsets offsets;
  const std::size_t lines = std::size_t(n), certified_bytes = q.certified ? 1 : 0;
  for (auto& o : w.col_int) o = offsets.take(lines * sizeof(int));
  w.largest = offsets.take(lines * sizeof(double));
  w.sum = offsets.take(q.norms() ? lines * sizeof(double) : 0);
  w.units = offsets.take(certified_bytes * lines * 8);
  w.table = offsets.take(certified_bytes * lines * certify::kNeedTable);
  w.lower = offsets.take(certified_bytes * std::size_t(q.np) * q.kp);
  const std::size_t parts = std::size_t((k + kScanChunk - 1) / kScanChunk) * lines * sizeof(SpreadPart);
  w.residues = offsets.take(std::max(std::size_t(q.hi) * q.np * q.kp, q.norms() ? parts : 0));
  w.total = offsets.total;

  DeviceGuard guard(q.device);
  q.memory = Buffer(w.total, q.device);
  IK_CUDA_CHECK(cudaEventCreateWithFlags(&q.last_use, cudaEventDisableTiming));
  const auto s = static_cast<cudaStream_t>(stream);
  const LineInfo cols = prepared_columns(q);
  auto* base = static_cast<unsigned char*>(q.memory.data());
  if (n > 0) {
    init_lines_kernel<<<blocks_for(n, 256), 256, 0, s>>>(cols, 0, cols, n, nullptr, false);
    IK_CUDA_CHECK_LAUNCH("init_lines_kernel");
    line_share(q, columns_of(b, n, k, trans_b), cols, 1, q.np, reinterpret_cast<SpreadPart*>(base + w.residues),
               reinterpret_cast<std::int8_t*>(base + w.lower), s);
  }
  IK_CUDA_CHECK(cudaEventRecord(q.last_use, s));
}

GemmPrepared::Impl::~Impl() {
  if (!last_use) return;
  try {  // a destructor must not throw (e.g. the CUDA runtime already shut down)
    DeviceGuard guard(device);
    cudaEventSynchronize(last_use);  // the last run that used the memory is done with it
    cudaEventDestroy(last_use);
  } catch (...) {
  }
}
GemmPrepared::~GemmPrepared() = default;
GemmPrepared::GemmPrepared(GemmPrepared&&) noexcept = default;
GemmPrepared& GemmPrepared::operator=(GemmPrepared&&) noexcept = default;
std::size_t GemmPrepared::bytes() const { return impl_->layout.total; }
int GemmPrepared::residue_count() const { return impl_->residue_count; }


cublasStatus_t GemmPlan::Impl::product(const detail::Int8Product& sh, const std::int8_t* x, const std::int8_t* y,
                                     std::int32_t* c, std::int64_t columns, void* cublas_workspace, cudaStream_t s,
                                     int batch, std::int64_t x_stride, std::int64_t y_stride) const {
  const std::int32_t one = 1, zero = 0;
  for (std::int64_t j0 = 0; j0 < columns; j0 += sh.nc) {
    if (backend == GemmBackend::mma) {
      detail::gemm_mma::int8_products(x, y + j0 * kp, c + j0 * mp, mp, sh.nc, sh.kc, kp, mp, device.id, s,
                                      {batch, x_stride, y_stride, mp * columns});
      continue;
    }
    for (int u = 0; u < batch; ++u) {
      const std::int8_t *xb = x + u * x_stride, *yb = y + u * y_stride + j0 * kp;
      std::int32_t* cb = c + u * mp * columns + j0 * mp;
      if (backend == GemmBackend::wgmma) {
        detail::gemm_wgmma::int8_products(xb, yb, cb, mp, sh.nc, sh.kc, kp, mp, device.id, s);
        continue;
      }
      const cublasStatus_t status =
          sh.use_lt ? detail::cublas_lt_api()->matmul(lt, lt_op, &one, xb, sh.a, yb, sh.b, &zero, cb, sh.c, cb, sh.c,
                                                      &sh.algo, cublas_workspace, detail::kCublasWorkspace, s)
                    : detail::cublas_api().gemm_strided_batched_ex(
                          handle, CUBLAS_OP_T, CUBLAS_OP_N, int(mp), int(sh.nc), int(sh.kc), &one, xb, CUDA_R_8I,
                          int(kp), mp * kp, yb, CUDA_R_8I, int(kp), sh.nc * kp, &zero, cb, CUDA_R_32I, int(mp),
                          mp * sh.nc, 1, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
      if (status != CUBLAS_STATUS_SUCCESS) return status;
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}

void GemmPlan::run(const ArrayView& a, const ArrayView& b, const ArrayView& c, double alpha, double beta,
                   void* workspace, std::size_t workspace_bytes, Stream stream_handle, GemmTimings* timings,
                   GemmPrepared* prepared_b) const {
  using namespace detail;
  const Impl& p = *impl_;
  check_operand(a, "a", p.trans_a ? p.k : p.m, p.trans_a ? p.m : p.k, p.device);
  check_operand(b, "b", p.trans_b ? p.n : p.k, p.trans_b ? p.k : p.n, p.device);
  check_operand(c, "c", p.m, p.n, p.device);
  check_output(c, a, b);
  check_workspace(p.layout.total, workspace, workspace_bytes);
  GemmPrepared::Impl* q = prepared_b ? prepared_b->impl_.get() : nullptr;
  if (q) check_prepared(*q, p, b);
  if (q && p.karatsuba)  // its workspace holds Karatsuba's residue sets, not a prepared operand's planes
    raise<ValueError>("gemm: prepared_b cannot serve a plan for complex pairs on the wgmma engine; call it without "
                      "prepared_b");

  DeviceGuard guard(p.device);
  auto s = static_cast<cudaStream_t>(stream_handle);
  if (p.certified) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    IK_CUDA_CHECK(cudaStreamIsCapturing(s, &capture));
    if (capture != cudaStreamCaptureStatusNone)
      raise<ValueError>("gemm: the stream is being captured (a CUDA graph), but a certified contract waits for its "
                        "certificate on the host; accepted in a capture: a fixed Contract(moduli=n, scaling=...)");
  }
  auto* base = static_cast<unsigned char*>(workspace);
  auto at = [&](std::size_t off) { return base + off; };
  const WorkspaceLayout& w = p.layout;
  const LineInfo rows = line_info_at(base, w.row_int, w.row_largest, w.row_sum, w.row_units, w.row_table, p.certified),
                 cols = q ? prepared_columns(*q)
                          : line_info_at(base, w.col_int, w.col_largest, w.col_sum, w.col_units, w.col_table, p.certified);
  int* counters = reinterpret_cast<int*>(at(w.counters));
  const Lines A{static_cast<const double*>(a.data), p.m, p.k, p.trans_a ? a.strides[1] : a.strides[0],
                p.trans_a ? a.strides[0] : a.strides[1]};
  const Lines Bt = columns_of(b, p.n, p.k, p.trans_b);
  auto* ra = reinterpret_cast<std::int8_t*>(at(w.ra));
  auto* rb = reinterpret_cast<std::int8_t*>(at(w.rb));  // B's residues, or (prepared_b) scratch
  auto* q_base = q ? static_cast<unsigned char*>(q->memory.data()) : nullptr;
  std::int8_t* rb_lower = q ? reinterpret_cast<std::int8_t*>(q_base + q->layout.lower) : rb;
  std::int8_t* rb_residues = q ? reinterpret_cast<std::int8_t*>(q_base + q->layout.residues) : rb;
  auto* prod = reinterpret_cast<std::int32_t*>(at(w.prod));
  auto* res = p.slab ? nullptr : reinterpret_cast<std::uint8_t*>(at(w.residues));  // no planes with slabs

  std::unique_ptr<Event> marks[4];
  auto mark = [&](int i) {
    if (!timings) return;
    marks[i] = std::make_unique<Event>(p.device);
    marks[i]->record(stream_handle);
  };
  mark(0);
  if (q) IK_CUDA_CHECK(cudaStreamWaitEvent(s, q->last_use));  // its preparation, the runs before
  const int threads = 256;
  init_lines_kernel<<<blocks_for(std::max({p.m, p.n, std::int64_t(kCounters)}), threads), threads, 0, s>>>(
      rows, p.m, cols, p.n, counters, q != nullptr);
  IK_CUDA_CHECK_LAUNCH("init_lines_kernel");
  certify::Decision decision;
  decision.moduli = p.hi;
  std::int64_t listed = 0;        // the native remedy's lines (Inf/NaN lines aside)
  int nonfinite_lines[2] = {};    // for the report where the whole call goes native
  if (p.m == 0 || p.n == 0) {
    if (p.certified) decision.moduli = 0;
    store_decision_kernel<<<1, 1, 0, s>>>(reinterpret_cast<certify::Decision*>(at(w.decision)), decision, nullptr, 0, 0);
    IK_CUDA_CHECK_LAUNCH("store_decision_kernel");
    return;
  }
  const bool norm = p.norms();  // certified contracts included
  // Each side's own share (op(B)'s from prepared_b where given): the scan or spread pass; for a
  // certified contract each line's facts and count table and the lower-bound magnitudes.
  auto* parts = reinterpret_cast<SpreadPart*>(at(w.parts));
  line_share(p, A, rows, 0, p.mp, parts, ra, s);
  if (!q) line_share(p, Bt, cols, 1, p.np, parts + (p.k + kScanChunk - 1) / kScanChunk * p.m, rb, s);
  const std::int64_t k1 = std::max<std::int64_t>(p.k, 1);

  // The plan's cuBLAS handle, this run's while it enqueues cuBLAS calls (not while it waits).
  std::unique_lock<std::mutex> handle_lock(p.handle_use, std::defer_lock);
  auto take_handle = [&] {
    if (!p.handle) return;
    handle_lock.lock();
    const CublasApi& blas = cublas_api();
    IK_CUBLAS_CHECK(blas.set_stream(p.handle, s));
    IK_CUBLAS_CHECK(blas.set_workspace(p.handle, at(w.cublas), kCublasWorkspace));
  };
  take_handle();
  const std::int64_t per_product = p.mp * p.np;
  if (p.certified) {
    // The certificate: the lower-bound magnitudes' INT8 product Λ, each element's count; then the
    // host reads the histogram and decides (one wait).
    Int8Product lower_shape;  // Λ = Ǎᵀ·B̌ over all of kp (exact: certify::lower_bits)
    lower_shape.kc = p.kp, lower_shape.nc = p.np;
    if (p.kp == 0) IK_CUDA_CHECK(cudaMemsetAsync(prod, 0, std::size_t(per_product) * 4, s));
    else IK_CUBLAS_CHECK(p.product(lower_shape, ra, rb_lower, prod, p.np, at(w.cublas), s));
    const unsigned tiles_n = unsigned(std::min<std::int64_t>((p.n + kCertifyTile - 1) / kCertifyTile, 65535));
    certify_elements_kernel<<<dim3(unsigned((p.m + kCertifyTile - 1) / kCertifyTile), tiles_n), dim3(32, 8), 0, s>>>(
        prod, p.m, p.n, p.mp, rows, cols, certify::rho_factor(p.rtol, p.lower_bits));
    IK_CUDA_CHECK_LAUNCH("certify_elements_kernel");
    auto* hist = reinterpret_cast<unsigned long long*>(at(w.histogram));
    IK_CUDA_CHECK(cudaMemsetAsync(hist, 0, 2 * kHistogramBins * sizeof(unsigned long long), s));
    count_histogram_kernel<<<blocks_for(p.m, threads), threads, 0, s>>>(rows, p.m, hist);
    count_histogram_kernel<<<blocks_for(p.n, threads), threads, 0, s>>>(cols, p.n, hist + kHistogramBins);
    IK_CUDA_CHECK_LAUNCH("count_histogram_kernel");
    unsigned long long host[2][kHistogramBins];
    if (handle_lock.owns_lock()) handle_lock.unlock();  // a copy into pageable memory waits too
    IK_CUDA_CHECK(cudaMemcpyAsync(host, hist, sizeof host, cudaMemcpyDeviceToHost, s));
    IK_CUDA_CHECK(cudaStreamSynchronize(s));
    take_handle();
    certify::CountHistogram sides[2];
    for (int side = 0; side < 2; ++side) {
      for (int v = 0; v <= certify::kNoCount; ++v) sides[side].lines[v] = std::int64_t(host[side][v]);
      sides[side].nonfinite = std::int64_t(host[side][kHistogramBins - 1]);
    }
    decision = certify::decide(sides[0], sides[1], p.m, p.n, p.lo);
    listed = decision.cover_rows ? decision.native_rows - sides[0].nonfinite : decision.native_cols - sides[1].nonfinite;
    nonfinite_lines[0] = int(sides[0].nonfinite), nonfinite_lines[1] = int(sides[1].nonfinite);
    const int never = INT_MAX;  // a threshold no line passes
    mark_native_kernel<<<blocks_for(p.m, threads), threads, 0, s>>>(
        rows, p.m, decision.cover_rows ? decision.moduli : never, decision.whole_native);
    mark_native_kernel<<<blocks_for(p.n, threads), threads, 0, s>>>(
        cols, p.n, decision.cover_rows ? never : decision.moduli, false);
    IK_CUDA_CHECK_LAUNCH("mark_native_kernel");
  }
  store_decision_kernel<<<1, 1, 0, s>>>(reinterpret_cast<certify::Decision*>(at(w.decision)), decision,
                                        decision.whole_native ? counters : nullptr, nonfinite_lines[0],
                                        nonfinite_lines[1]);
  IK_CUDA_CHECK_LAUNCH("store_decision_kernel");
  const OutputArgs out{static_cast<double*>(c.data), c.strides[0], c.strides[1], alpha, beta};
  auto* native_product = reinterpret_cast<double*>(at(w.native_product));

  if (decision.whole_native) {  // every element by DGEMM, Inf/NaN lines included
    mark(1);
    mark(2);
    if (!native_into_c(A, Bt, out, p.m, p.n, p.handle))
      native_remedy(NativeRemedy{A, Bt, nullptr, p.m, cols.nonfinite, true, false}, out, p.handle,
                    reinterpret_cast<double*>(ra), reinterpret_cast<double*>(rb), native_product,
                    p.native_product_elements, s);
    mark(3);
  } else {
    const int count = decision.moduli;
    const oz::Budget& budget = p.budgets.by_count[count];
    ResidueArgs mods = p.mods;
    mods.count = count;
    line_bits_kernel<<<blocks_for(p.m, threads), threads, 0, s>>>(rows, p.m, budget, 0, norm, k1);
    line_bits_kernel<<<blocks_for(p.n, threads), threads, 0, s>>>(cols, p.n, budget, 1, norm, k1);
    IK_CUDA_CHECK_LAUNCH("line_bits_kernel");

    // INT8 products of moduli [t0, t0 + group) over k in [l0, l0 + kc) and C's columns [j0, j0 + columns):
    // product u (mp × columns INT32, column-major) = RA_tᵀ · RB_t at prod + u·mp·columns. cuBLAS: one call
    // per modulus, measured faster on H200 than one strided batch (it picks smaller tiles for the batch).
    auto int8_products = [&](int t0, int group, std::int64_t l0, std::int64_t kc, std::int64_t j0,
                             std::int64_t columns) {
      IK_CUBLAS_CHECK(p.product(p.shape(kc), ra + t0 * p.mp * p.kp + l0, rb_residues + (t0 * p.np + j0) * p.kp + l0, prod,
                                columns, at(w.cublas), s, group, p.mp * p.kp, p.np * p.kp));
    };

    if (p.contract.scaling == GemmScaling::accurate) {  // Â, B̂ in the residue buffers' first slots; C̄ = Âᵀ·B̂ in `prod`
      residues<ResidueOutput::bound_max>(A, rows, p.mp, p.kp, mods, ra, s);
      residues<ResidueOutput::bound_mean>(Bt, cols, p.np, p.kp, mods, rb, s);
      Int8Product bound_shape;  // cublasGemmEx over the kp / kBoundGroup groups (a multiple of 4)
      bound_shape.kc = p.kp / oz::kBoundGroup, bound_shape.nc = p.np;
      if (bound_shape.kc == 0) IK_CUDA_CHECK(cudaMemsetAsync(prod, 0, std::size_t(per_product) * 4, s));
      else IK_CUBLAS_CHECK(p.product(bound_shape, ra, rb, prod, p.np, at(w.cublas), s));
      column_bits_kernel<<<unsigned(p.n), 256, 0, s>>>(prod, p.m, p.mp, budget, rows.fast, cols.fast, cols.bits);
      IK_CUDA_CHECK_LAUNCH("column_bits_kernel");
      const dim3 row_grid(blocks_for(p.m, threads),
                          unsigned(std::min<std::int64_t>((p.n + kRowBitsChunk - 1) / kRowBitsChunk, 65535)));
      row_bits_kernel<<<row_grid, threads, 0, s>>>(prod, p.m, p.n, p.mp, budget, cols.bits, rows.bits);
      IK_CUDA_CHECK_LAUNCH("row_bits_kernel");
    }
    finalize_lines_kernel<<<blocks_for(p.m, threads), threads, 0, s>>>(rows, p.m, p.contract.scaling, counters + 2,
                                                                      counters);
    finalize_lines_kernel<<<blocks_for(p.n, threads), threads, 0, s>>>(cols, p.n, p.contract.scaling, counters + 3,
                                                                      counters + 1);
    IK_CUDA_CHECK_LAUNCH("finalize_lines_kernel");

    // Karatsuba (complex pairs on the wgmma engine), by groups of moduli: a group's sets of op(A)
    // (ozaki_karatsuba.hpp) from ra on, then Y_re's, each `size` planes of lines of kph positions;
    // its products then go into its moduli's planes. The first group's residues count as scaling, the
    // later groups' as products.
    const bool karatsuba = p.karatsuba && !q;
    const std::int64_t half_n = p.n / 2;
    auto karatsuba_moduli = [&](int g) {
      const oz::ModuliGroup group = oz::karatsuba_group(count, g);
      ResidueArgs of_group;
      of_group.count = group.count;
      for (int t = 0; t < group.count; ++t) of_group.c[t] = mods.c[group.first + t];
      return std::make_pair(group.first, of_group);
    };
    auto karatsuba_residues = [&](int g) {
      const ResidueArgs of_group = karatsuba_moduli(g).second;
      residues<ResidueOutput::karatsuba_x>(A, rows, p.mp, 2 * p.kph, of_group, ra, s);
      const Lines y_re{Bt.data, half_n, Bt.cols, Bt.rs, Bt.cs};
      residues<ResidueOutput::karatsuba_y>(y_re, cols, p.nhp, 2 * p.kph, of_group, ra + 3 * of_group.count * p.mp * p.kph,
                                           s);
    };
    auto karatsuba_products = [&](int g) {  // Re into C's first n/2 columns' planes, Im into the last n/2's
      const auto [first, of_group] = karatsuba_moduli(g);
      const std::int64_t x_set = of_group.count * p.mp * p.kph, y_set = of_group.count * p.nhp * p.kph;
      std::uint8_t* re = res + first * per_product;
      for (std::int64_t l0 = 0; l0 < p.kph; l0 += oz::kKaratsubaChunkK)
        gemm_wgmma::int8_product_residues_karatsuba(
            ra + l0, p.mp * p.kph, x_set, ra + 3 * x_set + l0, p.nhp * p.kph, y_set, re, re + half_n * p.mp,
            per_product, p.mp, half_n, std::min(oz::kKaratsubaChunkK, p.kph - l0), p.kph, p.mp, of_group.c,
            of_group.count, l0 > 0, p.device.id, s);
    };
    if (karatsuba) {
      karatsuba_residues(0);
    } else if (p.k > 0) {
      residues<ResidueOutput::residues>(A, rows, p.mp, p.kp, mods, ra, s);
      // A prepared operand keeps its residues at the last count (its shifts depend on the count only).
      if (!q || q->residue_count != count) residues<ResidueOutput::residues>(Bt, cols, p.np, p.kp, mods, rb_residues, s);
      if (q) q->residue_count = count;
    }
    mark(1);
    // Columns [j_begin, j_end) of C from `src` (residue planes, or with kFromProducts a slab's products).
    auto reconstruct = [&](auto from_products, const ReconstructSource& src, std::int64_t j_begin, std::int64_t j_end) {
      const std::int64_t tiles = (p.m + kReconstructTile - 1) / kReconstructTile *
                                 ((j_end - j_begin + kReconstructTile - 1) / kReconstructTile);
      if (tiles == 0) return;
      const unsigned grid = unsigned(std::min<std::int64_t>(tiles, std::int64_t(p.sms) * 2048 / kReconstructThreads));
      oz::with_moduli_count(count, [&](auto compiled) {
        constexpr int kCount = decltype(compiled)::value, L = oz::crt_limbs(kCount);
        const oz::CrtTable<L> table = oz::crt_table<L>(p.crts[kCount]);
        reconstruct_kernel<kCount, decltype(from_products)::value><<<grid, kReconstructThreads, 0, s>>>(
            table, src, mods, p.m, j_end, p.mp, rows, cols, A, Bt, out, j_begin);
      });
      IK_CUDA_CHECK_LAUNCH("reconstruct_kernel");
    };
    if (p.slab) {  // every modulus's products for one slab of C, then that slab's reconstruction
      for (std::int64_t j0 = 0; j0 < p.n; j0 += p.slab) {
        int8_products(0, count, 0, p.kp, j0, p.slab);  // K is one chunk
        reconstruct(std::true_type{}, ReconstructSource{prod, p.mp * p.slab, j0}, j0, std::min(p.n, j0 + p.slab));
      }
      mark(2);  // the reconstruction ran between the products: products_ms holds both
    } else {
      if (p.k == 0) {
        IK_CUDA_CHECK(cudaMemsetAsync(res, 0, std::size_t(count) * per_product, s));
      } else if (karatsuba) {
        for (int g = 0; g < oz::karatsuba_groups(count); ++g) {
          if (g > 0) karatsuba_residues(g);
          karatsuba_products(g);
        }
      } else if (p.backend == GemmBackend::wgmma) {  // residues straight from the products' epilogue, all moduli at once
        for (std::int64_t l0 = 0; l0 < p.kp; l0 += oz::kChunkK) {
          const Int8Product& sh = p.shape(std::min(oz::kChunkK, p.kp - l0));
          for (std::int64_t j0 = 0; j0 < p.np; j0 += sh.nc)
            gemm_wgmma::int8_product_residues(ra + l0, p.mp * p.kp, rb_residues + j0 * p.kp + l0, p.np * p.kp, res + j0 * p.mp,
                                              per_product, p.mp, sh.nc, sh.kc, p.kp, p.mp, mods.c, count, nullptr,
                                              l0 > 0, p.device.id, s);
        }
      } else {
        for (int t0 = 0; t0 < count; t0 += p.group) {
          const int group = std::min(p.group, count - t0);
          for (std::int64_t l0 = 0; l0 < p.kp; l0 += oz::kChunkK) {
            int8_products(t0, group, l0, std::min(oz::kChunkK, p.kp - l0), 0, p.np);
            reduce_kernel<<<blocks_for(per_product / 4, threads), threads, 0, s>>>(prod, per_product, group, mods, t0,
                                                                                   l0 == 0, res);
            IK_CUDA_CHECK_LAUNCH("reduce_kernel");
          }
        }
      }
      mark(2);
      reconstruct(std::false_type{}, ReconstructSource{res, per_product, 0}, 0, p.n);
    }
    // The lines the certificate sent to native float64 (one side), after the residues are spent.
    if (listed > 0) {
      const bool by_rows = decision.cover_rows;
      const LineInfo& native = by_rows ? rows : cols;
      const LineInfo& other = by_rows ? cols : rows;
      int* list = reinterpret_cast<int*>(at((by_rows ? w.row_int : w.col_int)[kNativeList]));
      list_native_kernel<<<1, kListThreads, 0, s>>>(native.native, by_rows ? p.m : p.n, list);
      IK_CUDA_CHECK_LAUNCH("list_native_kernel");
      native_remedy(NativeRemedy{by_rows ? A : Bt, by_rows ? Bt : A, list, listed, other.nonfinite, false, !by_rows},
                    out, p.handle, reinterpret_cast<double*>(by_rows ? ra : rb),
                    reinterpret_cast<double*>(by_rows ? rb : ra), native_product, p.native_product_elements, s);
    }
    mark(3);
  }
  if (q) {  // report() reads the columns' marks from the workspace
    for (const LineArray which : {kNonfinite, kNativeLine})
      if (which == kNonfinite || p.certified)
        IK_CUDA_CHECK(cudaMemcpyAsync(at(w.col_int[which]), q_base + q->layout.col_int[which], p.n * sizeof(int),
                                      cudaMemcpyDeviceToDevice, s));
    IK_CUDA_CHECK(cudaEventRecord(q->last_use, s));
  }
  if (handle_lock.owns_lock()) handle_lock.unlock();
  if (timings) {
    marks[3]->synchronize();
    timings->scale_ms = marks[1]->elapsed_ms_since(*marks[0]);
    timings->products_ms = marks[2]->elapsed_ms_since(*marks[1]);
    timings->reconstruct_ms = marks[3]->elapsed_ms_since(*marks[2]);
  }
}

}  // namespace ironkernels
