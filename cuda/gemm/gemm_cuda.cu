// Ozaki scheme II on CUDA: the INT8 products through cuBLAS or the library's mma.sync or wgmma
// kernels (gemm_int8_mma.cuh, gemm_int8_wgmma.cuh), every other stage here. Each per-element step is
// the function the CPU reference calls (gemm/ozaki.hpp, gemm/certificate.hpp), so every emulated
// element is the reference's, bit for bit, and every decision the reference's.
//
// Stages of GemmPlan::run, all on the caller's stream, in the caller's workspace:
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
#include <dlfcn.h>

#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "core/cuda_check.hpp"
#include "gemm/certificate.hpp"
#include "gemm/cublas_loader.hpp"
#include "gemm/gemm_checks.hpp"
#include "gemm/gemm_int8_mma.cuh"
#include "gemm/gemm_int8_wgmma.cuh"
#include "gemm/gemm_lines.hpp"
#include "gemm/ozaki.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels {
namespace detail {

// ------------------------------------------------------------------ cuBLAS, opened at first use
const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

namespace {
// The first of `names` that dlopen finds (nullptr if none).
void* open_library(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
  return nullptr;
}

// fn = the symbol `name` of `lib`; the first missing name is kept in `missing`.
template <class Fn>
void bind(void* lib, Fn& fn, const char* name, const char*& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn && !missing) missing = name;
}
}  // namespace

