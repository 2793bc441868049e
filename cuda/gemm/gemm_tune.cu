// GemmPlan::tune: for each shape of a plan's INT8 products, the fastest of cublasGemmEx and the
// algorithms cuBLASLt proposes, over all of C's columns and in column blocks, timed at the clocks
// back-to-back products run at (gemm.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "common/fill.cuh"
#include "core/cuda_check.hpp"
#include "gemm/cublas_loader.hpp"
#include "gemm/gemm_plan_impl.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels {

void GemmPlan::tune(void* workspace, std::size_t workspace_bytes, Stream stream_handle, std::int64_t columns_per_call) {
  using namespace detail;
  Impl& p = *impl_;
  check_workspace(p.layout.total, workspace, workspace_bytes);
  // The columns one product covers: a slab, or all of C.
  const std::int64_t span = p.slab ? p.slab : p.np;
  if (columns_per_call < 0 || (columns_per_call > 0 && (columns_per_call % kPad || span % columns_per_call)))
    raise<ValueError>("GemmPlan.tune: columns_per_call must be 0 or a multiple of ", kPad, " that divides ", span,
                      ", got ", columns_per_call);
  const CublasLtApi* lt = p.backend == GemmBackend::cublas ? cublas_lt_api() : nullptr;
  if (!lt || p.m == 0 || p.n == 0) {  // cublasGemmEx or mma.sync, in the forced column blocks if any
    if (columns_per_call > 0)
      for (int i = 0; i < p.shape_count; ++i) p.shapes[i].nc = columns_per_call;
    p.tuned.store(true, std::memory_order_release);
    return;
  }
  DeviceGuard guard(p.device);
  std::lock_guard<std::mutex> handle_lock(p.handle_use);
  auto s = static_cast<cudaStream_t>(stream_handle);
  auto* base = static_cast<unsigned char*>(workspace);
  const WorkspaceLayout& w = p.layout;
  auto* ra = reinterpret_cast<std::int8_t*>(base + w.ra);
  auto* rb = reinterpret_cast<std::int8_t*>(base + w.rb);
  auto* prod = reinterpret_cast<std::int32_t*>(base + w.prod);
  IK_CUBLAS_CHECK(cublas_api().set_stream(p.handle, s));
  IK_CUBLAS_CHECK(cublas_api().set_workspace(p.handle, base + w.cublas, kCublasWorkspace));
  if (!p.lt) {
    IK_CUBLAS_CHECK(lt->create(&p.lt));
    IK_CUBLAS_CHECK(lt->desc_create(&p.lt_op, CUBLAS_COMPUTE_32I, CUDA_R_32I));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    IK_CUBLAS_CHECK(lt->desc_set(p.lt_op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    IK_CUBLAS_CHECK(lt->desc_set(p.lt_op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  }
  cublasLtMatmulPreference_t pref = nullptr;
  IK_CUBLAS_CHECK(lt->pref_create(&pref));
  struct PrefGuard {
    const CublasLtApi* api;
    cublasLtMatmulPreference_t p;
    ~PrefGuard() { api->pref_destroy(p); }
  } pref_guard{lt, pref};
  const std::uint64_t max_ws = kCublasWorkspace;
  IK_CUBLAS_CHECK(lt->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof max_ws));
  fill_pseudo_random_kernel<<<1024, 256, 0, s>>>(ra, p.mp * p.kp);
  fill_pseudo_random_kernel<<<1024, 256, 0, s>>>(rb, p.np * p.kp);
  IK_CUDA_CHECK_LAUNCH("fill_pseudo_random_kernel");
  Event start(p.device), stop(p.device);
  // Milliseconds of 3 products after a warm-up one; a candidate cuBLAS refuses gives -1.
  auto time = [&](const Int8Product& candidate) -> float {
    if (p.product(candidate, ra, rb, prod, span, base + w.cublas, s) != CUBLAS_STATUS_SUCCESS) return -1.0f;
    start.record(stream_handle);
    for (int r = 0; r < 3; ++r) IK_CUBLAS_CHECK(p.product(candidate, ra, rb, prod, span, base + w.cublas, s));
    stop.record(stream_handle);
    stop.synchronize();
    return stop.elapsed_ms_since(start);
  };
  // The cuBLASLt layouts of every column split tried; those of the chosen candidates are kept.
  struct Layouts {
    const CublasLtApi* api;
    std::vector<cublasLtMatrixLayout_t> all;
    cublasLtMatrixLayout_t make(cudaDataType type, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
      all.reserve(all.size() + 1);  // no allocation failure between create and push_back
      cublasLtMatrixLayout_t l = nullptr;
      IK_CUBLAS_CHECK(api->layout_create(&l, type, rows, cols, ld));
      all.push_back(l);
      return l;
    }
    void keep(const Int8Product& sh) {
      for (auto*& l : all)
        if (l == sh.a || l == sh.b || l == sh.c) l = nullptr;
    }
    ~Layouts() {
      for (auto* l : all)
        if (l) api->layout_destroy(l);
    }
  } layouts{lt, {}};
  Int8Product chosen[2] = {p.shapes[0], p.shapes[1]};  // published at the end
  for (int i = 0; i < p.shape_count; ++i) {
    Int8Product& best_sh = chosen[i];
    best_sh.use_lt = false;
    best_sh.nc = span;
    best_sh.a = best_sh.b = best_sh.c = nullptr;
    const bool too_small = double(p.mp) * double(span) * double(best_sh.kc) < 0x1p30;
    if (too_small && columns_per_call == 0) continue;  // not worth timing
    // Candidates: cublasGemmEx and cuBLASLt's proposals, for the whole of C and in column blocks,
    // interleaved so that neither split is timed only after the GPU has heated up.
    std::vector<Int8Product> per_split[2];
    // (A slab is already one column block.)
    const std::int64_t widths[2] = {columns_per_call ? columns_per_call : span,
                                    columns_per_call ? columns_per_call : p.slab ? span : product_block_columns(p.np)};
    for (int v = 0; v < (widths[1] == widths[0] ? 1 : 2); ++v) {
      Int8Product sh = best_sh;
      sh.nc = widths[v];
      sh.a = layouts.make(CUDA_R_8I, sh.kc, p.mp, p.kp);
      sh.b = layouts.make(CUDA_R_8I, sh.kc, sh.nc, p.kp);
      sh.c = layouts.make(CUDA_R_32I, p.mp, sh.nc, p.mp);
      per_split[v].push_back(sh);
      cublasLtMatmulHeuristicResult_t found[8];
      int count = 0;
      if (lt->heuristic(p.lt, p.lt_op, sh.a, sh.b, sh.c, sh.c, pref, 8, found, &count) != CUBLAS_STATUS_SUCCESS) count = 0;
      for (int c = 0; c < count; ++c) {
        if (found[c].state != CUBLAS_STATUS_SUCCESS || found[c].workspaceSize > kCublasWorkspace) continue;
        Int8Product candidate = sh;
        candidate.use_lt = true;
        candidate.algo = found[c].algo;
        per_split[v].push_back(candidate);
      }
    }
    // Sustained INT8 products run the GPU into its power cap within ~100 ms (40 back-to-back 16384³
    // products: 8.65 → 9.5 ms each), and the candidates rank differently there than on boost clocks
    // (one call against column blocks flipped between processes): first ~150 ms of products.
    if (const float one = time(per_split[0].front()); one > 0.0f) {
      const int warm_up = int(std::min(2000.0f, 150.0f / (one / 3)));
      for (int r = 0; r < warm_up; ++r)
        IK_CUBLAS_CHECK(p.product(per_split[0].front(), ra, rb, prod, span, base + w.cublas, s));
    }
    std::vector<std::pair<float, Int8Product>> timed;
    for (std::size_t c = 0; c < std::max(per_split[0].size(), per_split[1].size()); ++c)
      for (const auto& candidates : per_split)
        if (c < candidates.size()) timed.emplace_back(time(candidates[c]), candidates[c]);
    // Back-to-back INT8 products slow down as the power rises: a second round in reverse order, and
    // each candidate keeps its faster time.
    for (auto it = timed.rbegin(); it != timed.rend(); ++it)
      if (it->first >= 0.0f) it->first = std::min(it->first, time(it->second));
    float best = -1.0f;
    for (const auto& [ms, candidate] : timed)
      if (ms >= 0.0f && (best < 0.0f || ms < best)) best = ms, best_sh = candidate;
  }
  // Past the last call that may throw: the chosen layouts pass to the plan, the others are freed.
  for (int i = 0; i < p.shape_count; ++i) layouts.keep(chosen[i]);
  for (int i = 0; i < p.shape_count; ++i) destroy_layouts(lt, p.shapes[i]);  // those of an earlier tune()
  p.shapes[0] = chosen[0], p.shapes[1] = chosen[1];
  p.tuned.store(true, std::memory_order_release);
}

}  // namespace ironkernels
