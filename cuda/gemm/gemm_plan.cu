// GemmPlan on CUDA: the plan a shape and contract make (moduli counts, CRT constants, scaling budgets,
// the INT8 engine, slabs and K chunks), its workspace layout, which engines a device can run, and the
// report read back from a run's workspace. Runs in gemm_run.cu, tuning in gemm_tune.cu.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/cuda_check.hpp"
#include "gemm/certificate.hpp"
#include "gemm/cublas_loader.hpp"
#include "gemm/gemm_checks.hpp"
#include "gemm/gemm_plan_impl.hpp"
#include "gemm/gemm_wgmma_tiles.hpp"
#include "gemm/gemm_workspace.hpp"
#include "gemm/ozaki.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels {

bool gemm_backend_available(GemmBackend backend, Device device) {
  if (device.type != DeviceType::cuda) return false;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || device.id < 0 || device.id >= count) return false;
  int major = 0;
  IK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device.id));
  switch (backend) {
    case GemmBackend::automatic:
    case GemmBackend::cublas:
      try {
        detail::cublas_api();
        return true;
      } catch (const UnsupportedError&) {
        return false;
      }
    case GemmBackend::mma: return major >= 8;
    case GemmBackend::wgmma: return detail::gemm_wgmma::available(device.id);
  }
  return false;
}

void detail::PlanCounts::init(std::int64_t columns, std::int64_t inner, bool transposed_b, GemmContract c, Device d) {
  certified = c.certified();
  if (certified) {
    check_certified_contract(c, inner);
    c.scaling = GemmScaling::norm;
    ozaki::Budget scratch[kGemmMaxModuli + 1];
    lo = certify::certified_counts(inner, scratch), hi = kGemmMaxModuli;
    rtol = c.rtol_at(inner), lower_bits = certify::lower_bits(std::max<std::int64_t>(inner, 1));
  } else {
    lo = hi = c.moduli;
  }
  for (int count = lo; count <= hi; ++count) {
    GemmContract fixed = c;
    fixed.moduli = count, fixed.native = false;
    const CheckedContract checked = check_contract(fixed, inner);
    crts[count] = checked.crt, budgets.by_count[count] = checked.budget;
  }
  n = columns, k = inner, trans_b = transposed_b, contract = c, device = d;
  np = round_up(n, kPad), kp = round_up(k, kPad);
  if (np > INT_MAX) raise<ValueError>("gemm: m and n must be below 2^31");
  const auto& moduli = gemm_moduli();
  mods.count = hi;
  for (int t = 0; t < hi; ++t) mods.c[t] = ozaki::residue_constants(moduli[t]);
}

