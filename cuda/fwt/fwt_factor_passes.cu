// N = m·2^k on CUDA (H_N = H_m ⊗ H_{2^k}): in one pass where 2^k fits a tile (packed rows by bulk
// copies, other layouts through the factor tile); past one table row H_m ⊗ H_{2^A} across the
// blocks of 2^(k-A) after their own transforms (the factor columns, which with a power of two for
// H_m are also the outer pass of long rows); else H_m across the m blocks of 2^k. All are
// memory-bound: one read and one write of each element.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "common/ptx.cuh"
#include "core/cuda_check.hpp"
#include "fwt/fwt_line_launch.cuh"
#include "fwt/fwt_line_passes.hpp"
#include "fwt/fwt_tile.cuh"
#include "fwt/fwt_values.cuh"
#include "fwt/hadamard_factors.hpp"

namespace ironkernels::detail::fwt_gpu {
namespace {

// Row j of H_M applied to z, its signs template constants (forced to compile time: the optimiser
// does not fold the Paley construction's loops for every M): the sum less twice the negative terms,
// or twice the positive ones less the sum, about M/2 adds instead of M.
template <int M, int J, int K>
struct FactorSign {
  static constexpr bool negative = hadamard_factor_entry(M, J, K) < 0;
};
template <int M, int J>
struct FactorRowNegatives {
  static constexpr int value = [] {
    int n = 0;
    for (int c = 0; c < M; ++c) n += hadamard_factor_entry(M, J, c) < 0;
    return n;
  }();
};
template <int M, int J, class C, int... K>
__device__ __forceinline__ C factor_row(const C (&z)[M], C sum, std::integer_sequence<int, K...>) {
  constexpr bool few = 2 * FactorRowNegatives<M, J>::value <= M;
  C part = C(0);
  ((FactorSign<M, J, K>::negative == few ? (void)(part += z[K]) : (void)0), ...);
  return few ? sum - (part + part) : (part + part) - sum;
}
// H_M applied to z, output j handed to emit(j, value) as soon as it is formed (the outputs need no
// registers of their own).
template <int M, class C, class Emit, int... J>
__device__ __forceinline__ void factor_rows(const C (&z)[M], Emit&& emit, std::integer_sequence<int, J...>) {
  C sum = C(0);
#pragma unroll
  for (int j = 0; j < M; ++j) sum += z[j];
  (emit(J, factor_row<M, J>(z, sum, std::make_integer_sequence<int, M>{})), ...);
}

// H_{2^b} on each chunk of a warp tile held with lanes on the tile index's low 5 bits and
// registers on the bits above: shuffles, then registers.
template <int R, class C>
__device__ __forceinline__ void warp_tile_chunks(C (&v)[R], int b, int lane) {
#pragma unroll
  for (int bit = 0; bit < 5; ++bit) {
    if (bit >= b) break;
    const bool high = lane >> bit & 1;
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const C other = __shfl_xor_sync(0xffffffffu, v[i], 1 << bit);
      v[i] = high ? other - v[i] : v[i] + other;
    }
  }
  register_butterflies(v, b - 5);
}

// H_M on z, output j handed to emit(j, value): Paley's H_M (factor_rows), or Sylvester's for a power
// of two (butterflies in place).
template <int M, class C, class Emit>
__device__ __forceinline__ void across_blocks(C (&z)[M], Emit&& emit) {
  if constexpr ((M & (M - 1)) == 0) {
    register_butterflies(z, 31);
#pragma unroll
    for (int j = 0; j < M; ++j) emit(j, z[j]);
  } else {
    factor_rows<M>(z, emit, std::make_integer_sequence<int, M>{});
  }
}

// Column b of line r: the m elements b + j·2^k, j < M, through H_M, scaled, from x into y (in
// place after the blocks' transforms).
template <class T, int M>
__global__ void __launch_bounds__(kLineThreads) fwt_factor_kernel(const LinePassArgs pass) {
  using C = typename Compute<T>::type;
  const KernelArgs& a = pass.lines;
  const std::int64_t items = a.rows << a.log_n;
  const std::int64_t x_block = a.x_axis_stride << a.log_n, y_block = a.y_axis_stride << a.log_n;
  const C sc = scale_value<C>(a);
  for (std::int64_t i = blockIdx.x * std::int64_t(kLineThreads) + threadIdx.x; i < items;
       i += std::int64_t(gridDim.x) * kLineThreads) {
    const std::int64_t r = i >> a.log_n, b = i & ((std::int64_t(1) << a.log_n) - 1);
    std::int64_t xo, yo;
    row_offsets(a, r, xo, yo);
    const T* in = static_cast<const T*>(a.x) + xo + b * a.x_axis_stride;
    T* y = static_cast<T*>(a.y) + yo + b * a.y_axis_stride;
    C z[M];
#pragma unroll
    for (int j = 0; j < M; ++j) {
      C o[1];
      VecIO<T, 1>::load(in + j * x_block, o);
      z[j] = o[0];
    }
    factor_rows<M>(z, [&](int j, C value) {
      const C o[1] = {a.scaled ? value * sc : value};
      VecIO<T, 1>::store(y + j * y_block, o);
    }, std::make_integer_sequence<int, M>{});
  }
}

// H_M ⊗ H_{2^k} in one pass for N = M·2^k on unit strides where the packed kernel below does not
// take the rows (16-bit values, rows not back to back, GPUs before sm_90): line r is M chunks of
// 2^k contiguous elements. A block holds a tile of M warp tiles of 32·2^RB values (2^(5+RB-k)
// lines), in shared memory as the chunks in order. A warp loads a warp tile (lanes on the low 5
// bits of the tile's index, registers on the bits above: a warp's accesses contiguous), transforms
// each chunk there (shuffles, then registers) and parks it. Each thread then takes columns (line,
// e), the M values at e of the line's chunks, through H_M, and stores them (chunks shorter than a
// sector: back through the tile, stored as they were loaded). One read and one write of each
// element; small blocks (M/2 warps), as many per SM as the tile's shared memory allows, so that one
// block's loads overlap another's work.
// log2 of the values a thread holds: 32 registers' worth (16 of 8-byte values).
constexpr int factor_tile_register_bits(int compute_bytes) { return compute_bytes == 8 ? 4 : 5; }
template <class C>
constexpr int factor_tile_register_bits() {
  return factor_tile_register_bits(int(sizeof(C)));
}
template <int M>
constexpr int factor_tile_threads() {
  return 16 * M;
}
template <class C, int M>
constexpr int factor_tile_min_blocks() {
  const int blocks = 65536 / (factor_tile_threads<M>() * 72);
  return sizeof(C) == 8 || blocks < 1 ? 1 : blocks;
}

template <class T, int M>
__global__ void __launch_bounds__(factor_tile_threads<M>(), factor_tile_min_blocks<typename Compute<T>::type, M>())
    fwt_factor_tile_kernel(const LinePassArgs pass) {
  using C = typename Compute<T>::type;
  constexpr int RB = factor_tile_register_bits<C>(), R = 1 << RB, TB = 5 + RB;
  const KernelArgs& a = pass.lines;
  const int b = a.log_n, lines_bits = TB - b;
  extern __shared__ uint4 factor_smem_raw[];
  C* tile = reinterpret_cast<C*>(factor_smem_raw);  // M << TB values, then the lines' offsets
  std::int64_t* line_x = reinterpret_cast<std::int64_t*>(tile + (M << TB));
  std::int64_t* line_y = line_x + (1 << lines_bits);
  const std::int64_t first_line = std::int64_t(blockIdx.x) << lines_bits;
  for (int l = threadIdx.x; l < (1 << lines_bits); l += blockDim.x)
    if (first_line + l < a.rows) row_offsets(a, first_line + l, line_x[l], line_y[l]);
  __syncthreads();
  const std::int64_t chunk = std::int64_t(1) << b;
  const int lane = threadIdx.x & 31, e_mask = (1 << b) - 1;
  // (line, chunk) of tile index q = (l·M + j)·2^b + e; false past the last line.
  auto locate = [&](int q, int& l, int& j) {
    const int c = q >> b;
    l = c / M;
    j = c - l * M;
    return first_line + l < a.rows;
  };
  for (int w = threadIdx.x >> 5; w < M; w += blockDim.x >> 5) {
    C v[R];
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int q = (w << TB) | (i << 5) | lane;
      int l, j;
      C o[1] = {C(0)};
      if (locate(q, l, j)) VecIO<T, 1>::load(static_cast<const T*>(a.x) + line_x[l] + j * chunk + (q & e_mask), o);
      v[i] = o[0];
    }
    warp_tile_chunks(v, b, lane);
#pragma unroll
    for (int i = 0; i < R; ++i) tile[(w << TB) | (i << 5) | lane] = v[i];
  }
  __syncthreads();
  const C sc = scale_value<C>(a);
  // Chunks shorter than a 32-byte sector: a warp's direct stores would be runs of a few bytes.
  const bool staged = (int(sizeof(T)) << b) < 32;
  for (int col = threadIdx.x; col < (1 << TB); col += blockDim.x) {
    const int l = col >> b, e = col & e_mask;
    if (first_line + l >= a.rows) continue;
    C* at = tile + ((l * M) << b) + e;
    C z[M];
#pragma unroll
    for (int j = 0; j < M; ++j) z[j] = at[j << b];
    T* out = static_cast<T*>(a.y) + line_y[l] + e;
    factor_rows<M>(z, [&](int j, C value) {
      const C o[1] = {a.scaled ? value * sc : value};
      if (staged) at[j << b] = o[0];
      else VecIO<T, 1>::store(out + j * chunk, o);
    }, std::make_integer_sequence<int, M>{});
  }
  if (!staged) return;
  __syncthreads();
  for (int w = threadIdx.x >> 5; w < M; w += blockDim.x >> 5)
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int q = (w << TB) | (i << 5) | lane;
      int l, j;
      const C o[1] = {tile[q]};
      if (locate(q, l, j)) VecIO<T, 1>::store(static_cast<T*>(a.y) + line_y[l] + j * chunk + (q & e_mask), o);
    }
}