const CublasApi& cublas_api() {
  static std::once_flag once;
  static CublasApi api{};
  static const char* failure = nullptr;
  std::call_once(once, [] {
    void* lib = open_library({"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
    if (!lib) {
      failure = "libcublas.so (13 or 12) not found on the library path";
      return;
    }
    bind(lib, api.create, "cublasCreate_v2", failure);
    bind(lib, api.destroy, "cublasDestroy_v2", failure);
    bind(lib, api.set_stream, "cublasSetStream_v2", failure);
    bind(lib, api.set_workspace, "cublasSetWorkspace_v2", failure);
    bind(lib, api.gemm_strided_batched_ex, "cublasGemmStridedBatchedEx", failure);
    bind(lib, api.dgemm, "cublasDgemm_v2", failure);
  });
  if (failure) raise<UnsupportedError>("gemm: the CUDA backend needs cuBLAS: ", failure);
  return api;
}

const CublasLtApi* cublas_lt_api() {
  static std::once_flag once;
  static CublasLtApi api{};
  static bool loaded = false;
  std::call_once(once, [] {
    void* lib = open_library({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
    if (!lib) return;
    const char* missing = nullptr;
    bind(lib, api.create, "cublasLtCreate", missing);
    bind(lib, api.destroy, "cublasLtDestroy", missing);
    bind(lib, api.desc_create, "cublasLtMatmulDescCreate", missing);
    bind(lib, api.desc_destroy, "cublasLtMatmulDescDestroy", missing);
    bind(lib, api.desc_set, "cublasLtMatmulDescSetAttribute", missing);
    bind(lib, api.layout_create, "cublasLtMatrixLayoutCreate", missing);
    bind(lib, api.layout_destroy, "cublasLtMatrixLayoutDestroy", missing);
    bind(lib, api.pref_create, "cublasLtMatmulPreferenceCreate", missing);
    bind(lib, api.pref_destroy, "cublasLtMatmulPreferenceDestroy", missing);
    bind(lib, api.pref_set, "cublasLtMatmulPreferenceSetAttribute", missing);
    bind(lib, api.heuristic, "cublasLtMatmulAlgoGetHeuristic", missing);
    bind(lib, api.matmul, "cublasLtMatmul", missing);
    loaded = !missing;
  });
  return loaded ? &api : nullptr;
}

namespace {
namespace oz = ozaki;

constexpr std::int64_t kPad = 16;                              // m, n, k padding of the INT8 operands
constexpr std::size_t kCublasWorkspace = std::size_t(32) << 20;  // handed to cuBLAS, no allocation of its own
constexpr std::size_t kProductBytes = std::size_t(1) << 30;      // INT32 products held at once (one group)

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

struct Lines {  // a strided float64 matrix with op() applied: line r, position l at data[r*rs + l*cs]
  const double* data;
  std::int64_t rows, cols, rs, cs;
  __device__ double operator()(std::int64_t r, std::int64_t l) const { return data[r * rs + l * cs]; }
};

// Device arrays of one side (rows of op(A) or columns of op(B)).
struct LineInfo {
  int* exponent;   // largest exponent bound (oz::kNoExponent for an all-zero line)
  int* nonfinite;  // 1 if the line holds Inf/NaN
  int* bits;       // bits kept (accurate and norm scaling)
  int* shift;      // the line's power-of-two shift
  int* fast;       // bits kept under fast scaling (oz::fitted_bits)
  int* nonzeros;   // nonzero elements (certified contracts and norm scaling)
  unsigned long long* largest;  // largest finite magnitude (bit pattern: positive doubles order as them)
  double* norm_sum;             // the line's canonical Σ (x·2^-exponent)² (certified contracts, norm scaling)
  // Certified contracts (certificate.hpp):
  int* lowest_bit;              // exponent of the lowest set bit over the line's nonzeros
  int* offset;                  // certify::lower_offset
  int* exact_bits;              // certify::LineFacts
  int* theta_bits;
  int* most;                    // the largest count any element of the line needs
  int* native;                  // 1: the certificate sends the line to native float64
  unsigned long long* units;    // T = Σ certify::magnitude_units
  std::uint8_t* count_for;      // certify::count_table, kNeedTable per line
};

// counters[0], [1]: non-finite rows / columns; [2], [3]: fewest bits kept by a row / a column.
constexpr int kCounters = 4;

__global__ void init_lines_kernel(LineInfo rows, std::int64_t m, LineInfo cols, std::int64_t n, int* counters) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  auto init = [&](const LineInfo& side) {
    side.largest[i] = 0, side.nonfinite[i] = 0, side.nonzeros[i] = 0;
    if (side.most) side.most[i] = 0, side.units[i] = 0, side.lowest_bit[i] = INT_MAX, side.native[i] = 0;
  };
  if (i < m) init(rows), rows.bits[i] = oz::kMaxBits;
  if (i < n) init(cols);
  if (i < kCounters) counters[i] = i < 2 ? 0 : INT_MAX;
}

// Block (32, 8): threadIdx.x runs along the contiguous dimension of the matrix, so every warp reads
// 32 consecutive elements. grid.x: line tiles, grid.y: chunks of kScanChunk positions.
constexpr int kScanChunk = oz::kLineSumChunk;

// fn(v, u) for the `count` values at from, from + stride, …, u the value's index mod 8 (a constant
// once unrolled): the loads of each batch of eight are issued before any is used (one load in flight
// per thread left these scans latency-bound); fn(0.0, u) must do nothing (it pads the last batch).
template <class Fn>
__device__ __forceinline__ void for_each_strided(const double* from, std::int64_t stride, std::int64_t count, Fn&& fn) {
  constexpr int kBatch = 8;
  for (std::int64_t i = 0; i < count; i += kBatch, from += kBatch * stride) {
    double v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) v[u] = i + u < count ? from[u * stride] : 0.0;
#pragma unroll
    for (int u = 0; u < kBatch; ++u) fn(v[u], u);
  }
}

// The line of this thread in a scan block (tile of lines blockIdx.x, chunk of positions blockIdx.y),
// after fn(v) over its values of the chunk (none where the line is past the last).
template <bool kPositionsContiguous, class Fn>
__device__ __forceinline__ std::int64_t scan_chunk(const Lines& x, Fn&& fn) {
  const std::int64_t tile = blockIdx.x, l0 = std::int64_t(blockIdx.y) * kScanChunk;
  const std::int64_t l1 = min(x.cols, l0 + kScanChunk);
  const std::int64_t line = kPositionsContiguous ? tile * 8 + threadIdx.y : tile * 32 + threadIdx.x;
  const int start = kPositionsContiguous ? threadIdx.x : threadIdx.y, step = kPositionsContiguous ? 32 : 8;
  if (line < x.rows)
    for_each_strided(x.data + line * x.rs + (l0 + start) * x.cs, step * x.cs, (l1 - l0 - start + step - 1) / step,
                     fn);
  return line;
}

// The grid of a scan over `chunks` chunks: tiles of 8 lines (contiguous positions) or 32.
dim3 scan_grid(const Lines& x, std::int64_t chunks) {
  return dim3(unsigned(x.cs == 1 ? (x.rows + 7) / 8 : (x.rows + 31) / 32), unsigned(chunks));
}

template <bool kPositionsContiguous>
__global__ void scan_lines_kernel(Lines x, LineInfo info) {
  double largest = 0.0;
  int bad = 0;
  const std::int64_t line = scan_chunk<kPositionsContiguous>(x, [&](double v, int) {
    if (!oz::finite(v)) bad = 1;
    else largest = fmax(largest, fabs(v));
  });
  if constexpr (kPositionsContiguous) {  // the warp holds one line
    for (int o = 16; o > 0; o >>= 1) largest = fmax(largest, __shfl_xor_sync(0xffffffffu, largest, o));
    bad = __reduce_or_sync(0xffffffffu, static_cast<unsigned>(bad));
    if (threadIdx.x != 0) return;
  }
  if (line >= x.rows) return;
  if (largest != 0.0) atomicMax(&info.largest[line], static_cast<unsigned long long>(__double_as_longlong(largest)));
  if (bad) atomicOr(&info.nonfinite[line], 1);
}

void scan_lines(const Lines& x, const LineInfo& info, cudaStream_t s) {
  const dim3 block(32, 8);
  const std::int64_t chunks = (x.cols + kScanChunk - 1) / kScanChunk;
  if (x.rows == 0 || chunks == 0) return;
  if (x.cs == 1) scan_lines_kernel<true><<<scan_grid(x, chunks), block, 0, s>>>(x, info);
  else scan_lines_kernel<false><<<scan_grid(x, chunks), block, 0, s>>>(x, info);
  IK_CUDA_CHECK_LAUNCH("scan_lines_kernel");
}

// ------------------------------------------------------------------ the lines' 2-norms and spreads
// One read of each operand for certified contracts and norm scaling: a block takes the scan's tile of
// lines over one chunk of kScanChunk positions and writes, per line, the chunk's ScaledSum in the
// canonical order (oz::kLineSumChunk: the chunk's 32 lanes are a warp's lanes for contiguous
// positions; for strided ones each of a line's 8 threads holds 4 of them, lanes y, y + 8, y + 16,
// y + 24 for thread y), its largest magnitude, nonzeros, lowest set bit and non-finite mark; a
// per-line kernel adds the chunks in order.
struct SpreadPart {
  double sum, largest;
  int exponent, nonzeros;  // exponent oz::kNoExponent: no nonzero
  int lowest_bit;          // certify::lowest_bit_exponent over the nonzeros (INT_MAX: none)
  int nonfinite;           // 1: an Inf/NaN
};
template <bool kPositionsContiguous>
__global__ void spread_parts_kernel(Lines x, SpreadPart* parts) {  // the scan's grid and blocks
  oz::ScaledSum lane[kPositionsContiguous ? 1 : 4];  // the canonical lanes this thread sums
  double largest = 0.0;
  int count = 0, bad = 0, lowest = INT_MAX;
  const std::int64_t line = scan_chunk<kPositionsContiguous>(x, [&](double v, int u) {
    if (!oz::finite(v)) bad = 1;
    if (!oz::finite(v) || v == 0.0) return;
    lane[kPositionsContiguous ? 0 : u & 3].add_value(v);
    largest = fmax(largest, fabs(v)), ++count;
    lowest = min(lowest, certify::lowest_bit_exponent(v));
  });
  oz::ScaledSum part = lane[0];
  if constexpr (kPositionsContiguous) {  // the warp holds one line: lanes v and v xor o, o = 16 … 1
    for (int o = 16; o > 0; o >>= 1) {
      oz::ScaledSum other;
      other.sum = __shfl_xor_sync(0xffffffffu, part.sum, o);
      other.exponent = __shfl_xor_sync(0xffffffffu, part.exponent, o);
      part.add(other);
      largest = fmax(largest, __shfl_xor_sync(0xffffffffu, largest, o));
    }
    count = __reduce_add_sync(0xffffffffu, count);
    bad = __reduce_or_sync(0xffffffffu, static_cast<unsigned>(bad));
    lowest = __reduce_min_sync(0xffffffffu, lowest);
    if (threadIdx.x != 0) return;
  } else {  // the 8 threads of a column of the block hold one line
    lane[0].add(lane[2]), lane[1].add(lane[3]);  // lane bit 4 (o = 16), then bit 3
    part = lane[0], part.add(lane[1]);
    __shared__ oz::ScaledSum shared_part[8][32];
    __shared__ double shared_largest[8][32];
    __shared__ int shared_count[8][32], shared_bad[8][32], shared_lowest[8][32];
    shared_part[threadIdx.y][threadIdx.x] = part, shared_largest[threadIdx.y][threadIdx.x] = largest;
    shared_count[threadIdx.y][threadIdx.x] = count, shared_bad[threadIdx.y][threadIdx.x] = bad;
    shared_lowest[threadIdx.y][threadIdx.x] = lowest;
    __syncthreads();
    if (threadIdx.y != 0) return;
    oz::ScaledSum level[8];
    for (int y = 0; y < 8; ++y) level[y] = shared_part[y][threadIdx.x];
    for (int o = 4; o > 0; o >>= 1)  // lane bits 2, 1, 0: the threads y and y xor o
      for (int y = 0; y < o; ++y) level[y].add(level[y + o]);
    part = level[0];
    for (int y = 1; y < 8; ++y) {
      largest = fmax(largest, shared_largest[y][threadIdx.x]);
      count += shared_count[y][threadIdx.x], bad |= shared_bad[y][threadIdx.x];
      lowest = min(lowest, shared_lowest[y][threadIdx.x]);
    }
  }
  if (line >= x.rows) return;
  parts[std::int64_t(blockIdx.y) * x.rows + line] =
      SpreadPart{part.sum, largest, part.exponent, count, lowest, bad};
}
// Per line: the chunks added in order; its largest magnitude, non-finite mark, sum, nonzeros and
// lowest set bit into `info`.
__global__ void combine_spreads_kernel(const SpreadPart* parts, std::int64_t lines, int chunks, LineInfo info) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= lines) return;
  oz::ScaledSum line;
  double largest = 0.0;
  int nonzeros = 0, lowest = INT_MAX;
  bool bad = false;
  for (int c = 0; c < chunks; ++c) {
    const SpreadPart part = parts[c * lines + i];
    bad = bad || part.nonfinite;
    line.add(oz::ScaledSum{part.sum, part.exponent}), nonzeros += part.nonzeros;
    largest = fmax(largest, part.largest), lowest = min(lowest, part.lowest_bit);
  }
  info.largest[i] = __double_as_longlong(largest), info.nonfinite[i] = bad;
  info.norm_sum[i] = line.sum, info.nonzeros[i] = nonzeros;
  if (info.lowest_bit) info.lowest_bit[i] = lowest;
}

// Both sides' largest magnitudes, non-finite marks, sums, nonzeros and lowest bits; `parts` holds
// ceil(k / kScanChunk) · (a.rows + bt.rows) SpreadParts.
void spreads(const Lines& a, const Lines& bt, const LineInfo& rows, const LineInfo& cols, SpreadPart* parts,
             cudaStream_t s) {
  const int chunks = int((a.cols + kScanChunk - 1) / kScanChunk);
  if (chunks == 0) return;  // k = 0: every line all zero (as initialised)
  const Lines* sides[2] = {&a, &bt};
  const LineInfo* infos[2] = {&rows, &cols};
  for (int side = 0; side < 2; ++side) {
    const Lines& x = *sides[side];
    if (x.rows == 0) continue;
    const dim3 block(32, 8);
    if (x.cs == 1) spread_parts_kernel<true><<<scan_grid(x, chunks), block, 0, s>>>(x, parts);
    else spread_parts_kernel<false><<<scan_grid(x, chunks), block, 0, s>>>(x, parts);
    IK_CUDA_CHECK_LAUNCH("spread_parts_kernel");
    combine_spreads_kernel<<<unsigned((x.rows + 255) / 256), 256, 0, s>>>(parts, x.rows, chunks, *infos[side]);
    IK_CUDA_CHECK_LAUNCH("combine_spreads_kernel");
    parts += std::int64_t(chunks) * x.rows;
  }
}

// Budgets by count (index c: the budget of the first c moduli at the plan's k).
struct Budgets {
  oz::Budget by_count[kGemmMaxModuli + 1];
};

// Tiles of 32 lines × 128 positions through shared memory: read along the matrix's contiguous
// dimension, written K-contiguous as 4 residues per 32-bit store (a warp stores 128 contiguous bytes).
// Lines in [rows, padded_rows) and positions in [cols, kp) are zeros (kp is a multiple of 16).
// bound_max / bound_mean: instead of the residues, the grouped magnitude bounds of "accurate" scaling
// (one INT8 matrix, kp / kBoundGroup groups at the start of each line of kp: Â for op(A), B̂ for op(B),
// ozaki.hpp). lower: the certificate's lower-bound magnitudes (one INT8 matrix of lines of kp,
// certify::lower_magnitude with `lower_bits`), and each line's units T added to info.units.
enum class ResidueOutput { residues, bound_max, bound_mean, lower };
struct ResidueArgs {
  int count;  // moduli
  oz::ResidueConstants c[kGemmMaxModuli];
};
constexpr int kTileLines = 32, kTilePositions = 128;
// Position b of a tile row sits at column (b mod 4)·32 + b/4: the four positions a thread packs,
// 4x … 4x + 3 for lane x, are read by the warp from 32 consecutive columns (no bank conflicts).
__device__ __forceinline__ int tile_column(int b) { return (b & 3) * 32 + (b >> 2); }
// COUNT: the number of moduli as a compile-time constant (the loop over them unrolls and p, 2^32 mod p
// and 1/p become immediate operands).
template <ResidueOutput kOut, int COUNT>
__global__ void __launch_bounds__(256) residues_kernel(Lines x, LineInfo info, std::int64_t padded_rows,
                                                       std::int64_t kp, ResidueArgs mods, int lower_bits,
                                                       std::int8_t* out) {
  __shared__ double tile[kTileLines][kTilePositions + 1];
  const std::int64_t r0 = std::int64_t(blockIdx.x) * kTileLines, l0 = std::int64_t(blockIdx.y) * kTilePositions;
  const int tid = threadIdx.y * 32 + threadIdx.x;
  // 16 elements a thread, a warp along the matrix's contiguous dimension: with contiguous positions
  // one position b of lines a0, a0 + 2, …; otherwise one line a of positions b0, b0 + 8, ….
  constexpr int kLoads = kTileLines * kTilePositions / 256;
  if (x.cs == 1) {
    const int a0 = tid / kTilePositions, b = tid % kTilePositions;
    const bool real_position = l0 + b < x.cols;
    const double* from = x.data + (r0 + a0) * x.rs + (l0 + b);
#pragma unroll 4
    for (int e = 0; e < kLoads; ++e, from += 2 * x.rs)
      tile[a0 + 2 * e][tile_column(b)] = real_position && r0 + a0 + 2 * e < x.rows ? *from : 0.0;
  } else {
    const int a = tid % kTileLines, b0 = tid / kTileLines;
    const bool real_line = r0 + a < x.rows;
    const double* from = x.data + (r0 + a) * x.rs + (l0 + b0) * x.cs;
#pragma unroll 4
    for (int e = 0; e < kLoads; ++e, from += 8 * x.cs)
      tile[a][tile_column(b0 + 8 * e)] = real_line && l0 + b0 + 8 * e < x.cols ? *from : 0.0;
  }
  __syncthreads();
  const int b = 4 * threadIdx.x;
  const std::int64_t l = l0 + b;
  if (l >= kp && kOut != ResidueOutput::lower) return;  // lower: the whole warp sums its line's units
  for (int a = threadIdx.y; a < kTileLines; a += 8) {
    const std::int64_t r = r0 + a;
    if (r >= padded_rows) break;
    const bool real_line = r < x.rows;
    if constexpr (kOut == ResidueOutput::lower) {
      const int e = real_line ? info.exponent[r] : 0, offset = real_line ? info.offset[r] : 0;
      std::uint32_t packed = 0;
      unsigned long long units = 0;
      for (int u = 0; u < 4; ++u) {
        const double v = real_line && l + u < x.cols ? tile[a][u * 32 + threadIdx.x] : 0.0;
        packed |= std::uint32_t(certify::lower_magnitude(v, e, offset, lower_bits)) << (8 * u);
        units += certify::magnitude_units(v, e);
      }
      if (l < kp) *reinterpret_cast<std::uint32_t*>(out + r * kp + l) = packed;
      for (int o = 16; o > 0; o >>= 1) units += __shfl_xor_sync(0xffffffffu, units, o);
      if (threadIdx.x == 0 && units) atomicAdd(&info.units[r], units);  // integers: any order
    } else if constexpr (kOut != ResidueOutput::residues) {
      static_assert(oz::kBoundGroup == 4, "a thread's four positions are one group");
      std::uint32_t v[oz::kBoundGroup];
      for (int e = 0; e < 4; ++e) {
        const bool real = real_line && l + e < x.cols;
        v[e] = real ? std::uint32_t(oz::magnitude_bound(tile[a][e * 32 + threadIdx.x], info.exponent[r])) : 0u;
      }
      out[r * kp + l / oz::kBoundGroup] = static_cast<std::int8_t>(
          kOut == ResidueOutput::bound_max ? oz::bound_group_max(v) : oz::bound_group_mean(v));
    } else {
      oz::SplitInteger q[4];
      const int shift = real_line ? info.shift[r] : 0;
      for (int e = 0; e < 4; ++e)
        q[e] = oz::split_integer(real_line && l + e < x.cols ? oz::scaled_integer(tile[a][e * 32 + threadIdx.x], shift)
                                                             : 0.0);
      const std::int64_t plane_words = padded_rows * kp / 4;  // kp is a multiple of 16
      auto* to = reinterpret_cast<std::uint32_t*>(out + r * kp + l);
#pragma unroll
      for (int t = 0; t < COUNT; ++t, to += plane_words) {
        // The low bytes of the four residues, packed by byte permutes.
        const std::uint32_t lo =
            __byte_perm(oz::residue_bits(q[0], mods.c[t]), oz::residue_bits(q[1], mods.c[t]), 0x0040);
        const std::uint32_t hi =
            __byte_perm(oz::residue_bits(q[2], mods.c[t]), oz::residue_bits(q[3], mods.c[t]), 0x0040);
        *to = __byte_perm(lo, hi, 0x5410);
      }
    }
  }
}

template <ResidueOutput kOut>
void residues(const Lines& x, const LineInfo& info, std::int64_t padded_rows, std::int64_t kp, const ResidueArgs& mods,
              std::int8_t* out, cudaStream_t s, int lower_bits = 0) {
  if (padded_rows == 0 || kp == 0) return;
  const dim3 grid(unsigned((padded_rows + kTileLines - 1) / kTileLines),
                  unsigned((kp + kTilePositions - 1) / kTilePositions));
  if constexpr (kOut != ResidueOutput::residues) {
    residues_kernel<kOut, 0><<<grid, dim3(32, 8), 0, s>>>(x, info, padded_rows, kp, mods, lower_bits, out);
  } else {
    oz::with_moduli_count(mods.count, [&](auto count) {
      residues_kernel<kOut, decltype(count)::value><<<grid, dim3(32, 8), 0, s>>>(x, info, padded_rows, kp, mods, 0,
                                                                               out);
    });
  }
  IK_CUDA_CHECK_LAUNCH("residues_kernel");
}

// Each line's exponent bound and fast bits (oz::fitted_bits) from its largest magnitude, once the
// count is known (side 0: op(A), 1: op(B)); under norm scaling also the bits its 2-norm allows
// (oz::norm_line_bits, k1 = max(k, 1)).
__global__ void line_bits_kernel(LineInfo info, std::int64_t lines, oz::Budget b, int side, bool norm,
                                 std::int64_t k1) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= lines) return;
  const double largest = __longlong_as_double(static_cast<long long>(info.largest[i]));
  const double cap = side == 0 ? b.cap_a : b.cap_b;
  const int fast = oz::fitted_bits(largest, cap, side == 0 ? b.bits_a : b.bits_b);
  info.exponent[i] = largest == 0.0 ? oz::kNoExponent : oz::exponent_bound(largest);
  info.fast[i] = fast;
  if (norm) info.bits[i] = oz::norm_line_bits(info.norm_sum[i], info.nonzeros[i], cap, k1, fast);
}