GemmPlan::GemmPlan(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a, bool trans_b, GemmContract contract,
                   Device device, GemmBackend backend, GemmColumns columns)
    : impl_(std::make_unique<Impl>()) {
  using namespace detail;
  if (device.type != DeviceType::cuda) raise<ValueError>("GemmPlan: device must be a CUDA device, got ", device_name(device));
  if (m < 0 || n < 0 || k < 0) raise<ValueError>("GemmPlan: m, n, k must be >= 0, got ", m, ", ", n, ", ", k);
  if (columns == GemmColumns::complex_pairs && (n % 2 || k % 2))
    raise<ValueError>("GemmPlan: complex pairs need n and k even, got n = ", n, ", k = ", k);
  Impl& p = *impl_;
  p.init(n, k, trans_b, contract, device);
  p.m = m, p.trans_a = trans_a;
  IK_CUDA_CHECK(cudaDeviceGetAttribute(&p.sms, cudaDevAttrMultiProcessorCount, device.id));
  if (backend == GemmBackend::automatic) {  // wgmma where it fills the GPU (bench/DECISIONS.md), else cuBLAS
    const std::int64_t tiles = ((m + gemm_wgmma::kTileM - 1) / gemm_wgmma::kTileM) *
                               ((n + gemm_wgmma::kTileN - 1) / gemm_wgmma::kTileN);
    backend = gemm_wgmma::available(device.id) && 2 * tiles >= p.sms ? GemmBackend::wgmma : GemmBackend::cublas;
  }
  p.backend = backend;
  if (p.backend == GemmBackend::mma) {
    int major = 0;
    IK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device.id));
    if (major < 8)
      raise<ValueError>("GemmPlan: backend mma needs compute capability 8.0 or newer; ", device_name(device), " has ",
                        major, ".x");
  }
  if (p.backend == GemmBackend::wgmma && !gemm_wgmma::available(device.id))
    raise<ValueError>("GemmPlan: backend wgmma needs compute capability 9.0 and a build with sm_90a code; ",
                      device_name(device), " or this build does not qualify");
  p.mp = round_up(m, kPad);
  if (p.mp > INT_MAX) raise<ValueError>("gemm: m and n must be below 2^31");
  const std::size_t product_bytes = std::size_t(p.mp) * std::size_t(p.np) * 4;
  p.group = int(std::clamp<std::size_t>(product_bytes ? kProductBytes / product_bytes : 1, 1, p.hi));
  const std::size_t planes = std::size_t(p.hi) * p.mp * p.np;
  // Slabs as wide as tune()'s column blocks, where K is one chunk and the slab's INT32 products take
  // at most twice the bytes of the residue planes and the product buffer they replace.
  // The wgmma engine writes residue planes itself (its fused epilogue): no slabs, no INT32 products
  // beyond accurate scaling's bound.
  const bool fused = p.backend == GemmBackend::wgmma;
  if (!fused && p.mp > 0 && p.np > 0 && p.kp > 0 && p.kp <= ozaki::kChunkK) {
    const std::int64_t slab = product_block_columns(p.np);
    if (std::size_t(p.hi) * p.mp * std::size_t(slab) * 4 <= 2 * (std::size_t(p.group) * product_bytes + planes))
      p.slab = slab;
  }

  WorkspaceLayout& w = p.layout;
  AlignedOffsets offsets;
  w.counters = offsets.take(kCounters * sizeof(int));
  for (auto& o : w.row_int) o = offsets.take(std::size_t(m) * sizeof(int));
  for (auto& o : w.col_int) o = offsets.take(std::size_t(n) * sizeof(int));
  w.row_largest = offsets.take(std::size_t(m) * sizeof(double));
  w.col_largest = offsets.take(std::size_t(n) * sizeof(double));
  const bool norms = p.norms();
  w.row_sum = offsets.take(norms ? std::size_t(m) * sizeof(double) : 0);
  w.col_sum = offsets.take(norms ? std::size_t(n) * sizeof(double) : 0);
  const std::size_t certified_bytes = p.certified ? 1 : 0;
  w.row_units = offsets.take(certified_bytes * std::size_t(m) * 8);
  w.col_units = offsets.take(certified_bytes * std::size_t(n) * 8);
  w.row_table = offsets.take(certified_bytes * std::size_t(m) * certify::kNeedTable);
  w.col_table = offsets.take(certified_bytes * std::size_t(n) * certify::kNeedTable);
  w.histogram = offsets.take(certified_bytes * 2 * kHistogramBins * sizeof(unsigned long long));
  w.decision = offsets.take(sizeof(certify::Decision));
  const std::size_t chunks = std::size_t((k + kScanChunk - 1) / kScanChunk);
  w.parts = offsets.take(norms ? chunks * std::size_t(m + n) * sizeof(SpreadPart) : 0);
  // The residues; a certified run's native remedy gathers lines into them afterwards (hi = 20 >= 8 bytes).
  // Karatsuba's three residue sets of each operand (lines of k/2: op(A)'s mp, Y_re's n/2), for one
  // group of at most kKaratsubaGroup moduli at a time, take the place of both operands' residues (ra
  // and rb are consecutive: ra's bytes are a multiple of 256), rb grown where they need more. ra and
  // rb then hold only the one-plane bound or lower-bound residues, or a certified run's native lines
  // (8 bytes an element).
  p.karatsuba = columns == GemmColumns::complex_pairs && fused && k > 0;
  p.kph = round_up(k / 2, kPad), p.nhp = round_up(n / 2, kPad);
  const std::size_t operand_planes = !p.karatsuba ? std::size_t(p.hi) : p.certified ? 8 : 1;
  const std::size_t ra_bytes = operand_planes * p.mp * p.kp, rb_bytes = operand_planes * p.np * p.kp,
                    karatsuba_bytes = p.karatsuba ? std::size_t(ozaki::kKaratsubaSets) *
                                                        std::min(p.hi, ozaki::kKaratsubaGroup) * p.kph * (p.mp + p.nhp)
                                                  : 0;
  w.ra = offsets.take(ra_bytes);
  w.rb = offsets.take(std::max(rb_bytes, karatsuba_bytes > ra_bytes ? karatsuba_bytes - ra_bytes : 0));
  // INT32 products (of a group of moduli, or of every modulus for one slab); under accurate scaling
  // first the bound C̄, for a certified contract first Λ (mp × np).
  const bool bound_product = p.contract.scaling == GemmScaling::accurate || p.certified;
  w.prod = offsets.take(p.slab ? std::max(std::size_t(p.hi) * p.mp * std::size_t(p.slab) * 4, product_bytes)
                : fused ? (bound_product ? product_bytes : 0)
                        : std::size_t(p.group) * product_bytes);
  w.residues = offsets.take(p.slab ? 0 : planes);  // residue planes of C
  p.native_product_elements = std::max({std::min(p.mp * p.np, kNativeProductElements), p.mp, p.np});
  w.native_product = offsets.take(certified_bytes * std::size_t(p.native_product_elements) * sizeof(double));
  w.cublas = offsets.take(p.backend == GemmBackend::cublas || p.certified ? kCublasWorkspace : 0);
  w.total = offsets.total;

  if (p.kp > 0) {
    p.shapes[0].kc = std::min(p.kp, ozaki::kChunkK);
    p.shape_count = 1;
    if (p.kp > ozaki::kChunkK && p.kp % ozaki::kChunkK) p.shapes[p.shape_count++].kc = p.kp % ozaki::kChunkK;
    for (auto& sh : p.shapes) sh.nc = p.slab ? p.slab : p.np;
  }

  DeviceGuard guard(device);
  if (p.backend == GemmBackend::cublas) {
    IK_CUBLAS_CHECK(cublas_api().create(&p.handle));
  } else if (p.certified) {  // the native remedy's DGEMM where cuBLAS is present (else native_elements_kernel)
    try {
      IK_CUBLAS_CHECK(cublas_api().create(&p.handle));
    } catch (const UnsupportedError&) {
    }
  }
}