// H_M ⊗ H_{2^k} in one pass on packed rows (back to back, 16-byte aligned) of 4- and 8-byte
// values, sm_90+: a block's tile is 2^(TB-k) whole lines, one contiguous span, which comes in and
// leaves in one bulk copy each (the TMA engine: no load or store instructions, the whole span in
// flight at once; small tiles, many blocks per SM, so that one block's copies overlap another's
// work). In shared memory each warp transforms the chunks of 2^k in warp tiles of 2^TB values
// (lanes on the low 5 bits: conflict-free), then each thread takes columns through H_M.
template <class T>
constexpr int packed_factor_min_tile_bits() {
  return sizeof(T) == 8 ? 7 : 8;  // tiles of M·1 KB at most 2^TB_min lines
}
// Warps per block: as many as the register file leaves beside the blocks that the tile's shared
// memory lets an SM hold (16 warps of 128 registers), 4 to 8.
template <class T, int M, int TB>
constexpr int packed_factor_threads() {
  const int blocks = (227 * 1024) / (int(sizeof(T)) * (M << TB) + 1024);
  const int warps = blocks > 0 ? 16 / blocks : 8;
  return 32 * (warps < 4 ? 4 : warps > 8 ? 8 : warps);
}

template <class T, int M, int TB>
__global__ void __launch_bounds__(packed_factor_threads<T, M, TB>()) fwt_factor_packed_kernel(const LinePassArgs pass) {
  using C = typename Compute<T>::type;
  static_assert(sizeof(C) == sizeof(T) && (sizeof(T) == 4 || sizeof(T) == 8));
  constexpr int R = 1 << (TB - 5), kVector = 16 / int(sizeof(T)), kThreads = packed_factor_threads<T, M, TB>();
  const KernelArgs& a = pass.lines;
  const int b = a.log_n, lines_bits = TB - b;
  extern __shared__ uint4 packed_smem_raw[];
  C* tile = reinterpret_cast<C*>(packed_smem_raw);  // M << TB values, then the copy's barrier
  unsigned long long& loaded = *reinterpret_cast<unsigned long long*>(tile + (M << TB));
  const std::int64_t first_line = std::int64_t(blockIdx.x) << lines_bits;
  const std::int64_t left = a.rows - first_line;
  const int lines = left < (std::int64_t(1) << lines_bits) ? int(left) : 1 << lines_bits;
  const int count = (lines * M) << b;
  const std::int64_t offset = (first_line * M) << b;
  if (threadIdx.x == 0) {
    const unsigned bytes = unsigned(count) * unsigned(sizeof(T));
    ptx::mbarrier_init(&loaded, 1);
    ptx::fence_mbarrier_init();
    ptx::mbarrier_arrive_expect_tx(&loaded, bytes);
    ptx::cp_async_bulk_global_to_shared(tile, static_cast<const T*>(a.x) + offset, bytes, &loaded);
  }
  __syncthreads();  // the barrier initialised before it is waited on
  ptx::mbarrier_wait_parity(&loaded, 0);
  const int lane = threadIdx.x & 31;
  if (b > 0) {
    for (int w = threadIdx.x >> 5; w < M && (w << TB) < count; w += kThreads / 32) {
      C v[R];
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const int q = (w << TB) | (i << 5) | lane;
        v[i] = q < count ? tile[q] : C(0);
      }
      warp_tile_chunks(v, b, lane);
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const int q = (w << TB) | (i << 5) | lane;
        if (q < count) tile[q] = v[i];
      }
    }
    __syncthreads();
  }
  const C sc = scale_value<C>(a);
  if (b == 0) {
    // A thread per line: its M values contiguous, read and written in 16-byte accesses (a thread
    // per column of scalars would meet 4-way bank conflicts).
    for (int l = threadIdx.x; l < lines; l += kThreads) {
      uint4* at = reinterpret_cast<uint4*>(tile + l * M);
      C z[M], out[M];
#pragma unroll
      for (int v = 0; v < M / kVector; ++v) {
        const uint4 u = at[v];
        memcpy(&z[v * kVector], &u, 16);
      }
      factor_rows<M>(z, [&](int j, C value) { out[j] = a.scaled ? value * sc : value; },
                     std::make_integer_sequence<int, M>{});
#pragma unroll
      for (int v = 0; v < M / kVector; ++v) {
        uint4 u;
        memcpy(&u, &out[v * kVector], 16);
        at[v] = u;
      }
    }
  } else {
    const int e_mask = (1 << b) - 1;
    for (int col = threadIdx.x; col < (lines << b); col += kThreads) {
      C* at = tile + (((col >> b) * M) << b) + (col & e_mask);
      C z[M];
#pragma unroll
      for (int j = 0; j < M; ++j) z[j] = at[j << b];
      factor_rows<M>(z, [&](int j, C value) { at[j << b] = a.scaled ? value * sc : value; },
                     std::make_integer_sequence<int, M>{});
    }
  }
  ptx::fence_proxy_async_shared();  // the tile's writes visible to the bulk copy
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::cp_async_bulk_shared_to_global(static_cast<T*>(a.y) + offset, tile, unsigned(count) * unsigned(sizeof(T)));
    ptx::cp_async_bulk_commit();
    ptx::cp_async_bulk_wait_read();  // the block's shared memory must outlive the copy's reads
  }
}