// G_ij = accurate_pair_budget(b, C̄_ij) is accurate_pair_budget(b, 1) - ceil_log2(C̄_ij), or that
// constant where the budget is flat (mask 0): a line's least G_ij - x_j comes from its largest
// ceil_log2(C̄_ij)·[not flat] + x_j, one clz per element (C̄_ij in [0, 2^31)).
__device__ __forceinline__ int bound_log2(std::int32_t c, int mask) { return (32 - __clz(max(c - 1, 0))) & mask; }

// Column j keeps fast_j + (slack / 2) bits where that is more, slack = min_i (G_ij - fast_i - fast_j)
// (oz::raised_line_bits, as the reference). 16-byte loads of C̄'s column and of the rows' fast bits.
__global__ void column_bits_kernel(const std::int32_t* bound, std::int64_t m, std::int64_t mp, oz::Budget b,
                                   const int* row_fast, const int* col_fast, int* col_bits) {
  const std::int64_t j = blockIdx.x;
  const int mask = oz::flat_pair_budget(b) ? 0 : -1;
  const std::int32_t* column = bound + j * mp;  // mp is a multiple of 16
  int worst = INT_MIN;
  const std::int64_t m4 = m / 4 * 4;
#pragma unroll 2
  for (std::int64_t i = 4 * std::int64_t(threadIdx.x); i < m4; i += 4 * std::int64_t(blockDim.x)) {
    const int4 c = *reinterpret_cast<const int4*>(column + i);
    const int4 f = *reinterpret_cast<const int4*>(row_fast + i);
    worst = max(worst, max(max(bound_log2(c.x, mask) + f.x, bound_log2(c.y, mask) + f.y),
                           max(bound_log2(c.z, mask) + f.z, bound_log2(c.w, mask) + f.w)));
  }
  for (std::int64_t i = m4 + threadIdx.x; i < m; i += blockDim.x)
    worst = max(worst, bound_log2(column[i], mask) + row_fast[i]);
  __shared__ int part[32];
  worst = __reduce_max_sync(0xffffffffu, worst);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = worst;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < int(blockDim.x >> 5); ++w) worst = max(worst, part[w]);
    const int fast = col_fast[j], room = oz::accurate_pair_budget(b, 1) - worst;
    col_bits[j] = oz::raised_line_bits(fast, fast + (room - fast) / 2);
  }
}