GemmPlan::~GemmPlan() = default;
GemmPlan::GemmPlan(GemmPlan&&) noexcept = default;
GemmPlan& GemmPlan::operator=(GemmPlan&&) noexcept = default;

std::size_t GemmPlan::workspace_bytes() const { return impl_->layout.total; }

GemmReport GemmPlan::report(const void* workspace, Stream stream) const {
  const Impl& p = *impl_;
  DeviceGuard guard(p.device);
  const auto* base = static_cast<const unsigned char*>(workspace);
  const auto s = static_cast<cudaStream_t>(stream);
  int counters[detail::kCounters];
  detail::certify::Decision decision;
  IK_CUDA_CHECK(cudaMemcpyAsync(counters, base + p.layout.counters, sizeof(counters), cudaMemcpyDeviceToHost, s));
  IK_CUDA_CHECK(cudaMemcpyAsync(&decision, base + p.layout.decision, sizeof decision, cudaMemcpyDeviceToHost, s));
  IK_CUDA_CHECK(cudaStreamSynchronize(s));
  GemmReport r;
  const bool ran = p.m && p.n && !decision.whole_native;  // as the reference
  // A fixed plan's count is its own (whatever the workspace holds); a certified run's from its decision.
  r.moduli = !p.certified ? p.hi : decision.whole_native ? 0 : std::clamp(decision.moduli, 0, kGemmMaxModuli);
  r.bits_a = ran ? counters[2] : p.certified ? 0 : p.budgets.by_count[r.moduli].bits_a;
  r.bits_b = ran ? counters[3] : p.certified ? 0 : p.budgets.by_count[r.moduli].bits_b;
  r.rtol = p.rtol, r.whole_native = decision.whole_native;
  const std::int64_t nr = counters[0], nc = counters[1];  // lines holding Inf/NaN
  r.nonfinite_elements = nr * p.n + nc * p.m - nr * nc;
  // The native lines: those the certificate sent there and those holding Inf/NaN.
  std::vector<int> flags(std::size_t(2 * (p.m + p.n)));
  const std::size_t* arrays[2] = {p.layout.row_int, p.layout.col_int};
  for (int side = 0; side < 2; ++side) {
    const std::int64_t lines = side ? p.n : p.m;
    int* to = flags.data() + (side ? 2 * p.m : 0);
    if (p.certified)  // a fixed plan sends only the lines holding Inf/NaN
      IK_CUDA_CHECK(cudaMemcpyAsync(to, base + arrays[side][detail::kNativeLine], lines * sizeof(int),
                                    cudaMemcpyDeviceToHost, s));
    IK_CUDA_CHECK(cudaMemcpyAsync(to + lines, base + arrays[side][detail::kNonfinite], lines * sizeof(int),
                                  cudaMemcpyDeviceToHost, s));
  }
  IK_CUDA_CHECK(cudaStreamSynchronize(s));
  for (std::int64_t i = 0; i < p.m; ++i)
    if (flags[i] || flags[p.m + i]) r.native_row_indices.push_back(i);
  for (std::int64_t j = 0; j < p.n; ++j)
    if (flags[2 * p.m + j] || flags[2 * p.m + p.n + j]) r.native_col_indices.push_back(j);
  r.native_rows = std::int64_t(r.native_row_indices.size()), r.native_cols = std::int64_t(r.native_col_indices.size());
  r.native_elements = r.native_rows * p.n + r.native_cols * p.m - r.native_rows * r.native_cols;
  detail::finish_report(r, detail::dgemm_bound(p.k));  // cuBLAS, or native_elements_kernel's serial fma
  return r;
}

bool GemmPlan::tuned() const { return impl_->tuned.load(std::memory_order_acquire); }

void GemmPlan::tune_once(void* workspace, std::size_t workspace_bytes, Stream stream) {
  Impl& p = *impl_;
  if (p.tuned.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(p.tuning);
  if (!p.tuned.load(std::memory_order_relaxed)) tune(workspace, workspace_bytes, stream);
}

const char* GemmPlan::products_backend() const {
  if (impl_->backend == GemmBackend::mma) return "mma.sync";
  if (impl_->backend == GemmBackend::wgmma) return "wgmma";
  return impl_->shape_count && impl_->shapes[0].use_lt ? "cublasLt" : "cublasGemmEx";
}

int GemmPlan::products_column_blocks() const {
  const Impl& p = *impl_;
  return p.np > 0 && p.shape_count && p.shapes[0].nc > 0 ? int(p.np / p.shapes[0].nc) : 1;  // n = 0: no columns
}

}  // namespace ironkernels