// (H_M ⊗ H_{2^A} ⊗ I) across the M·2^A blocks of a line after the blocks' own transforms
// (H_{2^k} = H_{2^A} ⊗ H_{2^(k-A)}: the blocks' low k-A bits are done), in place: the outer pass
// of a long m·2^k with H_M folded in, so that it is two passes over memory instead of three (and,
// with M a power of two and A = 5, the outer pass of long rows of 2^k). A block takes a column of
// W values (128 bytes; 256 at A = 1) at one position of all M·2^A blocks of a line, in shared
// memory by 16-byte cp.async (the whole tile in flight at once, no registers held), then H_{2^A}
// per (chunk, column) and H_M per (block bit pattern, column), stored from registers (a warp's
// stores 128 contiguous bytes). Columns of WB bytes: 128 (256 at A = 1, tiles of at least 4M rows
// of 128 bytes) for m·2^k and long rows; narrower for the longer lines of a strided axis.
constexpr int kFactorColumnThreads = 256;
constexpr int default_column_bytes(int a) { return a == 1 ? 256 : 128; }

template <class T, int M, int A, int WB>
__global__ void __launch_bounds__(kFactorColumnThreads) fwt_factor_columns_kernel(const LinePassArgs pass) {
  using C = typename Compute<T>::type;
  static_assert(sizeof(C) == sizeof(T) && A >= 1 && A <= 5 && WB >= 16);
  constexpr int W = WB / int(sizeof(T)), L = M << A, kPerCopy = 16 / int(sizeof(T));
  const KernelArgs& a = pass.lines;
  const std::int64_t block = std::int64_t(1) << a.log_n, segments = block / W;
  const std::int64_t r = blockIdx.x / segments, seg = blockIdx.x - r * segments;
  std::int64_t xo, yo;
  row_offsets(a, r, xo, yo);
  const T* in = static_cast<const T*>(a.x) + xo + seg * W;
  T* out = static_cast<T*>(a.y) + yo + seg * W;
  extern __shared__ uint4 column_smem_raw[];
  C* tile = reinterpret_cast<C*>(column_smem_raw);  // [L][W]
  for (int i = threadIdx.x; i < L * W / kPerCopy; i += kFactorColumnThreads) {
    const int row = i / (W / kPerCopy), col = (i % (W / kPerCopy)) * kPerCopy;
    ptx::cp_async_16(tile + row * W + col, in + row * block + col, true);
  }
  ptx::cp_async_commit();
  ptx::cp_async_wait<0>();
  __syncthreads();
  for (int t = threadIdx.x; t < M * W; t += kFactorColumnThreads) {
    C* at = tile + ((t / W) << A) * W + t % W;
    C v[1 << A];
#pragma unroll
    for (int h = 0; h < (1 << A); ++h) v[h] = at[h * W];
    register_butterflies(v, A);
#pragma unroll
    for (int h = 0; h < (1 << A); ++h) at[h * W] = v[h];
  }
  __syncthreads();
  const C sc = scale_value<C>(a);
  for (int t = threadIdx.x; t < (W << A); t += kFactorColumnThreads) {
    const int h = t / W, col = t % W;
    const C* at = tile + h * W + col;
    C z[M];
#pragma unroll
    for (int j = 0; j < M; ++j) z[j] = at[(j << A) * W];
    T* to = out + h * block + col;
    across_blocks<M>(z, [&](int j, C value) { to[(j << A) * block] = a.scaled ? value * sc : value; });
  }
}

