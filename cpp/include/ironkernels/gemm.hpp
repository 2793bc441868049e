#pragma once
// FP64-accurate matrix product by the Ozaki scheme II (integer moduli + Chinese remainder theorem).
//
// C = alpha · op(A) · op(B) + beta · C in float64. Each row of op(A) and column of op(B) is scaled by
// a power of two and rounded to the nearest integer (the only error of the method), the integer product
// is computed exactly from its residues modulo `moduli` pairwise-coprime moduli ≤ 256 (INT8 × INT8 →
// INT32 products), reconstructed exactly by the Chinese remainder theorem and rounded to float64
// once. A certified contract proves a componentwise bound for each emulated element and computes
// the others in native float64 (docs/gemm.md has the contract and its proof).
//
// Backends: gemm_reference (CPU) and GemmPlan (CUDA: the INT8 products through cuBLAS or the library's
// kernels, every other stage in the library's kernels). Both run the same integer algorithm and take
// the same decisions: every emulated element agrees bit for bit.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ironkernels/core/array.hpp"
#include "ironkernels/core/export.hpp"

namespace IRONKERNELS_EXPORT ironkernels {

constexpr int kGemmMaxModuli = 20;
constexpr std::int64_t kGemmMaxK = std::int64_t(1) << 20;

/// The moduli in the order contracts take them: a contract with n moduli uses the first n.
/// Greedy pairwise-coprime from 256 down: 256, 255, 253, 251, 247, 241, 239, 233, 229, 227, ...
const std::array<int, kGemmMaxModuli>& gemm_moduli();

enum class GemmScaling : std::uint8_t {
  /// Each row of op(A) (column of op(B)) scaled by the largest power of two that leaves its largest
  /// magnitude at most cap_a (cap_b), integers with k · cap_a · cap_b < P/2, so that
  /// Σ_l |A'_il|·|B'_lj| < P/2: gemm_fast_bits' bits below the line's exponent bound, one more where
  /// its largest element's mantissa fits under the cap's. Deterministic (no sums involved).
  fast,
  /// Rows of op(A) and columns of op(B) keep as many bits as a per-element bound of |op(A)|·|op(B)|
  /// from one extra small-integer product allows, the slack split between both sides (never fewer
  /// bits than fast on either side).
  accurate,
  /// Rows of op(A) and columns of op(B) keep as many bits as their 2-norms allow under Cauchy–Schwarz
  /// (Σ_l |A'_il||B'_lj| <= ‖A'_i‖₂‖B'_j‖₂ < P/2), never fewer than fast. The norms come from the pass
  /// that finds the lines' exponents, summed in one fixed order on every backend: no extra product.
  /// Contract.native()'s scaling.
  norm,
};

struct GemmContract {
  int moduli = 14;  ///< 2 … kGemmMaxModuli; a fixed contract's count (ignored where certified)
  GemmScaling scaling = GemmScaling::fast;
  /// A certified contract (docs/gemm.md): every element of op(A)·op(B) that is emulated meets
  /// |P̂_ij - P_ij| <= rtol·(|op(A)|·|op(B)|)_ij plus the rounding of P̂_ij; the others are computed in
  /// native float64. `native`: rtol = √max(k, 1) · 2^-53 (Contract.native(), DGEMM's probabilistic
  /// bound taken componentwise); else `rtol` > 0. Both on norm scaling, the count chosen per call.
  bool native = false;
  double rtol = 0.0;
  bool certified() const { return native || rtol > 0.0; }
  double rtol_at(std::int64_t k) const;  ///< the tolerance for inner dimension k (0 for a fixed contract)
};

struct GemmOptions {
  double alpha = 1.0, beta = 0.0;  ///< beta == 0 ignores C's contents (even NaN)
  bool trans_a = false, trans_b = false;
  GemmContract contract{};
};

/// What a call did. Elements of C take one of two paths: emulated with `moduli` moduli (all of them
/// for a fixed contract), or native float64 (the rows of op(A) and columns of op(B) listed natively:
/// those holding Inf/NaN, and under a certified contract those the certificate sent there, or the
/// whole call).
struct GemmReport {
  int moduli = 0;                    ///< moduli of the emulated elements (0: none emulated)
  int bits_a = 0, bits_b = 0;        ///< bits kept below each line's largest element (the fewest
                                     ///< over the rows of op(A) / the columns of op(B))
  bool certified = false;            ///< every element meets `bound`·(|op(A)|·|op(B)|)_ij (+ rounding)
  double rtol = 0.0;                 ///< the contract's tolerance (0: a fixed contract)
  double bound = 0.0;                ///< rtol, or where native elements exist and γ_k > rtol, γ_k
  bool whole_native = false;         ///< the certificate sent the whole call to native float64
  std::int64_t native_rows = 0, native_cols = 0;  ///< lines computed natively (Inf/NaN lines included)
  std::vector<std::int64_t> native_row_indices, native_col_indices;  ///< those lines, ascending
  std::int64_t native_elements = 0;     ///< elements of C computed natively
  std::int64_t nonfinite_elements = 0;  ///< of which in lines holding Inf/NaN
};

/// Bits every row of op(A) (`a`) and column of op(B) (`b`) keeps at least under "fast" scaling with
/// the first `moduli` moduli and inner dimension k ("accurate" and "norm" keep at least these):
/// a + b = bitlen(P) - 2 - ceil(log2 k), each at most 62; both 0 when no bits are left. ValueError for
/// moduli outside 2 … 20.
struct GemmBits {
  int a = 0, b = 0;
};
GemmBits gemm_fast_bits(int moduli, std::int64_t k);

/// C = alpha op(A) op(B) + beta C on the CPU (the reference whose decisions and emulated elements the
/// GPU backends reproduce bit for bit; native elements by a compensated dot product). A, B, C:
/// two-dimensional float64 host views with any strides. Validates everything before writing C
/// (TypeError / ValueError).
GemmReport gemm_reference(const ArrayView& a, const ArrayView& b, const ArrayView& c,
                          const GemmOptions& options = {});

/// The engine of the CUDA backend's INT8 products. Every engine computes the same exact INT32
/// products, so results are bit-identical whichever runs.
enum class GemmBackend : std::uint8_t {
  automatic,  ///< wgmma where available and C has at least half as many 128 × 256 tiles as the GPU has
              ///< SMs, else cublas (the faster of the two on H200: bench/DECISIONS.md)
  cublas,     ///< cublasGemmEx, or the cuBLASLt algorithm tune() chose
  mma,        ///< the library's mma.sync kernel (compute capability 8.0+; no cuBLAS needed)
  wgmma,      ///< the library's TMA + wgmma kernel (compute capability 9.0, a build with sm_90a code)
};

/// What op(B)'s columns hold: a promise of the caller that lets the CUDA backend share work between
/// columns. The bits never depend on it; a broken promise gives wrong results.
enum class GemmColumns : std::uint8_t {
  real,           ///< any matrices
  complex_pairs,  ///< gemm's complex path (docs/gemm.md): n even, op(B) = [Y_re | Y_im] with rows 2l and
                  ///< 2l + 1 of Y_re (Re B_l, −Im B_l) and of Y_im (Im B_l, Re B_l), op(A)'s positions
                  ///< (Re A, Im A) alike. The wgmma engine then forms Re and Im from three INT8 products
                  ///< per modulus over k/2 (Karatsuba) instead of four.
};

/// Whether `backend` can run the INT8 products on CUDA device `device` with this build.
bool gemm_backend_available(GemmBackend backend, Device device);

/// Milliseconds per phase of one GPU run: scaling (scans, bounds, residues), the INT8 products with
/// their modular reductions, and the reconstruction. Where K is one chunk (<= 2^16) C runs in column
/// slabs, each reconstructed right after its products: products_ms then holds both.
struct GemmTimings {
  float scale_ms = 0, products_ms = 0, reconstruct_ms = 0;
};

/// Operand reuse: op(B)'s own share of GemmPlan::run (its lines' scan, a certified contract's line
/// facts and lower-bound magnitudes, its residues at the last count a run used), computed once into
/// device memory of its own and kept for later runs with the same B, as iterative methods multiply
/// by one matrix many times. It serves every plan with the same n, k, trans_b, contract and device,
/// whatever m, and gives the bits a plain run gives. B must not change while it is used: runs still
/// read it for the lines they compute natively. Runs that use it wait for its preparation and for
/// each other, whatever their streams (a run at another count rewrites its residues); they are
/// enqueued from one host thread at a time. Not for "accurate" scaling, whose bits depend on both
/// operands.
class GemmPrepared {
 public:
  /// Prepares B (k × n, or n × k with trans_b: a float64 view on a CUDA device, any strides) on
  /// `stream`. ValueError for accurate scaling and for what GemmPlan refuses.
  GemmPrepared(const ArrayView& b, bool trans_b, GemmContract contract, Stream stream);
  ~GemmPrepared();
  GemmPrepared(GemmPrepared&&) noexcept;
  GemmPrepared& operator=(GemmPrepared&&) noexcept;
  GemmPrepared(const GemmPrepared&) = delete;
  GemmPrepared& operator=(const GemmPrepared&) = delete;