// What row i may keep, min_j (G_ij - col_bits[j]), at most kMaxBits (row_bits starts at kMaxBits;
// finalize_lines_kernel raises the row's fast bits to it: oz::raised_line_bits).
// grid.x: rows (contiguous in C̄), grid.y: chunks of kRowBitsChunk columns (in turn past 65535).
constexpr int kRowBitsChunk = 64;
__global__ void row_bits_kernel(const std::int32_t* bound, std::int64_t m, std::int64_t n, std::int64_t mp,
                                oz::Budget b, const int* col_bits, int* row_bits) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int mask = oz::flat_pair_budget(b) ? 0 : -1;
  if (i >= m) return;
  int worst = INT_MIN;
  for (std::int64_t j0 = std::int64_t(blockIdx.y) * kRowBitsChunk; j0 < n; j0 += std::int64_t(gridDim.y) * kRowBitsChunk) {
    const std::int64_t j1 = min(n, j0 + kRowBitsChunk);
#pragma unroll 8
    for (std::int64_t j = j0; j < j1; ++j) worst = max(worst, bound_log2(bound[j * mp + i], mask) + col_bits[j]);
  }
  atomicMin(&row_bits[i], oz::accurate_pair_budget(b, 1) - worst);
}

// Each line's shift; the fewest bits and the non-finite lines for the report. Under fast scaling
// every line keeps its fast bits, under norm scaling line_bits_kernel's.
__global__ void finalize_lines_kernel(LineInfo info, std::int64_t lines, GemmScaling scaling, int* fewest_bits,
                                      int* nonfinite_lines) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= lines) return;
  const int bits = scaling == GemmScaling::accurate ? oz::raised_line_bits(info.fast[i], info.bits[i])
                   : scaling == GemmScaling::norm   ? info.bits[i]
                                                    : info.fast[i];
  info.shift[i] = oz::line_shift(info.exponent[i], bits);
  atomicMin(fewest_bits, bits);
  if (info.nonfinite[i]) atomicAdd(nonfinite_lines, 1);
}

// ------------------------------------------------------------------ the certificate (certify::)
// Per line, after the spread pass: its exponent, lower-bound offset, exactness and θ bits, and its
// table of counts by bits needed (norm scaling's bits at every count lo … 20; side 0: op(A)).
__global__ void line_facts_kernel(LineInfo info, std::int64_t lines, Budgets budgets, int lo, int side,
                                  std::int64_t k1) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= lines) return;
  const double largest = __longlong_as_double(static_cast<long long>(info.largest[i]));
  const int exponent = largest == 0.0 ? oz::kNoExponent : oz::exponent_bound(largest), nonzeros = info.nonzeros[i];
  const double sum = info.norm_sum[i];
  info.exponent[i] = exponent;
  info.offset[i] = certify::lower_offset(sum, nonzeros);
  alignas(16) std::uint8_t table[certify::kNeedTable];
  if (info.nonfinite[i] || nonzeros == 0) {  // never read: no element of the line is certified
    for (auto& t : table) t = certify::kNoCount;
  } else {
    const certify::LineFacts facts = certify::line_facts(0, exponent, info.lowest_bit[i], nonzeros);
    info.exact_bits[i] = facts.exact_bits, info.theta_bits[i] = facts.theta_bits;
    certify::count_table(lo, [&](int c) {
      return certify::norm_bits(budgets.by_count[c], side, largest, sum, nonzeros, k1);
    }, table);
  }
  auto* to = reinterpret_cast<uint4*>(info.count_for + i * certify::kNeedTable);
  const auto* from = reinterpret_cast<const uint4*>(table);
#pragma unroll
  for (int q = 0; q < certify::kNeedTable / 16; ++q) to[q] = from[q];
}