// f(std::integral_constant<int, m>) for the factors with a kernel.
template <class F>
void by_factor(int m, F&& f) {
  switch (m) {
    case 12: return f(std::integral_constant<int, 12>{});
    case 20: return f(std::integral_constant<int, 20>{});
    case 28: return f(std::integral_constant<int, 28>{});
  }
  raise<ValueError>("fwt: internal error: no H_", m);
}

template <class T>
void launch_factor(const LinePassArgs& pass, cudaStream_t stream) {
  by_factor(pass.factor, [&](auto m) {
    fwt_factor_kernel<T, decltype(m)::value><<<line_grid(pass, 1), kLineThreads, 0, stream>>>(pass);
  });
  IK_CUDA_CHECK_LAUNCH("fwt_factor_kernel");
}

template <class T, int M>
void launch_factor_tile_m(const LinePassArgs& pass, cudaStream_t stream) {
  using C = typename Compute<T>::type;
  constexpr int TB = 5 + factor_tile_register_bits<C>();
  auto kernel = fwt_factor_tile_kernel<T, M>;
  const int lines_bits = TB - pass.lines.log_n;
  const int smem = int(sizeof(C)) * (M << TB) + (16 << lines_bits);
  allow_smem(reinterpret_cast<const void*>(kernel), smem, pass.device);
  const std::int64_t blocks = (pass.lines.rows + (std::int64_t(1) << lines_bits) - 1) >> lines_bits;
  kernel<<<grid_size(blocks, pass.lines.rows), factor_tile_threads<M>(), smem, stream>>>(pass);
  IK_CUDA_CHECK_LAUNCH("fwt_factor_tile_kernel");
}

