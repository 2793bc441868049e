#pragma once
// GemmPlan's state (GemmPlan::Impl) and the layout of its workspace: what the plan (gemm_plan.cu), its
// run (gemm_run.cu) and its tuner (gemm_tune.cu) share.
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "core/aligned_offsets.hpp"
#include "core/cuda_check.hpp"
#include "gemm/cublas_loader.hpp"
#include "gemm/ozaki.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels {
namespace detail {

constexpr std::int64_t kPad = 16;                              // m, n, k padding of the INT8 operands
constexpr std::size_t kCublasWorkspace = std::size_t(32) << 20;  // handed to cuBLAS, no allocation of its own
constexpr std::size_t kProductBytes = std::size_t(1) << 30;      // INT32 products held at once (one group)

inline std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

// Budgets by count (index c: the budget of the first c moduli at the plan's k).
struct Budgets {
  ozaki::Budget by_count[kGemmMaxModuli + 1];
};

// The moduli's residue constants (the first `count` are used).
struct ResidueArgs {
  int count;
  ozaki::ResidueConstants c[kGemmMaxModuli];
};

// One shape (mp × np × kc) of the INT8 products and how it runs: cublasGemmEx unless tune() found a
// faster cuBLASLt algorithm for it, over all np columns of C at once or in np / nc equal blocks (tune()
// times both: on H200 at 16384³, GEMMul8's 8192-column blocks ran cuBLAS's 128×256×128 tile at
// 5.4 ms per modulus, where one call ran 128×256×64 at 5.8 ms and moved twice the DRAM bytes).
struct Int8Product {
  std::int64_t kc = 0, nc = 0;
  bool use_lt = false;
  cublasLtMatmulAlgo_t algo{};
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // kc × mp, kc × nc, mp × nc
};

inline void destroy_layouts(const CublasLtApi* api, const Int8Product& sh) {
  for (auto* l : {sh.a, sh.b, sh.c})
    if (l) api->layout_destroy(l);
}

// Column blocks of about kProductColumns (a multiple of kPad that divides np), or np where np has no
// such divisor of at least kProductColumns / 2 (narrow blocks would only add calls).
constexpr std::int64_t kProductColumns = 8192;
inline std::int64_t product_block_columns(std::int64_t np) {
  std::int64_t blocks = (np + kProductColumns - 1) / kProductColumns;
  while (np % (blocks * kPad)) ++blocks;  // ends at np / kPad blocks at the latest
  return np / blocks >= kProductColumns / 2 ? np / blocks : np;
}

// Byte offsets of everything in the workspace (256-byte aligned).
// The int arrays of each side's lines (LineInfo), in the workspace in this order.
enum LineArray : int {
  kExponent, kNonfinite, kBits, kShift, kFast, kNonzeros, kLowestBit, kOffset, kExactBits, kThetaBits, kMost,
  kNativeLine, kNativeList, kLineArrays
};
struct WorkspaceLayout {
  std::size_t counters, row_int[kLineArrays], col_int[kLineArrays], row_largest, col_largest, row_sum, col_sum,
      row_units, col_units, row_table, col_table, histogram, decision, parts, ra, rb, prod, residues, native_product,
      cublas, total;
};

// The native remedy's product buffer: C's lines in blocks of at most this many elements (at least one
// line), so that the whole call's DGEMM runs in a few wide blocks without a buffer the size of C.
constexpr std::int64_t kNativeProductElements = std::int64_t(1) << 25;

inline void check_workspace(std::size_t needed, const void* workspace, std::size_t bytes) {
  if (bytes < needed) raise<ValueError>("gemm: workspace has ", bytes, " bytes; this plan needs ", needed);
  if (!workspace && needed) raise<ValueError>("gemm: workspace is null");
  if (reinterpret_cast<std::uintptr_t>(workspace) % 256) raise<ValueError>("gemm: workspace must be 256-byte aligned");
}

// What a plan and a prepared operand share: the inner dimension, op(B)'s columns, the contract's
// counts and the numbers each count needs. init() checks the contract and n (ValueError).
struct PlanCounts {
  std::int64_t n = 0, k = 0, np = 0, kp = 0;
  bool trans_b = false;
  GemmContract contract;  // a certified contract's scaling is norm
  Device device;
  // Counts a run may use: contract.moduli for a fixed contract; for a certified one every count from
  // the smallest that leaves both sides bits to 20, chosen per run by the certificate. Workspaces
  // and prepared operands are sized for `hi` moduli.
  int lo = 0, hi = 0;
  bool certified = false;
  double rtol = 0;     // a certified contract's tolerance at k
  int lower_bits = 0;  // certify::lower_bits(k)
  ozaki::CrtConstants crts[kGemmMaxModuli + 1];  // by count, lo … hi
  Budgets budgets{};
  ResidueArgs mods;