// Each element's count (the larger of its row's and its column's, certify::line_count) over tiles of
// 32 × 32 elements of Λ (column-major, mp), each line's largest into info.most. Elements of a line
// holding Inf/NaN or no nonzero need none (computed natively, or exactly zero).
constexpr int kCertifyTile = 32;
__global__ void __launch_bounds__(256) certify_elements_kernel(const std::int32_t* lambda, std::int64_t m,
                                                               std::int64_t n, std::int64_t mp, LineInfo rows,
                                                               LineInfo cols, double rho_factor) {
  constexpr int kT = kCertifyTile;
  __shared__ __align__(16) std::uint8_t table[2][kT][certify::kNeedTable];
  __shared__ certify::LineFacts facts[2][kT];
  __shared__ int offset[2][kT], live[2][kT], row_most[8][kT];
  const std::int64_t i0 = std::int64_t(blockIdx.x) * kT;
  const int tid = threadIdx.y * kT + threadIdx.x;
  for (std::int64_t j0 = std::int64_t(blockIdx.y) * kT; j0 < n; j0 += std::int64_t(gridDim.y) * kT) {
    // The tile's 32 rows and 32 columns: facts, then tables (16 bytes a thread). Each side's LineInfo
    // is named, not chosen at run time (which would copy both to local memory).
    auto load_facts = [&](const LineInfo& info, int side, int at, std::int64_t line, std::int64_t lines) {
      const bool real = line < lines && !info.nonfinite[line] && info.nonzeros[line] > 0;
      live[side][at] = real;
      if (!real) return;
      facts[side][at] = certify::LineFacts{double(info.units[line]), info.exact_bits[line], info.theta_bits[line]};
      offset[side][at] = info.offset[line];
    };
    if (tid < kT) load_facts(rows, 0, tid, i0 + tid, m);
    else if (tid < 2 * kT) load_facts(cols, 1, tid - kT, j0 + tid - kT, n);
    {
      const int line_of = tid / 4, quarter = tid % 4, at = line_of % kT;
      const bool column = line_of >= kT;
      const std::int64_t line = (column ? j0 : i0) + at;
      const std::uint8_t* from = column ? cols.count_for : rows.count_for;
      if (line < (column ? n : m))
        reinterpret_cast<uint4*>(&table[column][at][0])[quarter] =
            reinterpret_cast<const uint4*>(from + line * certify::kNeedTable)[quarter];
    }
    __syncthreads();
    const int x = threadIdx.x;
    const std::int64_t i = i0 + x;
    int most = 0;
    for (int y = threadIdx.y; y < kT; y += 8) {
      const std::int64_t j = j0 + y;
      int need = 0;
      if (i < m && j < n && live[0][x] && live[1][y]) {
        const double rho = certify::rho(rho_factor, lambda[j * mp + i], offset[0][x], offset[1][y]);
        need = max(certify::line_count(table[0][x], facts[0][x], facts[1][y].units, rho),
                   certify::line_count(table[1][y], facts[1][y], facts[0][x].units, rho));
      }
      most = max(most, need);
      const int column_most = __reduce_max_sync(0xffffffffu, unsigned(need));
      if (x == 0 && column_most > 0) atomicMax(&cols.most[j], column_most);
    }
    row_most[threadIdx.y][x] = most;
    __syncthreads();
    if (threadIdx.y == 0) {
      for (int y = 1; y < 8; ++y) most = max(most, row_most[y][x]);
      if (i < m && most > 0) atomicMax(&rows.most[i], most);
    }
    __syncthreads();  // the tile's facts are read before the next tile's are written
  }
}

// Lines by the count their elements need (certify::CountHistogram: [0, kNoCount], then non-finite).
constexpr int kHistogramBins = certify::kNoCount + 2;
__global__ void count_histogram_kernel(LineInfo info, std::int64_t lines, unsigned long long* hist) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < lines) atomicAdd(&hist[info.nonfinite[i] ? kHistogramBins - 1 : info.most[i]], 1ull);
}

// The lines the decision sends to native float64: all, or the finite lines needing more than `moduli`.
__global__ void mark_native_kernel(LineInfo info, std::int64_t lines, int moduli, bool all) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < lines) info.native[i] = all || (!info.nonfinite[i] && info.most[i] > moduli);
}

// The indices of the native lines in ascending order (one block: the lists are short or the decision
// took the whole call, which needs none).
constexpr int kListThreads = 1024;
__global__ void __launch_bounds__(kListThreads) list_native_kernel(const int* native, std::int64_t lines, int* list) {
  using Scan = cub::BlockScan<int, kListThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ int base;
  if (threadIdx.x == 0) base = 0;
  __syncthreads();
  for (std::int64_t i0 = 0; i0 < lines; i0 += kListThreads) {
    const std::int64_t i = i0 + threadIdx.x;
    const int flag = i < lines && native[i];
    int position, total;
    Scan(scan).ExclusiveSum(flag, position, total);
    if (flag) list[base + position] = int(i);
    __syncthreads();
    if (threadIdx.x == 0) base += total;
    __syncthreads();
  }
}

// Lines `list[r]` (or r) of x, r < count, as a row-major count × k matrix.
__global__ void gather_lines_kernel(Lines x, const int* list, std::int64_t count, double* out) {
  const std::int64_t total = count * x.cols;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = e / x.cols, l = e % x.cols;
    out[e] = x(list ? list[r] : r, l);
  }
}

struct OutputArgs {
  double* data;
  std::int64_t rs, cs;
  double alpha, beta;
};

// The native lines' products (column-major count × width, the other side's lines o0 … o0 + width)
// into C with alpha/beta: line list[r] (or r) is a row of C, or with `transposed` a column. Elements
// whose other line holds Inf/NaN belong to the reconstruction (unless `every`).
__global__ void scatter_native_kernel(const double* product, std::int64_t count, std::int64_t width, std::int64_t o0,
                                      const int* list, const int* other_nonfinite, bool every, bool transposed,
                                      OutputArgs c) {
  const std::int64_t total = count * width;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = e % count, o = o0 + e / count, line = list ? list[r] : r;
    if (!every && other_nonfinite[o]) continue;
    const std::int64_t i = transposed ? o : line, j = transposed ? line : o;
    double& out = c.data[i * c.rs + j * c.cs];
    out = oz::finish(c.alpha, product[e], c.beta, out);
  }
}

// Without cuBLAS: the native lines' elements one thread each, one fma per position in order (within
// γ_k, as a DGEMM).
__global__ void native_elements_kernel(Lines x, Lines y, const int* list, std::int64_t count, const int* other_nonfinite,
                                       bool every, bool transposed, OutputArgs c) {
  const std::int64_t total = count * y.rows;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = e % count, o = e / count, line = list ? list[r] : r;
    if (!every && other_nonfinite[o]) continue;
    double sum = 0.0;
    for (std::int64_t l = 0; l < x.cols; ++l)
      sum = transposed ? fma(y(o, l), x(line, l), sum) : fma(x(line, l), y(o, l), sum);
    const std::int64_t i = transposed ? o : line, j = transposed ? line : o;
    double& out = c.data[i * c.rs + j * c.cs];
    out = oz::finish(c.alpha, sum, c.beta, out);
  }
}

// Four consecutive INT32 products mod p, packed one byte each.
__device__ __forceinline__ std::uint32_t packed_residues(const int4& x, const oz::ResidueConstants& c) {
  return oz::product_residue(x.x, c) | oz::product_residue(x.y, c) << 8 | oz::product_residue(x.z, c) << 16 |
         oz::product_residue(x.w, c) << 24;
}

// INT32 products of one group of moduli, reduced mod p and added to the per-modulus residues of C.
// Four elements per thread (16-byte loads, 4-byte stores); per_modulus is a multiple of 256.
__global__ void reduce_kernel(const std::int32_t* prod, std::int64_t per_modulus, int group, ResidueArgs mods,
                              int first_modulus, bool first_chunk, std::uint8_t* residues) {
  const std::int64_t i = 4 * (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x);
  if (i >= per_modulus) return;
  for (int u = 0; u < group; ++u) {
    const int t = first_modulus + u, p = mods.c[t].p;
    const int4 x = *reinterpret_cast<const int4*>(prod + u * per_modulus + i);
    auto* out = reinterpret_cast<std::uint32_t*>(residues + t * per_modulus + i);
    const std::uint32_t before = first_chunk ? 0u : *out;
    std::uint32_t packed = 0;
    const int xs[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      std::uint32_t r = oz::product_residue(xs[e], mods.c[t]) + ((before >> (8 * e)) & 0xff);
      if (r >= std::uint32_t(p)) r -= p;
      packed |= r << (8 * e);
    }
    *out = packed;
  }
}