template <class T, int M, int TB>
void launch_factor_packed_tb(const LinePassArgs& pass, cudaStream_t stream) {
  auto kernel = fwt_factor_packed_kernel<T, M, TB>;
  const int smem = int(sizeof(T)) * (M << TB) + 8;
  allow_smem(reinterpret_cast<const void*>(kernel), smem, pass.device);
  const int lines_bits = TB - pass.lines.log_n;
  const std::int64_t blocks = (pass.lines.rows + (std::int64_t(1) << lines_bits) - 1) >> lines_bits;
  kernel<<<grid_size(blocks, pass.lines.rows), packed_factor_threads<T, M, TB>(), smem, stream>>>(pass);
  IK_CUDA_CHECK_LAUNCH("fwt_factor_packed_kernel");
}

// The tile's columns: 2^max(k, TB_min), up to the factor tile's reach.
template <class T, int M>
void launch_factor_packed(const LinePassArgs& pass, cudaStream_t stream) {
  constexpr int lo = packed_factor_min_tile_bits<T>();
  const int k = pass.lines.log_n;
  if (k <= lo) return launch_factor_packed_tb<T, M, lo>(pass, stream);
  if (k == lo + 1) return launch_factor_packed_tb<T, M, lo + 1>(pass, stream);
  launch_factor_packed_tb<T, M, lo + 2>(pass, stream);
}