  void init(std::int64_t columns, std::int64_t inner, bool transposed_b, GemmContract c, Device d);
  bool norms() const { return certified || contract.scaling == GemmScaling::norm; }  // the spread pass
};

// Where a prepared operand keeps op(B)'s share (byte offsets in its buffer, 256-byte aligned): its
// line arrays as a plan's workspace holds them, its lower-bound magnitudes (certified) and its
// residues for `hi` moduli (during the preparation, the spread pass's parts).
struct PreparedLayout {
  std::size_t col_int[kLineArrays], largest, sum, units, table, lower, residues, total;
};

}  // namespace detail

struct IRONKERNELS_HIDDEN GemmPrepared::Impl : detail::PlanCounts {
  detail::PreparedLayout layout;
  Buffer memory;
  ArrayView b;           // the operand it was made from (runs must pass the same view)
  int residue_count = 0;  // the count its residues hold (0: none)
  cudaEvent_t last_use = nullptr;  // its preparation, then each run that used it
  ~Impl();
};

struct IRONKERNELS_HIDDEN GemmPlan::Impl : detail::PlanCounts {  // hidden: the plan's state is not API
  std::int64_t m, mp;
  bool trans_a;
  int sms = 0;          // the device's multiprocessors
  GemmBackend backend;  // cublas, mma or wgmma (automatic resolved)
  int group;  // moduli whose INT32 products are held at once (residue planes)
  // > 0: C in slabs of this many columns, the INT32 products of every modulus held for one slab and
  // reduced inside the reconstruction (no residue planes: 2 bytes less per modulus and element of C
  // through DRAM); 0: INT32 products reduced into residue planes, K in chunks.
  std::int64_t slab = 0;
  std::int64_t native_product_elements = 0;
  // GemmColumns::complex_pairs on the wgmma engine: Re and Im by Karatsuba, from residue sets of
  // lines of kph (k/2 padded) positions, op(A)'s mp lines and Y_re's nhp (n/2 padded), from ra on.
  bool karatsuba = false;
  std::int64_t kph = 0, nhp = 0;
  detail::WorkspaceLayout layout;
  cublasHandle_t handle = nullptr;
  cublasLtHandle_t lt = nullptr;  // created by tune()
  cublasLtMatmulDesc_t lt_op = nullptr;
  detail::Int8Product shapes[2];  // K in chunks of kChunkK: the full chunks, and a shorter last one
  int shape_count = 0;
  std::atomic<bool> tuned{false};  // set last by tune()
  std::mutex tuning;               // tune_once(): one tunes, the others wait
  mutable std::mutex handle_use;   // run() on several threads: the cuBLAS handle's stream and workspace

  const detail::Int8Product& shape(std::int64_t kc) const { return shapes[shape_count == 2 && kc != shapes[0].kc]; }

  // C (mp × columns INT32, column-major) = Xᵀ·Y over kc positions: X, Y hold mp (columns) K-contiguous
  // lines of kp; one call per block of sh.nc columns (sh.nc divides columns). `batch` such products,
  // the u-th on X + u·x_stride, Y + u·y_stride into C + u·mp·columns: the mma engine's in one launch
  // (no partial last wave per product), the others' one after another.
  cublasStatus_t product(const detail::Int8Product& sh, const std::int8_t* x, const std::int8_t* y, std::int32_t* c,
                         std::int64_t columns, void* cublas_workspace, cudaStream_t s, int batch = 1,
                         std::int64_t x_stride = 0, std::int64_t y_stride = 0) const;

  ~Impl() {
    try {  // a destructor must not throw (e.g. the CUDA runtime already shut down)
      DeviceGuard guard(device);
      if (const detail::CublasLtApi* api = lt ? detail::cublas_lt_api() : nullptr) {
        for (auto& sh : shapes) detail::destroy_layouts(api, sh);
        if (lt_op) api->desc_destroy(lt_op);
        api->destroy(lt);
      }
      if (handle) detail::cublas_api().destroy(handle);
    } catch (...) {
    }
  }
};

}  // namespace ironkernels