// A block reconstructs tiles of 32 × 32 elements of C (columns j0 … n), in turn (a grid the size of
// the resident blocks), each in two phases. First each thread takes four consecutive rows of one column: one 32-bit load per
// modulus brings their residues (rows are contiguous in the residues and mp is a multiple of 16) or,
// with kFromProducts, one 16-byte load per modulus their INT32 products, reduced here; the products
// are parked in shared memory. Then the alpha/beta update and the store run along whichever of i and
// j is contiguous in C, so a row-major C is written in whole 256-byte runs instead of one 8-byte store
// per sector.
constexpr int kReconstructTile = 32, kReconstructRows = 4, kReconstructThreads = 256;
// The source holds column j of C at plane offset (j - src_j0)·mp, modulus t at t·plane.
struct ReconstructSource {
  const void* data;
  std::int64_t plane, src_j0;
};
// Four blocks per SM: 64 registers (the four elements' sums need more; 80 and 138 ran slower).
template <int COUNT, bool kFromProducts, int L = oz::crt_limbs(COUNT)>
__global__ void __launch_bounds__(kReconstructThreads, 4)
    reconstruct_kernel(const oz::CrtTable<L> crt, const ReconstructSource src, const ResidueArgs mods, std::int64_t m,
                       std::int64_t n, std::int64_t mp, LineInfo rows, LineInfo cols, Lines a, Lines bt, OutputArgs c,
                       std::int64_t j0) {
  constexpr int kT = kReconstructTile, kGroups = kT / kReconstructRows;
  __shared__ double tile[kT][kT + 1];  // [j][i], padded
  __shared__ bool remedied[kT][kT + 1];  // [j][i]: the certificate's native lines, written by their remedy
  const std::int64_t tiles_m = (m + kT - 1) / kT, tiles = tiles_m * ((n - j0 + kT - 1) / kT);
  for (std::int64_t t_index = blockIdx.x; t_index < tiles; t_index += gridDim.x) {
    const std::int64_t it = t_index % tiles_m * kT, jt = j0 + t_index / tiles_m * kT;
    // Elements in lines the certificate sent to native float64 are their remedy's, unless the other
    // line holds Inf/NaN (those are the reconstruction's, as on the CPU). Flagged here, in shared
    // memory, with the store's mapping: read where the stores are, they cost ~200 bytes of spills.
    if (rows.native) {
#pragma unroll
      for (int u = 0; u < kT * kT / kReconstructThreads; ++u) {
        const int e = int(threadIdx.x) + u * kReconstructThreads, di = e % kT, dj = e / kT;
        const std::int64_t i = it + di, j = jt + dj;
        remedied[dj][di] = i < m && j < n && (rows.native[i] || cols.native[j]) && !(rows.nonfinite[i] || cols.nonfinite[j]);
      }
    }
    {
      const int di0 = kReconstructRows * (int(threadIdx.x) % kGroups), dj = int(threadIdx.x) / kGroups;
      const std::int64_t i0 = it + di0, j = jt + dj;
      if (i0 < m && j < n) {
        std::uint32_t packed[COUNT];
        const std::int64_t at = (j - src.src_j0) * mp + i0;
#pragma unroll
        for (int t = 0; t < COUNT; ++t) {
          if constexpr (kFromProducts)
            packed[t] = packed_residues(*reinterpret_cast<const int4*>(static_cast<const std::int32_t*>(src.data) +
                                                                       t * src.plane + at),
                                        mods.c[t]);
          else
            packed[t] = *reinterpret_cast<const std::uint32_t*>(static_cast<const std::uint8_t*>(src.data) +
                                                                 t * src.plane + at);
        }
        const bool column_nonfinite = cols.nonfinite[j];
        const int column_shift = cols.shift[j];
        auto residue = [&](int t, int e) { return __byte_perm(packed[t], 0u, 0x4440u + e); };
        // Up to 16 moduli, the mixed digits' sums of the four elements together (each modulus's
        // constants read once for all four); the elements they leave (NaN), those of non-finite lines
        // and those of more moduli go the one-at-a-time way after.
        int slow = (1 << kReconstructRows) - 1;
        if constexpr (COUNT <= 16) {
          double H[kReconstructRows], B[kReconstructRows];
          std::uint64_t S_lo[kReconstructRows];
          oz::crt_mixed_sums<COUNT>(crt.mixed, COUNT, residue, H, B, S_lo);
          slow = 0;
#pragma unroll
          for (int e = 0; e < kReconstructRows; ++e) {
            const int shift = i0 + e < m ? rows.shift[i0 + e] + column_shift : 0;
            const double product = oz::crt_mixed_finish(crt.mixed, H[e], B[e], S_lo[e], shift);
            tile[dj][di0 + e] = product;
            if (product != product) slow |= 1 << e;
          }
        }
#pragma unroll 1
        for (int e = 0; e < kReconstructRows && i0 + e < m; ++e) {
          const std::int64_t i = i0 + e;
          if (column_nonfinite || rows.nonfinite[i]) {  // native arithmetic, in the reference's order
            double sum = 0.0;
            for (std::int64_t l = 0; l < a.cols; ++l) sum = fma(a(i, l), bt(j, l), sum);
            tile[dj][di0 + e] = sum;
          } else if (slow >> e & 1) {
            tile[dj][di0 + e] = oz::crt_limbs_to_double<L, COUNT>(
                crt, [&](int t) { return residue(t, e); }, rows.shift[i] + column_shift);
          }
        }
      }
    }
    __syncthreads();
    const bool along_j = c.cs == 1 && c.rs != 1;  // C's contiguous direction
    const int lane = int(threadIdx.x) % kT, group = int(threadIdx.x) / kT;
#pragma unroll
    for (int u = 0; u < kT * kT / kReconstructThreads; ++u) {
      const int across = group + u * (kReconstructThreads / kT);
      const int di = along_j ? across : lane, dj = along_j ? lane : across;
      const std::int64_t i = it + di, j = jt + dj;
      if (i >= m || j >= n) continue;
      if (rows.native && remedied[dj][di]) continue;
      double& out = c.data[i * c.rs + j * c.cs];
      out = oz::finish(c.alpha, tile[dj][di], c.beta, out);
    }
    __syncthreads();  // the tile is read before the next one is written
  }
}

unsigned blocks_for(std::int64_t count, int threads) {
  const std::int64_t b = (count + threads - 1) / threads;
  if (b > 0x7fffffff) raise<ValueError>("gemm: ", count, " elements are too many for one launch");
  return static_cast<unsigned>(b);
}

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

void destroy_layouts(const CublasLtApi* api, const Int8Product& sh) {
  for (auto* l : {sh.a, sh.b, sh.c})
    if (l) api->layout_destroy(l);
}

// Column blocks of about kProductColumns (a multiple of kPad that divides np), or np where np has no
// such divisor of at least kProductColumns / 2 (narrow blocks would only add calls).
constexpr std::int64_t kProductColumns = 8192;
std::int64_t product_block_columns(std::int64_t np) {
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

// A certified run's decision, kept in the workspace for report(); with `counters`, the lines holding
// Inf/NaN too (the whole call went native: no finalize_lines_kernel counts them).
__global__ void store_decision_kernel(certify::Decision* to, certify::Decision decision, int* counters,
                                      int nonfinite_rows, int nonfinite_cols) {
  *to = decision;
  if (counters) counters[0] = nonfinite_rows, counters[1] = nonfinite_cols;
}

// The native remedy's product buffer: C's lines in blocks of at most this many elements (at least one
// line), so that the whole call's DGEMM runs in a few wide blocks without a buffer the size of C.
constexpr std::int64_t kNativeProductElements = std::int64_t(1) << 25;

}  // namespace

}  // namespace detail