template <class T, int M, int A, int WB = default_column_bytes(A)>
void launch_factor_columns_a(const LinePassArgs& pass, cudaStream_t stream) {
  auto kernel = fwt_factor_columns_kernel<T, M, A, WB>;
  constexpr int W = WB / int(sizeof(T));
  const int smem = WB * (M << A);
  allow_smem(reinterpret_cast<const void*>(kernel), smem, pass.device);
  const std::int64_t blocks = pass.lines.rows * ((std::int64_t(1) << pass.lines.log_n) / W);
  kernel<<<grid_size(blocks, pass.lines.rows), kFactorColumnThreads, smem, stream>>>(pass);
  IK_CUDA_CHECK_LAUNCH("fwt_factor_columns_kernel");
}

template <class T>
void launch_factor_columns(const LinePassArgs& pass, int outer_bits, cudaStream_t stream) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    by_factor(pass.factor, [&](auto m) {
      constexpr int M = decltype(m)::value;
      switch (outer_bits) {
        case 1: return launch_factor_columns_a<T, M, 1>(pass, stream);
        case 2: return launch_factor_columns_a<T, M, 2>(pass, stream);
        case 3: return launch_factor_columns_a<T, M, 3>(pass, stream);
        case 4: return launch_factor_columns_a<T, M, 4>(pass, stream);
        case 5: return launch_factor_columns_a<T, M, 5>(pass, stream);
      }
      raise<ValueError>("fwt: internal error: no factor column pass of 2^", outer_bits);
    });
  } else {
    raise<ValueError>("fwt: internal error: no factor column pass for ", int(sizeof(T)), "-byte values");
  }
}