  std::size_t bytes() const;  ///< device memory it holds
  /// The count its residues are held for (0: none yet; a run computes them at its count).
  int residue_count() const;

  struct Impl;

 private:
  friend class GemmPlan;
  std::unique_ptr<Impl> impl_;
};

/// The CUDA backend, planned once per (m, n, k, ops, contract, device, engine) and run on caller-given
/// buffers: `workspace_bytes()` says how much scratch device memory a run needs, `run` only enqueues
/// work on the given stream (no allocation; a certified contract's run waits once, for its
/// certificate's histogram, before the residues). run() may be called from several
/// threads at once (each with its own workspace); tune() not concurrently with anything else on the
/// plan. gemm_plan() gives the process's shared plans.
class GemmPlan {
 public:
  GemmPlan(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a, bool trans_b, GemmContract contract,
           Device device, GemmBackend backend = GemmBackend::automatic, GemmColumns columns = GemmColumns::real);
  ~GemmPlan();
  GemmPlan(GemmPlan&&) noexcept;
  GemmPlan& operator=(GemmPlan&&) noexcept;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  std::size_t workspace_bytes() const;
  /// C = alpha op(A) op(B) + beta C. A (m×k, or k×m with trans_a), B (k×n, or n×k with trans_b) and C
  /// (m×n): float64 views on the plan's device, any strides, C not overlapping A or B; beta == 0
  /// ignores C's contents. Validates everything before enqueuing anything. With `timings`, events
  /// are recorded between the phases and the call waits for them (not for the hot path). With
  /// `prepared_b` (made from this B, with the plan's n, k, trans_b, contract and device), op(B)'s own
  /// share of the run comes from it.
  void run(const ArrayView& a, const ArrayView& b, const ArrayView& c, double alpha, double beta, void* workspace,
           std::size_t workspace_bytes, Stream stream, GemmTimings* timings = nullptr,
           GemmPrepared* prepared_b = nullptr) const;
  /// The report of the last run with this workspace (waits for `stream`).
  GemmReport report(const void* workspace, Stream stream) const;
  /// Chooses for each shape of the plan's INT8 products the fastest of cublasGemmEx and the algorithms
  /// cuBLASLt proposes, each over all columns of C at once and (where C is wide enough) in blocks of
  /// about 8192 columns (where K is one chunk, C is computed in slabs of that block width, and only
  /// the slab width is timed), by timing them on pseudo-random residues in `workspace` on `stream` (waits for
  /// it). The INT32 products are exact whatever the algorithm, so results do not change. Untuned (or
  /// without cuBLASLt, or below 2^30 multiply-adds per product) the products run through one
  /// cublasGemmEx call each. Not concurrently with run() on the same plan. columns_per_call > 0 uses
  /// only blocks of that many columns (a multiple of 16 that divides the slab width, or n rounded up
  /// to 16 without slabs), whatever the size, and without cuBLASLt runs cublasGemmEx in them.
  void tune(void* workspace, std::size_t workspace_bytes, Stream stream, std::int64_t columns_per_call = 0);
  /// tune() unless the plan is tuned already: of several threads calling it at once one tunes and the
  /// others wait for it (the policy of gemm_plan()'s plans: tuned on their first run, then never).
  void tune_once(void* workspace, std::size_t workspace_bytes, Stream stream);
  bool tuned() const;
  /// "mma.sync" (GemmBackend::mma), "wgmma" (GemmBackend::wgmma), else "cublasLt" where tune() chose a cuBLASLt algorithm for the
  /// plan's main product shape, else "cublasGemmEx".
  const char* products_backend() const;
  /// Calls per INT8 product of the main shape (column blocks of C tune() chose; 1 untuned).
  int products_column_blocks() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// The plan for these arguments from a process-wide cache of the kGemmPlanCacheSize most recently
/// used ones (a certified contract's `moduli` and `scaling` are not part of the key), created on a miss; a plan evicted
/// while a caller holds it lives on with that caller. Thread-safe. Call tune_once() before each
/// run() (a no-op once tuned): every user of a shared plan then runs it tuned.
constexpr int kGemmPlanCacheSize = 8;
std::shared_ptr<GemmPlan> gemm_plan(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a, bool trans_b,
                                    GemmContract contract, Device device, GemmBackend backend = GemmBackend::automatic,
                                    GemmColumns columns = GemmColumns::real);
/// Empties the cache (its plans live on with the callers holding them): for an exit path that must
/// release cuBLAS handles while CUDA is still up (the cache itself is never destroyed).
void gemm_plan_cache_clear();

/// gemm's complex path's real operand op(y) = [Y_re | Y_im] (docs/gemm.md, GemmColumns::complex_pairs)
/// from a complex128 b on a CUDA device, in one pass over b: b is k × n (trans_b: n × k) with
/// contiguous rows, y row-major float64 of 2k × 2n (trans_b: 2n × 2k), not overlapping b. op(y)'s
/// rows 2l and 2l + 1 are Y_re = (Re op(b), −Im op(b)) and Y_im = (Im op(b), Re op(b)); `conjugate`:
/// those of conj(op(b)). Enqueued on `stream`; ValueError for any other operand, before anything is
/// written.
void gemm_complex_columns(const ArrayView& b, bool trans_b, const ArrayView& y, Stream stream, bool conjugate = false);

}  // namespace ironkernels