struct GemmPlan::Impl {
  std::int64_t m, n, k, mp, np, kp;
  bool trans_a, trans_b;
  GemmContract contract;
  Device device;
  int sms = 0;          // the device's multiprocessors
  GemmBackend backend;  // cublas, mma or wgmma (automatic resolved)
  int group;  // moduli whose INT32 products are held at once (residue planes)
  // > 0: C in slabs of this many columns, the INT32 products of every modulus held for one slab and
  // reduced inside the reconstruction (no residue planes: 2 bytes less per modulus and element of C
  // through DRAM); 0: INT32 products reduced into residue planes, K in chunks.
  std::int64_t slab = 0;
  // Counts a run may use: contract.moduli for a fixed contract; for a certified one every count from
  // the smallest that leaves both sides bits to 20, chosen per run by the certificate. The workspace
  // is sized for `hi` moduli.
  int lo = 0, hi = 0;
  bool certified = false;
  double rtol = 0;          // a certified contract's tolerance at k
  int lower_bits = 0;       // certify::lower_bits(k)
  std::int64_t native_product_elements = 0;
  detail::ozaki::CrtConstants crts[kGemmMaxModuli + 1];  // by count, lo … hi
  detail::Budgets budgets{};
  detail::ResidueArgs mods;
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
                         std::int64_t x_stride = 0, std::int64_t y_stride = 0) const {
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

GemmPlan::GemmPlan(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a, bool trans_b, GemmContract contract,
                   Device device, GemmBackend backend)
    : impl_(std::make_unique<Impl>()) {
  using namespace detail;
  if (device.type != DeviceType::cuda) raise<ValueError>("GemmPlan: device must be a CUDA device, got ", device_name(device));
  if (m < 0 || n < 0 || k < 0) raise<ValueError>("GemmPlan: m, n, k must be >= 0, got ", m, ", ", n, ", ", k);
  Impl& p = *impl_;
  p.certified = contract.certified();
  if (p.certified) {
    check_certified_contract(contract, k);
    contract.scaling = GemmScaling::norm;
    ozaki::Budget budgets[kGemmMaxModuli + 1];
    p.lo = certify::certified_counts(k, budgets), p.hi = kGemmMaxModuli;
    p.rtol = contract.rtol_at(k), p.lower_bits = certify::lower_bits(std::max<std::int64_t>(k, 1));
  } else {
    p.lo = p.hi = contract.moduli;
  }
  for (int count = p.lo; count <= p.hi; ++count) {
    GemmContract fixed = contract;
    fixed.moduli = count, fixed.native = false;
    const CheckedContract checked = check_contract(fixed, k);
    p.crts[count] = checked.crt, p.budgets.by_count[count] = checked.budget;
  }
  p.m = m, p.n = n, p.k = k, p.trans_a = trans_a, p.trans_b = trans_b, p.contract = contract, p.device = device;
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
  p.mp = round_up(m, kPad), p.np = round_up(n, kPad), p.kp = round_up(k, kPad);
  if (p.mp > INT_MAX || p.np > INT_MAX) raise<ValueError>("gemm: m and n must be below 2^31");
  const auto& moduli = gemm_moduli();
  p.mods.count = p.hi;
  for (int t = 0; t < p.hi; ++t) p.mods.c[t] = ozaki::residue_constants(moduli[t]);
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
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t off = at;
    at += (bytes + 255) / 256 * 256;
    return off;
  };
  w.counters = take(kCounters * sizeof(int));
  for (auto& o : w.row_int) o = take(std::size_t(m) * sizeof(int));
  for (auto& o : w.col_int) o = take(std::size_t(n) * sizeof(int));
  w.row_largest = take(std::size_t(m) * sizeof(double));
  w.col_largest = take(std::size_t(n) * sizeof(double));
  const bool norms = p.certified || contract.scaling == GemmScaling::norm;  // the spread pass, not the scan
  w.row_sum = take(norms ? std::size_t(m) * sizeof(double) : 0);
  w.col_sum = take(norms ? std::size_t(n) * sizeof(double) : 0);
  const std::size_t certified_bytes = p.certified ? 1 : 0;
  w.row_units = take(certified_bytes * std::size_t(m) * 8);
  w.col_units = take(certified_bytes * std::size_t(n) * 8);
  w.row_table = take(certified_bytes * std::size_t(m) * certify::kNeedTable);
  w.col_table = take(certified_bytes * std::size_t(n) * certify::kNeedTable);
  w.histogram = take(certified_bytes * 2 * kHistogramBins * sizeof(unsigned long long));
  w.decision = take(sizeof(certify::Decision));
  const std::size_t chunks = std::size_t((k + kScanChunk - 1) / kScanChunk);
  w.parts = take(norms ? chunks * std::size_t(m + n) * sizeof(SpreadPart) : 0);
  // The residues; a certified run's native remedy gathers lines into them afterwards (hi = 20 >= 8 bytes).
  w.ra = take(std::size_t(p.hi) * p.mp * p.kp);
  w.rb = take(std::size_t(p.hi) * p.np * p.kp);
  // INT32 products (of a group of moduli, or of every modulus for one slab); under accurate scaling
  // first the bound C̄, for a certified contract first Λ (mp × np).
  const bool bound_product = contract.scaling == GemmScaling::accurate || p.certified;
  w.prod = take(p.slab ? std::max(std::size_t(p.hi) * p.mp * std::size_t(p.slab) * 4, product_bytes)
                : fused ? (bound_product ? product_bytes : 0)
                        : std::size_t(p.group) * product_bytes);
  w.residues = take(p.slab ? 0 : planes);  // residue planes of C
  p.native_product_elements = std::max({std::min(p.mp * p.np, kNativeProductElements), p.mp, p.np});
  w.native_product = take(certified_bytes * std::size_t(p.native_product_elements) * sizeof(double));
  w.cublas = take(p.backend == GemmBackend::cublas || p.certified ? kCublasWorkspace : 0);
  w.total = at;

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

namespace {
void check_workspace(std::size_t needed, const void* workspace, std::size_t bytes) {
  if (bytes < needed) raise<ValueError>("gemm: workspace has ", bytes, " bytes; this plan needs ", needed);
  if (!workspace && needed) raise<ValueError>("gemm: workspace is null");
  if (reinterpret_cast<std::uintptr_t>(workspace) % 256) raise<ValueError>("gemm: workspace must be 256-byte aligned");
}

void check_operand(const ArrayView& v, const char* name, std::int64_t rows, std::int64_t cols, const Device& device) {
  detail::check_float64_matrix(v, name);
  if (v.device.type != DeviceType::cuda || v.device.id != device.id)
    raise<ValueError>("gemm: ", name, " is on ", device_name(v.device), "; this plan runs on ", device_name(device));
  if (v.shape[0] != rows || v.shape[1] != cols)
    raise<ValueError>("gemm: ", name, " is ", v.shape[0], "x", v.shape[1], "; this plan expects ", rows, "x", cols);
}
}  // namespace

namespace detail {
namespace {

// A native remedy: the lines `list` (count of them; all lines in order where list is null) of X
// times the other side's lines Y, into C with alpha/beta (X's lines are C's rows, or with
// `transposed` its columns). By cuBLAS DGEMM in blocks of Y's lines through `product` (X's lines
// gathered into `x_buffer`, Y's into `y_buffer` where its strides are not BLAS's), or without
// cuBLAS by native_elements_kernel. Elements whose other line holds Inf/NaN are left to the
// reconstruction unless `every`.
struct NativeRemedy {
  Lines x, y;
  const int* list;
  std::int64_t count;
  const int* other_nonfinite;
  bool every, transposed;
};
void native_remedy(const NativeRemedy& r, const OutputArgs& out, cublasHandle_t handle, double* x_buffer,
                   double* y_buffer, double* product, std::int64_t product_elements, cudaStream_t s) {
  if (r.count == 0 || r.y.rows == 0) return;
  const int threads = 256;
  auto grid = [&](std::int64_t elements) {
    return unsigned(std::min<std::int64_t>((elements + threads - 1) / threads, std::int64_t(1) << 20));
  };
  if (!handle) {
    native_elements_kernel<<<grid(r.count * r.y.rows), threads, 0, s>>>(r.x, r.y, r.list, r.count, r.other_nonfinite,
                                                                        r.every, r.transposed, out);
    IK_CUDA_CHECK_LAUNCH("native_elements_kernel");
    return;
  }
  const std::int64_t k = r.x.cols;
  // X's lines as a row-major count × k matrix (column-major k × count: op T, ld k), gathered unless
  // they are all of X and already so laid out.
  const double* x = r.x.data;
  std::int64_t ldx = r.x.rs;
  cublasOperation_t op_x = CUBLAS_OP_T;
  if (k > 0 && (r.list || !(r.x.cs == 1 && r.x.rs >= k && r.x.rs <= INT_MAX))) {
    gather_lines_kernel<<<grid(r.count * k), threads, 0, s>>>(r.x, r.list, r.count, x_buffer);
    IK_CUDA_CHECK_LAUNCH("gather_lines_kernel");
    x = x_buffer, ldx = std::max<std::int64_t>(k, 1);
  }
  // Yᵀ (k × lines): Y row-major is column-major k × lines (op N, ld rs); Y column-major is lines × k
  // (op T, ld cs); anything else gathered row-major.
  const double* y = r.y.data;
  std::int64_t ldy = r.y.rs, y_step = r.y.rs;
  cublasOperation_t op_y = CUBLAS_OP_N;
  if (r.y.rs == 1 && r.y.cs >= std::max<std::int64_t>(r.y.rows, 1) && r.y.cs <= INT_MAX && r.y.cs != 1) {
    op_y = CUBLAS_OP_T, ldy = r.y.cs, y_step = 1;
  } else if (k > 0 && !(r.y.cs == 1 && r.y.rs >= k && r.y.rs <= INT_MAX)) {
    gather_lines_kernel<<<grid(r.y.rows * k), threads, 0, s>>>(r.y, nullptr, r.y.rows, y_buffer);
    IK_CUDA_CHECK_LAUNCH("gather_lines_kernel");
    y = y_buffer, ldy = y_step = std::max<std::int64_t>(k, 1);
  }
  const std::int64_t width = std::max<std::int64_t>(1, std::min(r.y.rows, product_elements / r.count));
  const double one = 1.0, zero = 0.0;
  for (std::int64_t o0 = 0; o0 < r.y.rows; o0 += width) {
    const std::int64_t w = std::min(width, r.y.rows - o0);
    if (k == 0) {
      IK_CUDA_CHECK(cudaMemsetAsync(product, 0, std::size_t(r.count * w) * sizeof(double), s));
    } else {
      IK_CUBLAS_CHECK(cublas_api().dgemm(handle, op_x, op_y, int(r.count), int(w), int(k), &one, x, int(ldx),
                                         y + o0 * y_step, int(ldy), &zero, product, int(r.count)));
    }
    scatter_native_kernel<<<grid(r.count * w), threads, 0, s>>>(product, r.count, w, o0, r.list, r.other_nonfinite,
                                                                r.every, r.transposed, out);
    IK_CUDA_CHECK_LAUNCH("scatter_native_kernel");
  }
}

}  // namespace
}  // namespace detail

void GemmPlan::run(const ArrayView& a, const ArrayView& b, const ArrayView& c, double alpha, double beta,
                   void* workspace, std::size_t workspace_bytes, Stream stream_handle, GemmTimings* timings) const {
  using namespace detail;
  const Impl& p = *impl_;
  check_operand(a, "a", p.trans_a ? p.k : p.m, p.trans_a ? p.m : p.k, p.device);
  check_operand(b, "b", p.trans_b ? p.n : p.k, p.trans_b ? p.k : p.n, p.device);
  check_operand(c, "c", p.m, p.n, p.device);
  check_output(c, a, b);
  check_workspace(p.layout.total, workspace, workspace_bytes);

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
  auto line_info = [&](const std::size_t (&o)[kLineArrays], std::size_t largest, std::size_t sum, std::size_t units,
                       std::size_t table) {
    auto ints = [&](LineArray which) { return reinterpret_cast<int*>(at(o[which])); };
    LineInfo info{};
    info.exponent = ints(kExponent), info.nonfinite = ints(kNonfinite), info.bits = ints(kBits);
    info.shift = ints(kShift), info.fast = ints(kFast), info.nonzeros = ints(kNonzeros);
    info.largest = reinterpret_cast<unsigned long long*>(at(largest)), info.norm_sum = reinterpret_cast<double*>(at(sum));
    if (p.certified) {
      info.native = ints(kNativeLine);
      info.lowest_bit = ints(kLowestBit), info.offset = ints(kOffset), info.exact_bits = ints(kExactBits);
      info.theta_bits = ints(kThetaBits), info.most = ints(kMost);
      info.units = reinterpret_cast<unsigned long long*>(at(units)), info.count_for = at(table);
    }
    return info;
  };
  const LineInfo rows = line_info(w.row_int, w.row_largest, w.row_sum, w.row_units, w.row_table),
                 cols = line_info(w.col_int, w.col_largest, w.col_sum, w.col_units, w.col_table);
  int* counters = reinterpret_cast<int*>(at(w.counters));
  const Lines A{static_cast<const double*>(a.data), p.m, p.k, p.trans_a ? a.strides[1] : a.strides[0],
                p.trans_a ? a.strides[0] : a.strides[1]};
  // Columns of op(B) as lines: element (j, l) of op(B)ᵀ.
  const Lines Bt{static_cast<const double*>(b.data), p.n, p.k, p.trans_b ? b.strides[0] : b.strides[1],
                 p.trans_b ? b.strides[1] : b.strides[0]};
  auto* ra = reinterpret_cast<std::int8_t*>(at(w.ra));
  auto* rb = reinterpret_cast<std::int8_t*>(at(w.rb));
  auto* prod = reinterpret_cast<std::int32_t*>(at(w.prod));
  auto* res = p.slab ? nullptr : reinterpret_cast<std::uint8_t*>(at(w.residues));  // no planes with slabs

  std::unique_ptr<Event> marks[4];
  auto mark = [&](int i) {
    if (!timings) return;
    marks[i] = std::make_unique<Event>(p.device);
    marks[i]->record(stream_handle);
  };
  mark(0);
  const int threads = 256;
  init_lines_kernel<<<blocks_for(std::max({p.m, p.n, std::int64_t(kCounters)}), threads), threads, 0, s>>>(
      rows, p.m, cols, p.n, counters);
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
  const bool norm = p.contract.scaling == GemmScaling::norm;  // certified contracts included
  if (norm) {  // the lines' sums from the spread pass, which also scans them
    spreads(A, Bt, rows, cols, reinterpret_cast<SpreadPart*>(at(w.parts)), s);
  } else {
    scan_lines(A, rows, s);
    scan_lines(Bt, cols, s);
  }
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
    // The certificate: each line's facts and count table, the lower-bound magnitudes and their INT8
    // product Λ, each element's count; then the host reads the histogram and decides (one wait).
    line_facts_kernel<<<blocks_for(p.m, threads), threads, 0, s>>>(rows, p.m, p.budgets, p.lo, 0, k1);
    line_facts_kernel<<<blocks_for(p.n, threads), threads, 0, s>>>(cols, p.n, p.budgets, p.lo, 1, k1);
    IK_CUDA_CHECK_LAUNCH("line_facts_kernel");
    residues<ResidueOutput::lower>(A, rows, p.mp, p.kp, p.mods, ra, s, p.lower_bits);
    residues<ResidueOutput::lower>(Bt, cols, p.np, p.kp, p.mods, rb, s, p.lower_bits);
    Int8Product lower_shape;  // Λ = Ǎᵀ·B̌ over all of kp (exact: certify::lower_bits)
    lower_shape.kc = p.kp, lower_shape.nc = p.np;
    if (p.kp == 0) IK_CUDA_CHECK(cudaMemsetAsync(prod, 0, std::size_t(per_product) * 4, s));
    else IK_CUBLAS_CHECK(p.product(lower_shape, ra, rb, prod, p.np, at(w.cublas), s));
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
      IK_CUBLAS_CHECK(p.product(p.shape(kc), ra + t0 * p.mp * p.kp + l0, rb + (t0 * p.np + j0) * p.kp + l0, prod,
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

    if (p.k > 0) {
      residues<ResidueOutput::residues>(A, rows, p.mp, p.kp, mods, ra, s);
      residues<ResidueOutput::residues>(Bt, cols, p.np, p.kp, mods, rb, s);
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
      } else if (p.backend == GemmBackend::wgmma) {  // residues straight from the products' epilogue, all moduli at once
        for (std::int64_t l0 = 0; l0 < p.kp; l0 += oz::kChunkK) {
          const Int8Product& sh = p.shape(std::min(oz::kChunkK, p.kp - l0));
          for (std::int64_t j0 = 0; j0 < p.np; j0 += sh.nc)
            gemm_wgmma::int8_product_residues(ra + l0, p.mp * p.kp, rb + j0 * p.kp + l0, p.np * p.kp, res + j0 * p.mp,
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
  if (handle_lock.owns_lock()) handle_lock.unlock();
  if (timings) {
    marks[3]->synchronize();
    timings->scale_ms = marks[1]->elapsed_ms_since(*marks[0]);
    timings->products_ms = marks[2]->elapsed_ms_since(*marks[1]);
    timings->reconstruct_ms = marks[3]->elapsed_ms_since(*marks[2]);
  }
}

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
  gemm_mma::fill_pseudo_random_kernel<<<1024, 256, 0, s>>>(ra, p.mp * p.kp);
  gemm_mma::fill_pseudo_random_kernel<<<1024, 256, 0, s>>>(rb, p.np * p.kp);
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