// Rows back to back and 16-byte aligned, 4- or 8-byte values, a GPU with bulk copies.
bool packed_factor_rows(const LinePassArgs& pass, int value_bytes) {
  const KernelArgs& a = pass.lines;
  const std::int64_t n = std::int64_t(pass.factor) << a.log_n;
  const bool packed = a.batch_ndim == 0 || (a.batch_ndim == 1 && a.xs[0] == n && a.ys[0] == n);
  return (value_bytes == 4 || value_bytes == 8) && packed && aligned16(a.x) && aligned16(a.y) &&
         hopper_or_newer(pass.device);
}

template <class T>
void launch_factor_tile(const LinePassArgs& pass, cudaStream_t stream) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    if (packed_factor_rows(pass, int(sizeof(T))))
      return by_factor(pass.factor, [&](auto m) { launch_factor_packed<T, decltype(m)::value>(pass, stream); });
  }
  by_factor(pass.factor, [&](auto m) { launch_factor_tile_m<T, decltype(m)::value>(pass, stream); });
}

template <class T>
struct FactorTileLaunch {
  static void run(const LinePassArgs& a, cudaStream_t s) { launch_factor_tile<T>(a, s); }
};
template <class T>
struct FactorLaunch {
  static void run(const LinePassArgs& a, cudaStream_t s) { launch_factor<T>(a, s); }
};

template <class T>
struct FactorColumnsLaunch {
  static void run(const LinePassArgs& a, cudaStream_t s) {
    if (a.factor > 1) return launch_factor_columns<T>(a, a.outer_bits, s);
    // H_{2^(outer_bits)} = H_{2^(outer_bits-5)} ⊗ H_32 across the blocks: the outer pass of long
    // rows, a strided axis. Tiles of at most 128 KB: 2^11 lines in 64-byte columns, 2^12 in 32-byte
    // ones (column_pass_bytes; 4-byte values only: M = 128 values per thread in registers).
    if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
      switch (a.outer_bits) {
        case 6: return launch_factor_columns_a<T, 2, 5>(a, s);
        case 7: return launch_factor_columns_a<T, 4, 5>(a, s);
        case 8: return launch_factor_columns_a<T, 8, 5>(a, s);
        case 9: return launch_factor_columns_a<T, 16, 5>(a, s);
        case 10: return launch_factor_columns_a<T, 32, 5>(a, s);
        case 11: return launch_factor_columns_a<T, 64, 5, 64>(a, s);
        case 12:
          if constexpr (sizeof(T) == 4) return launch_factor_columns_a<T, 128, 5, 32>(a, s);
          break;
      }
    }
    raise<ValueError>("fwt: internal error: no column pass of 2^", a.outer_bits);
  }
};

}  // namespace

void launch_factor_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream) { by_dtype<FactorLaunch>(dtype, a, stream); }
void launch_factor_tile_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream) {
  by_dtype<FactorTileLaunch>(dtype, a, stream);
}
void launch_factor_columns_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream) {
  by_dtype<FactorColumnsLaunch>(dtype, a, stream);
}
bool factor_columns_take(DType dtype, const KernelArgs& lines, int column_bytes) {
  const int bytes = int(dtype_size(dtype));
  if (bytes != 4 && bytes != 8) return false;
  if (!aligned16(lines.x) || !aligned16(lines.y) || (std::int64_t(bytes) << lines.log_n) < column_bytes) return false;
  for (int d = 0; d < lines.batch_ndim; ++d)
    if ((lines.xs[d] * bytes) % 16 || (lines.ys[d] * bytes) % 16) return false;
  return true;
}
int column_pass_bytes(int outer_bits) { return outer_bits <= 10 ? 128 : outer_bits == 11 ? 64 : 32; }
int factor_tile_max_bits(DType dtype) { return 5 + factor_tile_register_bits(dtype_size(dtype) == 8 ? 8 : 4); }

}  // namespace ironkernels::detail::fwt_gpu
